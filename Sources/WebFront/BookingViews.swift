import Foundation
import Lending
import RoomBridgeAPI

/// The bookings on the pages, as pure functions of what the daemon answered: a device's week
/// strip, a user's upcoming bookings and the booking form. People read and type times in the
/// kiosk's time zone (the ``Localizer``'s); the wire carries UTC.
enum BookingViews {
    /// One column of the week strip: a day in the kiosk's time zone, from its first instant up to
    /// the next day's.
    struct Day: Sendable, Equatable {
        var day: KioskDay
        var start: Date
        var end: Date
    }

    /// A booking as the pages show it (from ``Booking``; the views need nothing else).
    struct Slot: Sendable, Equatable {
        var id: Int64
        var deviceId: String
        var model: String
        var userId: String
        var userName: String
        var startsAt: Date
        var endsAt: Date
        /// `booked`, `fulfilled` or `cancelled` (``Booking/State``).
        var state: String

        init(id: Int64, deviceId: String, model: String, userId: String, userName: String, startsAt: Date, endsAt: Date,
             state: String = "booked") {
            self.id = id
            self.deviceId = deviceId
            self.model = model
            self.userId = userId
            self.userName = userName
            self.startsAt = startsAt
            self.endsAt = endsAt
            self.state = state
        }

        init(_ b: Booking) {
            self.init(id: b.id, deviceId: b.deviceId, model: b.model, userId: b.userId, userName: b.userName,
                      startsAt: b.startsAt, endsAt: b.endsAt, state: b.state.rawValue)
        }
    }

    static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The day `date` falls on in `zone`.
    static func day(of date: Date, _ zone: TimeZone) -> KioskDay {
        let c = calendar(zone).dateComponents([.year, .month, .day], from: date)
        return KioskDay(year: c.year ?? 1970, month: c.month ?? 1, day: c.day ?? 1)
    }

    /// `YYYY-MM-DD`, as the `week` parameter and `KioskDay.init?(_:)` read it.
    static func text(_ day: KioskDay) -> String {
        String(format: "%04d-%02d-%02d", day.year, day.month, day.day)
    }

    /// `count` consecutive days from `first` in `zone` (a day of a daylight saving change is 23
    /// or 25 hours long); nil when `first` is no day of the calendar.
    static func days(from first: KioskDay, count: Int = 7, _ zone: TimeZone) -> [Day]? {
        let cal = calendar(zone)
        guard let start = first.start(in: zone) else { return nil }
        var starts: [Date] = []
        for offset in 0...count {
            guard let next = cal.date(byAdding: .day, value: offset, to: start) else { return nil }
            starts.append(cal.startOfDay(for: next))
        }
        return (0..<count).map { Day(day: day(of: starts[$0], zone), start: starts[$0], end: starts[$0 + 1]) }
    }

    /// The day `offset` days after `day` (before, when negative).
    static func shift(_ day: KioskDay, by offset: Int, _ zone: TimeZone) -> KioskDay? {
        guard let start = day.start(in: zone), let moved = calendar(zone).date(byAdding: .day, value: offset, to: start) else { return nil }
        return Self.day(of: moved, zone)
    }

    /// `HH:mm` in `zone`; the end of a day (`date == dayEnd`) as `24:00`.
    static func clock(_ date: Date, _ zone: TimeZone, dayEnd: Date? = nil) -> String {
        if let dayEnd, date == dayEnd { return "24:00" }
        let c = calendar(zone).dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
    }

    /// A local date and time as a `datetime-local` field sends it (`YYYY-MM-DDTHH:mm`, seconds
    /// allowed; a space instead of `T` too), read in `zone`; nil when it is no such time, e.g.
    /// 2026-02-30 or a wall time skipped by a daylight saving change.
    static func localTime(_ text: String, _ zone: TimeZone) -> Date? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(whereSeparator: { $0 == "T" || $0 == " " })
        guard parts.count == 2, let day = KioskDay(String(parts[0])) else { return nil }
        let hm = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(hm.count), hm.allSatisfy({ $0.count == 2 }),
              let hour = Int(hm[0]), let minute = Int(hm[1]), let second = hm.count == 3 ? Int(hm[2]) : 0,
              (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) else { return nil }
        let components = DateComponents(year: day.year, month: day.month, day: day.day, hour: hour, minute: minute, second: second)
        let cal = calendar(zone)
        guard let date = cal.date(from: components),
              cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date) == components else { return nil }
        return date
    }

    /// A time as a `datetime-local` field's value in `zone` (`YYYY-MM-DDTHH:mm`).
    static func localField(_ date: Date, _ zone: TimeZone) -> String {
        text(day(of: date, zone)) + "T" + clock(date, zone)
    }

    // MARK: Device page

    /// The week strip: one column per day of `days`, each listing the bookings that overlap it,
    /// with their times within that day (`HH:mm`–`HH:mm`, a booking running past midnight ends the
    /// day at 24:00 and starts the next at 00:00) and the booker's name.
    static func weekStrip(_ bookings: [Slot], days: [Day], _ l: Localizer) -> String {
        var out = "<table id=\"week\" class=\"week\"><thead><tr>"
        for d in days { out += "<th data-day=\"\(text(d.day))\">\(HTML.escape(l.day(d.start)))</th>" }
        out += "</tr></thead><tbody><tr>"
        for d in days {
            let here = bookings.filter { $0.startsAt < d.end && $0.endsAt > d.start }.sorted { $0.startsAt < $1.startsAt }
            out += "<td data-day=\"\(text(d.day))\">"
            if here.isEmpty {
                out += "<span class=\"empty\">\(HTML.escape(l.t("week.free")))</span>"
            } else {
                out += "<ul>" + here.map { b in
                    let from = clock(max(b.startsAt, d.start), l.timeZone)
                    let until = clock(min(b.endsAt, d.end), l.timeZone, dayEnd: d.end)
                    let state = b.state == "booked" ? "" : " (" + HTML.escape(l.t("booking.state.\(b.state)")) + ")"
                    return "<li class=\"booking\" data-booking=\"\(b.id)\"><span class=\"nowrap\">\(from)–\(until)</span> "
                        + "<a href=\"/users/\(HTML.urlComponent(b.userId))\">\(HTML.escape(b.userName))</a>\(state)</li>"
                }.joined() + "</ul>"
            }
            out += "</td>"
        }
        return out + "</tr></tbody></table>"
    }

    /// Links to the week before and after `first` (and back to this week when elsewhere), on `path`.
    static func weekLinks(_ first: KioskDay, today: KioskDay, path: String, _ l: Localizer) -> String {
        func link(_ id: String, _ day: KioskDay?, _ key: String) -> String {
            guard let day else { return "" }
            return "<a id=\"\(id)\" href=\"\(HTML.escape(path))?week=\(text(day))\">\(HTML.escape(l.t(key)))</a>"
        }
        var links = [link("week-previous", shift(first, by: -7, l.timeZone), "week.previous")]
        if first != today { links.append(link("week-this", today, "week.this")) }
        links.append(link("week-next", shift(first, by: 7, l.timeZone), "week.next"))
        return "<p class=\"week-links\">" + links.joined(separator: " ") + "</p>"
    }

    // MARK: User page

    /// A user's bookings as a table; for a signed-in admin (`viewer`), the ones still booked get a
    /// Cancel button (a POST with the session's CSRF token).
    static func upcoming(_ bookings: [Slot], userId: String, _ l: Localizer, viewer: Viewer) -> String {
        let admin = viewer.user != nil
        var headers = ["device.id", "device.model", "bookings.from", "bookings.until", "bookings.state"].map { l.t($0) }
        if admin { headers.append("") }
        return HTML.table(headers, bookings.map { b in
            var cells = [
                "<a class=\"nowrap\" href=\"/devices/\(HTML.urlComponent(b.deviceId))\">\(HTML.escape(b.deviceId))</a>",
                HTML.escape(b.model), HTML.escape(l.dateTime(b.startsAt)), HTML.escape(l.dateTime(b.endsAt)),
                HTML.escape(l.t("booking.state.\(b.state)")),
            ]
            if admin {
                cells.append(b.state != "booked" ? "" :
                    "<form method=\"post\" action=\"/users/\(HTML.urlComponent(userId))/bookings/\(b.id)/cancel\" class=\"inline\">"
                    + viewer.csrfField
                    + "<button type=\"submit\" id=\"cancel-booking-\(b.id)\">\(HTML.escape(l.t("booking.cancel")))</button></form>")
            }
            return (cells: cells, attributes: " data-booking=\"\(b.id)\"")
        }, id: "bookings")
    }

    // MARK: Booking form

    /// The booking form, filled from `values` (the query of the link that led here, or the
    /// refused form), with `error` above it. `users`: suggestions for the user field.
    static func form(_ l: Localizer, viewer: Viewer, users: [(id: String, name: String)], values: Query, error: String?) -> String {
        func t(_ key: String) -> String { HTML.escape(l.t(key)) }
        func value(_ key: String) -> String { HTML.escape(values.raw(key) ?? "") }
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        body += "<form method=\"post\" action=\"/bookings/new\" class=\"form\" id=\"booking-form\">" + viewer.csrfField
            + "<label>\(t("booking.device")) <input name=\"device\" id=\"booking-device\" value=\"\(value("device"))\" required></label>"
            + (viewer.booker.map {
                "<label>\(t("booking.user")) <input name=\"user\" id=\"booking-user\" value=\"\(HTML.escape($0.userId))\" readonly></label>"
            } ?? "<label>\(t("booking.user")) <input name=\"user\" id=\"booking-user\" list=\"booking-users\" value=\"\(value("user"))\" required></label>")
            + "<datalist id=\"booking-users\">"
            + users.map { "<option value=\"\(HTML.escape($0.id))\">\(HTML.escape($0.name))</option>" }.joined() + "</datalist>"
            + "<label>\(t("booking.starts")) <input type=\"datetime-local\" name=\"starts\" id=\"booking-starts\" value=\"\(value("starts"))\" required></label>"
            + "<label>\(t("booking.ends")) <input type=\"datetime-local\" name=\"ends\" id=\"booking-ends\" value=\"\(value("ends"))\" required></label>"
            + "<p class=\"empty\" id=\"booking-zone\">\(HTML.escape(l.t("booking.zoneHint", ["zone": l.timeZone.identifier])))</p>"
            + "<button type=\"submit\" id=\"book\">\(t("booking.book"))</button></form>"
        return HTML.page(l, title: l.t("booking.title"), active: "devices", viewer: viewer, body: body)
    }
}
