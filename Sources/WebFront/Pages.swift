import Foundation
import Lending
import RoomBridgeAPI
import Varlink

/// The read-only pages. Each reads what it shows from roombridged through `DaemonLink`, asking
/// for the range it shows (filters and dates go to the daemon; nothing is fetched whole and
/// filtered here), and renders it in the request's language.
struct Pages: Sendable {
    let link: DaemonLink

    static let pageSize = 100

    // MARK: Devices

    func devices(_ q: Query, _ l: Localizer, viewer: Viewer) async throws -> String {
        var status: DeviceStatus?
        if let text = q["status"] {
            // As the daemon answers a value outside the IDL's enum.
            guard let value = DeviceStatus(rawValue: text) else { throw VarlinkError.invalidParameter("status") }
            status = value
        }
        let query = InventoryAPI.ListDevices.Parameters(
            groupId: q["group"], status: status, isLent: q.bool("lent"),
            isNfcRegistered: q.bool("nfc"), text: q["text"], limit: Self.pageSize, cursor: q["cursor"])
        async let groups = link.read(InventoryAPI.ListGroups.self, .init())
        let list = try await link.read(InventoryAPI.ListDevices.self, query)
        let now = Date()
        let groupList = try await groups.groups
        let groupNames = Dictionary(groupList.map { ($0.id, $0.name) }) { a, _ in a }
        let yesNo = [("", l.t("common.all")), ("true", l.t("common.yes")), ("false", l.t("common.no"))]
        let form = """
            <form method="get" action="/devices" class="filters">
            <input type="search" name="text" id="text" value="\(HTML.escape(q["text"] ?? ""))" placeholder="\(HTML.escape(l.t("devices.search")))">
            <label>\(HTML.escape(l.t("devices.group"))) \(HTML.select("group", [("", l.t("common.all"))] + groupList.map { ($0.id, $0.name) }, selected: q["group"]))</label>
            <label>\(HTML.escape(l.t("devices.status"))) \(HTML.select("status", [("", l.t("common.all"))] + ["normal", "broken", "disposed"].map { ($0, l.t("status.\($0)")) }, selected: q["status"]))</label>
            <label>\(HTML.escape(l.t("devices.lent"))) \(HTML.select("lent", yesNo, selected: q["lent"]))</label>
            <label>\(HTML.escape(l.t("devices.nfc"))) \(HTML.select("nfc", yesNo, selected: q["nfc"]))</label>
            <button type="submit">\(HTML.escape(l.t("common.show")))</button>
            </form>
            """
        let rows = list.devices.map { record -> (cells: [String], attributes: String) in
            let d = record.device
            let lent = record.activeRental.map { l.t("device.lentTo", ["user": $0.userName, "since": l.dateTime($0.rentedAt)]) } ?? l.t("device.available")
            return (cells: [
                "<a href=\"/devices/\(HTML.urlComponent(d.id))\">\(HTML.escape(d.id))</a>",
                HTML.escape(groupNames[d.groupId] ?? d.groupId), HTML.escape(d.model), HTML.escape(d.serialNumber),
                HTML.escape(l.t("status.\(d.status.rawValue)")), HTML.escape(lent),
                HTML.escape(l.t(d.isNFCRegistered ? "common.yes" : "common.no")),
            ], attributes: record.activeRental?.isOverdue(at: now) == true ? " class=\"overdue\"" : "")
        }
        let headers = ["device.id", "devices.group", "device.model", "device.serial", "devices.status", "devices.lent", "devices.nfc"].map { l.t($0) }
        let add = viewer.user == nil ? "" : "<p><a id=\"add-device\" href=\"/devices/new\">\(HTML.escape(l.t("device.add")))</a></p>"
        let body = add + form + (rows.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("devices.empty")))</p>" : HTML.table(headers, rows, id: "devices"))
            + nextLink(list.nextCursor, q, path: "/devices", l)
        return HTML.page(l, title: l.t("devices.title"), active: "devices", viewer: viewer, body: body)
    }

    /// One device: its facts, its rental, its bookings on a week strip (`week`: the first day,
    /// YYYY-MM-DD in the kiosk's time zone; today by default), its history, change log and tags.
    func device(_ id: String, _ q: Query, _ l: Localizer, viewer: Viewer) async throws -> String {
        let now = Date()
        let today = BookingViews.day(of: now, l.timeZone)
        let first = try q["week"].map { text throws(PageError) in
            guard let day = KioskDay(text), day.start(in: l.timeZone) != nil else { throw .badDate(text) }
            return day
        } ?? today
        guard let days = BookingViews.days(from: first, l.timeZone), let weekStart = days.first?.start, let weekEnd = days.last?.end else {
            throw PageError.badDate(q["week"] ?? BookingViews.text(first))
        }
        let detail = try await link.read(InventoryAPI.GetDevice.self, .init(id: id))
        async let log = link.read(InventoryAPI.DeviceLog.self, .init(id: id, limit: Self.pageSize))
        async let week = bookings(.init(deviceId: id, from: weekStart, until: weekEnd))
        let history = try await link.read(LendingAPI.History.self, .init(.init(deviceId: id), limit: Self.pageSize))
        let d = detail.device.device
        let facts: [(String, String)] = [
            ("device.model", d.model), ("device.serial", d.serialNumber), ("device.os", d.osVersion),
            ("devices.status", l.t("status.\(d.status.rawValue)")), ("device.connector", d.connectorType),
            ("device.registered", l.dateTime(d.registeredAt)), ("device.note", d.note ?? l.t("common.none")),
        ]
        var body = viewer.user == nil ? "" : "<p><a id=\"edit-device\" href=\"/devices/\(HTML.urlComponent(d.id))/edit\">\(HTML.escape(l.t("device.edit")))</a></p>"
            + "<form method=\"post\" action=\"/devices/\(HTML.urlComponent(d.id))/delete\">\(viewer.csrfField)"
            + "<button id=\"delete-device\">\(HTML.escape(l.t("device.delete")))</button></form>"
        body += "<dl class=\"facts\">" + facts.map { "<dt>\(HTML.escape(l.t($0.0)))</dt><dd>\(HTML.escape($0.1))</dd>" }.joined() + "</dl>"
        body += "<h2>\(HTML.escape(l.t("device.activeRental")))</h2>"
        if let r = detail.device.activeRental {
            var text = l.t("device.lentTo", ["user": "\(r.userName) (\(r.userId))", "since": l.dateTime(r.rentedAt)])
            if let due = r.dueAt { text += " — " + l.t("device.due", ["due": l.dateTime(due)]) }
            body += "<p id=\"active-rental\"\(r.isOverdue(at: now) ? " class=\"overdue\"" : "")>\(HTML.escape(text))</p>"
        } else {
            body += "<p id=\"active-rental\">\(HTML.escape(l.t("device.available")))</p>"
        }
        body += "<h2 id=\"bookings-title\">\(HTML.escape(l.t("device.bookings")))</h2>"
        if viewer.signedIn != nil {
            body += "<p><a id=\"book-device\" href=\"/bookings/new?device=\(HTML.urlComponent(d.id))\">\(HTML.escape(l.t("booking.add")))</a></p>"
        }
        body += BookingViews.weekLinks(first, today: today, path: "/devices/\(HTML.urlComponent(d.id))", l)
        body += BookingViews.weekStrip(try await week.map(BookingViews.Slot.init), days: days, l)
        body += "<h2>\(HTML.escape(l.t("device.history")))</h2>"
        body += history.rentals.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("device.noHistory")))</p>" : rentalTable(history.rentals, l, id: "history")
        body += "<h2>\(HTML.escape(l.t("device.log")))</h2>"
        let entries = try await log.entries
        body += entries.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("device.noLog")))</p>" : HTML.table(
            ["log.when", "log.operation", "log.field", "log.change"].map { l.t($0) },
            entries.map { e in (cells: [
                HTML.escape(l.dateTime(e.at)), HTML.escape(l.t("op.\(e.operation.rawValue)")), HTML.escape(Self.fieldName(e.field, l)),
                HTML.escape("\(Self.fieldValue(e.field, e.oldValue, l)) → \(Self.fieldValue(e.field, e.newValue, l))"),
            ], attributes: "") }, id: "log")
        body += "<h2>\(HTML.escape(l.t("device.tags")))</h2>"
        body += detail.tags.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("device.noTags")))</p>" : HTML.table(
            ["tag.uid", "tag.boundAt"].map { l.t($0) },
            detail.tags.map { (cells: ["<code>\(HTML.escape($0.uid.hex))</code>", HTML.escape(l.dateTime($0.boundAt))], attributes: "") }, id: "tags")
        return HTML.page(l, title: l.t("device.title", ["id": d.id]), active: "devices", viewer: viewer, body: body)
    }

    /// A change log field's name in the reader's language (unknown fields as logged).
    static func fieldName(_ field: String, _ l: Localizer) -> String {
        l.has("field.\(field)") ? l.t("field.\(field)") : field
    }

    /// A change log value in the reader's language: statuses, yes/no, times; others as logged.
    static func fieldValue(_ field: String, _ value: String?, _ l: Localizer) -> String {
        guard let value else { return l.t("common.none") }
        switch field {
        case "status" where l.has("status.\(value)"): return l.t("status.\(value)")
        case "isNFCRegistered": return l.t(value == "true" ? "common.yes" : "common.no")
        case "registeredAt": return l.dateTime(value)
        default: return value
        }
    }

    // MARK: Rentals and history

    func rentals(_ l: Localizer, viewer: Viewer, error: String? = nil) async throws -> String {
        async let overdue = link.read(LendingAPI.ListOverdue.self, .init(limit: Self.pageSize))
        let active = try await link.read(LendingAPI.ListActive.self, .init(limit: 1000))
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        if viewer.user != nil { body += lendForm(l, viewer: viewer) }
        body += "<h2>\(HTML.escape(l.t("rentals.overdue")))</h2>"
        let late = try await overdue.rentals
        body += late.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("rentals.noOverdue")))</p>" : rentalTable(late, l, id: "overdue", returning: viewer)
        body += "<h2>\(HTML.escape(l.t("rentals.active")))</h2>"
        body += active.rentals.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("rentals.empty")))</p>"
            : rentalTable(active.rentals, l, id: "active", returning: viewer)
        return HTML.page(l, title: l.t("rentals.title"), active: "rentals", viewer: viewer, body: body)
    }

    /// Lend by ID: device, user and an optional due day (the daemon's loan period otherwise).
    private func lendForm(_ l: Localizer, viewer: Viewer) -> String {
        func t(_ key: String) -> String { HTML.escape(l.t(key)) }
        return "<form method=\"post\" action=\"/rentals/lend\" class=\"filters\" id=\"lend-form\">" + viewer.csrfField
            + "<label>\(t("history.device")) <input name=\"device\" id=\"lend-device\" required></label>"
            + "<label>\(t("history.user")) <input name=\"user\" id=\"lend-user\" required></label>"
            + "<label>\(t("rentals.dueDay")) <input type=\"date\" name=\"due\" id=\"lend-due\"></label>"
            + "<button type=\"submit\" id=\"lend\">\(t("rentals.lend"))</button></form>"
    }

    /// The history query from the page's form: days in the kiosk's time zone.
    func historyRange(_ q: Query, _ l: Localizer) throws(PageError) -> LendingAPI.HistoryRange {
        func day(_ key: String) throws(PageError) -> Date? {
            guard let value = q[key] else { return nil }
            guard let start = KioskDay(value)?.start(in: l.timeZone) else { throw .badDate(value) }
            return start
        }
        return LendingAPI.HistoryRange(deviceId: q["device"], userId: q["user"], since: try day("since"), until: try day("until"))
    }

    func history(_ q: Query, _ l: Localizer, viewer: Viewer) async throws -> String {
        let list = try await link.read(LendingAPI.History.self, .init(try historyRange(q, l), limit: Self.pageSize, cursor: q["cursor"]))
        let field = { (name: String, key: String, type: String) in
            "<label>\(HTML.escape(l.t(key))) <input type=\"\(type)\" name=\"\(name)\" id=\"\(name)\" value=\"\(HTML.escape(q[name] ?? ""))\"></label>"
        }
        let bom = Self.csvByteOrderMark(q, l)
        let csvQuery = (["device", "user", "since", "until"].compactMap { k in q[k].map { "\(k)=\(HTML.urlComponent($0))" } }
            + ["bom=\(bom ? "1" : "0")"]).joined(separator: "&")
        var body = "<form method=\"get\" action=\"/history\" class=\"filters\">"
            + field("device", "history.device", "text") + field("user", "history.user", "text")
            + field("since", "history.since", "date") + field("until", "history.until", "date")
            + "<label>\(HTML.escape(l.t("history.bom"))) "
            + HTML.select("bom", [("1", l.t("common.yes")), ("0", l.t("common.no"))], selected: bom ? "1" : "0") + "</label>"
            + "<button type=\"submit\">\(HTML.escape(l.t("common.show")))</button>"
            + " <a id=\"csv\" href=\"/history.csv?\(HTML.escape(csvQuery))\">\(HTML.escape(l.t("history.csv")))</a></form>"
        body += list.rentals.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("history.empty")))</p>" : rentalTable(list.rentals, l, id: "history")
        body += nextLink(list.nextCursor, q, path: "/history", l)
        return HTML.page(l, title: l.t("history.title"), active: "history", viewer: viewer, body: body)
    }

    /// Whether the CSV starts with a byte order mark, which Excel needs to read UTF-8 (names such
    /// as "ギャラクシー S24" are garbled without it): `bom=1|0`, by default on for a Japanese page.
    static func csvByteOrderMark(_ q: Query, _ l: Localizer) -> Bool {
        q["bom"].map { $0 == "1" } ?? (l.language == .ja)
    }

    /// The history as CSV, exactly as `roombridgectl history --format csv` writes it (page by
    /// page from ExportHistory, concatenated), with dates in the kiosk's time zone.
    func historyCSV(_ q: Query, _ l: Localizer) async throws -> String {
        var query = LendingAPI.ExportHistory.Parameters(try historyRange(q, l), format: .csv, timeZone: l.timeZone.identifier, limit: 1000)
        var text = ""
        while true {
            let page = try await link.read(LendingAPI.ExportHistory.self, query)
            text += page.text
            guard let next = page.nextCursor else { return (Self.csvByteOrderMark(q, l) ? "\u{FEFF}" : "") + text }
            query.page.cursor = next
        }
    }

    // MARK: Users

    func users(_ q: Query, _ l: Localizer, viewer: Viewer, error: String? = nil) async throws -> String {
        let list = try await link.read(InventoryAPI.ListUsers.self, .init(nameContains: q["name"], limit: Self.pageSize, cursor: q["cursor"]))
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        if viewer.user != nil {
            body += "<form method=\"post\" action=\"/users/new\" class=\"filters\" id=\"add-user-form\">" + viewer.csrfField
                + "<label>\(HTML.escape(l.t("device.id"))) <input name=\"id\" id=\"new-user-id\" required></label>"
                + "<label>\(HTML.escape(l.t("users.name"))) <input name=\"name\" id=\"new-user-name\" required></label>"
                + "<button type=\"submit\" id=\"add-user\">\(HTML.escape(l.t("users.add")))</button></form>"
                + UserImport.form(l, viewer: viewer)
        }
        body += "<form method=\"get\" action=\"/users\" class=\"filters\"><label>\(HTML.escape(l.t("users.search"))) "
            + "<input type=\"search\" name=\"name\" id=\"name\" value=\"\(HTML.escape(q["name"] ?? ""))\"></label>"
            + "<button type=\"submit\">\(HTML.escape(l.t("common.show")))</button></form>"
        body += list.users.isEmpty ? "<p class=\"empty\">\(HTML.escape(l.t("users.empty")))</p>" : HTML.table(
            ["device.id", "users.name", "device.registered"].map { l.t($0) },
            list.users.map { (cells: ["<a href=\"/users/\(HTML.urlComponent($0.id))\">\(HTML.escape($0.id))</a>", HTML.escape($0.name),
                                      HTML.escape(l.dateTime($0.registeredAt))], attributes: "") },
            id: "users")
        body += nextLink(list.nextCursor, q, path: "/users", l)
        return HTML.page(l, title: l.t("users.title"), active: "users", viewer: viewer, body: body)
    }

    /// One user: their badges, what they have now, and for an admin the badge just tapped,
    /// ready to bind (the reader's last tap when it was not a device's tag).
    func user(_ id: String, _ l: Localizer, viewer: Viewer, error: String? = nil) async throws -> String {
        async let active = link.read(LendingAPI.ListActive.self, .init(userId: id, limit: Self.pageSize))
        async let booked = link.read(LendingAPI.ListBookings.self, .init(userId: id, from: Date(), limit: Self.pageSize))
        let detail = try await link.read(InventoryAPI.GetUser.self, .init(id: id))
        func t(_ key: String) -> String { HTML.escape(l.t(key)) }
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        body += "<dl class=\"facts\"><dt>\(t("users.name"))</dt><dd id=\"user-name\">\(HTML.escape(detail.user.name))</dd>"
            + "<dt>\(t("device.registered"))</dt><dd>\(HTML.escape(l.dateTime(detail.user.registeredAt)))</dd></dl>"
        body += "<h2>\(t("users.badges"))</h2>"
        body += detail.badges.isEmpty ? "<p class=\"empty\" id=\"no-badges\">\(t("users.noBadges"))</p>" : HTML.table(
            ["tag.uid", "users.badgeKind"].map { l.t($0) },
            detail.badges.map { (cells: ["<code>\(HTML.escape($0.identifier))</code>", HTML.escape(l.t("badge.\($0.kind.rawValue)"))], attributes: "") },
            id: "badges")
        if viewer.user != nil {
            let state = try await link.read(StateAPI.GetState.self, .init()).state
            body += "<h3>\(t("users.bindTitle"))</h3>"
            // Badge identifiers are stored canonical, as a TagUID is.
            if let tap = state.lastTap, detail.badges.contains(where: { $0.identifier == tap.uid.hex }) {
                // Bound already (just now, say): nothing to offer.
                body += "<p class=\"empty\" id=\"last-tap\">\(HTML.escape(l.t("users.lastTapBound", ["uid": tap.uid.hex, "user": detail.user.name])))</p>"
            } else if let tap = state.lastTap, tap.device == nil {
                let kind = tap.tagType == "FeliCa" ? "felica" : "iso14443a"
                body += "<form method=\"post\" action=\"/users/\(HTML.urlComponent(id))/badge\" class=\"filters\" id=\"bind-form\">" + viewer.csrfField
                    + "<input type=\"hidden\" name=\"uid\" value=\"\(HTML.escape(tap.uid.hex))\"><input type=\"hidden\" name=\"kind\" value=\"\(kind)\">"
                    + "<span id=\"last-tap\">\(HTML.escape(l.t("users.lastTap", ["uid": tap.uid.hex, "type": tap.tagType, "at": l.dateTime(tap.at)])))</span> "
                    + "<button type=\"submit\" id=\"bind-badge\">\(HTML.escape(l.t("users.bind", ["user": detail.user.name])))</button></form>"
            } else {
                body += "<p class=\"empty\" id=\"last-tap\">\(t("users.tapFirst"))</p>"
            }
        }
        body += "<h2>\(t("users.has"))</h2>"
        let rentals = try await active.rentals
        body += rentals.isEmpty ? "<p class=\"empty\">\(t("rentals.empty"))</p>" : rentalTable(rentals, l, id: "active", returning: viewer)
        body += "<h2>\(t("users.bookings"))</h2>"
        if viewer.user != nil {
            body += "<p><a id=\"book-for-user\" href=\"/bookings/new?user=\(HTML.urlComponent(id))\">"
                + HTML.escape(l.t("booking.addFor", ["user": detail.user.name])) + "</a></p>"
        }
        let upcoming = try await booked
        body += upcoming.bookings.isEmpty ? "<p class=\"empty\" id=\"no-bookings\">\(t("users.noBookings"))</p>"
            : BookingViews.upcoming(upcoming.bookings.map(BookingViews.Slot.init), userId: id, l, viewer: viewer)
        if upcoming.nextCursor != nil {
            body += "<p class=\"empty\">\(HTML.escape(l.t("users.moreBookings", ["count": l.number(Self.pageSize)])))</p>"
        }
        return HTML.page(l, title: l.t("users.titleOne", ["id": detail.user.id]), active: "users", viewer: viewer, body: body)
    }

    /// The bookings that overlap the query's range, page after page (a week holds few).
    func bookings(_ query: LendingAPI.ListBookings.Parameters) async throws -> [Booking] {
        var query = query
        query.limit = Self.pageSize
        var all: [Booking] = []
        while true {
            let page = try await link.read(LendingAPI.ListBookings.self, query)
            all += page.bookings
            guard let next = page.nextCursor else { return all }
            query.cursor = next
        }
    }

    // MARK: Shared parts

    /// Rentals as a table; for a signed-in admin (`returning`), open rentals get a Return button
    /// and a Renew form (a new due day).
    /// Only a table with returned rentals in it (the history) has a "Returned" column; IDs never
    /// break across lines.
    private func rentalTable(_ rentals: [Rental], _ l: Localizer, id: String, returning viewer: Viewer? = nil) -> String {
        let admin = viewer?.user != nil
        let withReturned = rentals.contains { $0.returnedAt != nil }
        let now = Date()
        var headers = ["device.id", "device.model", "rentals.user", "rentals.since", "rentals.due"].map { l.t($0) }
        if withReturned { headers.append(l.t("rentals.returned")) }
        if admin { headers.append("") }
        return HTML.table(headers, rentals.map { r in
            var due = r.dueAt.map { l.dateTime($0) } ?? l.t("rentals.open")
            let overdue = r.isOverdue(at: now)
            if overdue { due += " (" + l.t("rentals.overdueMark") + ")" }
            var cells = [
                "<a class=\"nowrap\" href=\"/devices/\(HTML.urlComponent(r.deviceId))\">\(HTML.escape(r.deviceId))</a>",
                HTML.escape(r.model),
                "<a href=\"/users/\(HTML.urlComponent(r.userId))\">\(HTML.escape(r.userName)) (<span class=\"nowrap\">\(HTML.escape(r.userId))</span>)</a>",
                HTML.escape(l.dateTime(r.rentedAt)),
                HTML.escape(due),
            ]
            if withReturned { cells.append(HTML.escape(r.returnedAt.map { l.dateTime($0) } ?? l.t("common.none"))) }
            if let viewer, admin {
                let device = "<input type=\"hidden\" name=\"device\" value=\"\(HTML.escape(r.deviceId))\">"
                let button = { (action: String) in
                    "<button type=\"submit\" id=\"\(id)-\(action)-\(HTML.escape(r.deviceId))\">\(HTML.escape(l.t("rentals.\(action)")))</button></form>"
                }
                cells.append(r.returnedAt != nil ? "" : "<form method=\"post\" action=\"/rentals/return\" class=\"inline\">" + viewer.csrfField
                    + device + button("return")
                    // Renew: a new due day for the same rental.
                    + "<form method=\"post\" action=\"/rentals/renew\" class=\"inline\">" + viewer.csrfField + device
                    + "<label>\(HTML.escape(l.t("rentals.newDueDay"))) <input type=\"date\" name=\"due\" required"
                    + " id=\"\(id)-due-\(HTML.escape(r.deviceId))\"></label>" + button("renew"))
            }
            return (cells: cells, attributes: overdue ? " class=\"overdue\"" : "")
        }, id: id)
    }

    private func nextLink(_ cursor: String?, _ q: Query, path: String, _ l: Localizer) -> String {
        guard let cursor else { return "" }
        var items = q.items.filter { $0.0 != "cursor" }
        items.append(("cursor", cursor))
        let query = items.map { "\($0.0)=\(HTML.urlComponent($0.1))" }.joined(separator: "&")
        return "<p><a rel=\"next\" href=\"\(path)?\(HTML.escape(query))\">\(HTML.escape(l.t("common.next")))</a></p>"
    }
}

/// A request's query string, `+` and percent escapes decoded; empty values count as absent.
struct Query: Sendable {
    let items: [(String, String)]

    init(items: [(String, String)]) { self.items = items }

    init(_ raw: String?) {
        items = (raw ?? "").split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
            }
            guard let key = parts.first else { return nil }
            return (decode(key), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The value as sent, empty or not; nil only when the field is absent.
    func raw(_ key: String) -> String? {
        items.last(where: { $0.0 == key })?.1
    }

    subscript(key: String) -> String? {
        guard let value = items.last(where: { $0.0 == key })?.1.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    func bool(_ key: String) -> Bool? {
        switch self[key] { case "true": return true; case "false": return false; default: return nil }
    }
}

/// A request the pages cannot answer, said in the request's language.
enum PageError: Error, Sendable, Equatable {
    case badDate(String)
    /// A form posted to an action the page does not have.
    case unknownAction(String)
}
