#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// Reminders sent through the outbox at set times of the kiosk's day: a daily digest of what is
/// lent, a notice for each rental that falls due that day (naming the booking that waits for it,
/// if any), and at the same time a reminder to each booker whose booking starts that day. Each reminder has an event ID made
/// from what it is about (the day; the rental and its due date), so writing it again — after a
/// restart, or by a second kiosk on the same database — adds nothing (the outbox keeps one entry
/// per event and target), and receivers that deduplicate by `Idempotency-Key` see it once.
public struct ReminderSchedule: Sendable, Hashable {
    /// Seconds after local midnight of the digest; nil: no digest.
    public var digestAt: Int?
    /// Seconds after local midnight of the notices of rentals due that day; nil: no notices.
    public var dueNoticeAt: Int?
    /// The kiosk's time zone, in which the times and the day are read.
    public var timeZone: TimeZone

    public init(digestAt: Int? = nil, dueNoticeAt: Int? = nil, timeZone: TimeZone) {
        self.digestAt = digestAt
        self.dueNoticeAt = dueNoticeAt
        self.timeZone = timeZone
    }

    public var isEmpty: Bool { digestAt == nil && dueNoticeAt == nil }

    /// `HH:MM` or `HH:MM:SS` (24-hour) as seconds after midnight; nil when it is not one.
    public static func secondsOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
              let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        let s = parts.count == 3 ? Int(parts[2]) : 0
        guard let s, (0..<60).contains(s) else { return nil }
        return h * 3600 + m * 60 + s
    }

    /// The local day of `date`: its midnight and the next.
    public func day(of date: Date) -> (start: Date, end: Date, key: String) {
        let calendar = self.calendar
        let start = calendar.startOfDay(for: date)
        let end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86400)
        let c = calendar.dateComponents([.year, .month, .day], from: start)
        func two(_ v: Int?) -> String { let v = v ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        return (start, end, "\(c.year ?? 0)-\(two(c.month))-\(two(c.day))")
    }

    /// The time `secondsOfDay` on the local day of `date` (on a day that skips that hour, the
    /// first time after it).
    public func time(_ secondsOfDay: Int, onDayOf date: Date) -> Date {
        let start = day(of: date).start
        var c = DateComponents()
        c.hour = secondsOfDay / 3600
        c.minute = secondsOfDay % 3600 / 60
        c.second = secondsOfDay % 60
        return calendar.nextDate(after: start.addingTimeInterval(-1), matching: c, matchingPolicy: .nextTime)
            ?? start.addingTimeInterval(Double(secondsOfDay))
    }

    /// The reminders whose time today has come by `now` (sending them again is harmless).
    public func due(at now: Date) -> [ReminderKind] {
        var kinds: [ReminderKind] = []
        if let digestAt, time(digestAt, onDayOf: now) <= now { kinds.append(.digest) }
        if let dueNoticeAt, time(dueNoticeAt, onDayOf: now) <= now { kinds.append(.due) }
        return kinds
    }

    /// The next reminder time after `now` (today's or tomorrow's); nil when none is set.
    public func nextTime(after now: Date) -> Date? {
        let tomorrow = day(of: now).end.addingTimeInterval(1)
        return [digestAt, dueNoticeAt].compactMap { $0 }
            .flatMap { [time($0, onDayOf: now), time($0, onDayOf: tomorrow)] }
            .filter { $0 > now }
            .min()
    }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }
}

/// The two kinds of reminder.
public enum ReminderKind: String, Sendable, Hashable, CaseIterable {
    case digest, due
}

/// The outbox entries of reminders: what they say and their event IDs.
public enum ReminderEvent {
    /// The most rentals a digest lists by name in each of its lists.
    public static let listed = 50

    /// The digest of the day `day` (``ReminderSchedule/day(of:)``): how many devices are lent,
    /// and which are overdue and which fall due that day.
    public static func digest(day: (start: Date, end: Date, key: String), active: [Rental], at: Date,
                              timeZone: TimeZone, routes: [OutboxRoute]) -> [OutboxEntry] {
        let accepting = routes.filter { $0.accepts(.digest) }
        guard !accepting.isEmpty else { return [] }
        let eventId = stableId("digest", day.key)
        let overdue = active.filter { ($0.dueAt ?? .distantFuture) <= at }
        let dueToday = active.filter { r in r.dueAt.map { $0 > at && $0 < day.end } ?? false }
        let body: JSONValue = .object([
            "id": .string(eventId.uuidString.lowercased()), "kind": .string(OutboxEventKind.digest.rawValue),
            "at": .string(LendingFormat.iso8601(at)), "day": .string(day.key), "timeZone": .string(timeZone.identifier),
            "lent": .int(Int64(active.count)), "overdueCount": .int(Int64(overdue.count)),
            "dueTodayCount": .int(Int64(dueToday.count)),
            "overdue": .array(overdue.prefix(listed).map(OutboxEvent.rentalObject)),
            "dueToday": .array(dueToday.prefix(listed).map(OutboxEvent.rentalObject)),
        ])
        let payload = body.serializedBytes()
        return accepting.map {
            OutboxEntry(seq: 0, eventId: eventId, target: $0.target, kind: .digest, deviceId: "", payload: payload,
                        createdAt: at, nextAttemptAt: at)
        }
    }

    /// A notice for each of `rentals` that falls due on the day `day` and was not returned. When
    /// someone else has booked the device from its due date on (within a day of it, among
    /// `bookings`), the notice carries that `booking`: the borrower knows the next person waits.
    public static func dueNotices(day: (start: Date, end: Date, key: String), rentals: [Rental], at: Date,
                                  routes: [OutboxRoute], bookings: [Booking] = []) -> [OutboxEntry] {
        rentals.filter { r in r.returnedAt == nil && (r.dueAt.map { $0 >= day.start && $0 < day.end } ?? false) }
            .flatMap { r in
                var extra: [String: JSONValue] = [:]
                if let due = r.dueAt, let waiting = waitingBooking(for: r, due: due, among: bookings) {
                    extra["booking"] = OutboxEvent.bookingObject(waiting)
                }
                return OutboxEvent.inserts(.due, rental: r, at: at, routes: routes,
                                           eventId: stableId("due", "\(r.id)@\(StoreConventions.millis(r.dueAt ?? r.rentedAt))"),
                                           extra: extra)
            }
    }

    /// The first booking of the rental's device by another person that starts at its due date or
    /// within a day after it.
    static func waitingBooking(for rental: Rental, due: Date, among bookings: [Booking]) -> Booking? {
        bookings.filter { b in
            b.deviceId == rental.deviceId && b.state == .booked && b.userId != rental.userId && b.startsAt >= due
                && b.startsAt < due.addingTimeInterval(86400)
        }.min { $0.startsAt < $1.startsAt }
    }

    /// A reminder to the booker of each of `bookings` that starts on the day `day` (and has not
    /// ended), once per booking and start.
    public static func bookingNotices(day: (start: Date, end: Date, key: String), bookings: [Booking], at: Date,
                                      routes: [OutboxRoute]) -> [OutboxEntry] {
        let accepting = routes.filter { $0.accepts(.booking) }
        guard !accepting.isEmpty else { return [] }
        return bookings.filter { $0.state == .booked && $0.startsAt >= day.start && $0.startsAt < day.end && $0.endsAt > at }
            .flatMap { b -> [OutboxEntry] in
                let eventId = stableId("booking", "\(b.id)@\(StoreConventions.millis(b.startsAt))")
                let payload = JSONValue.object([
                    "id": .string(eventId.uuidString.lowercased()), "kind": .string(OutboxEventKind.booking.rawValue),
                    "at": .string(LendingFormat.iso8601(at)), "deviceId": .string(b.deviceId),
                    "booking": OutboxEvent.bookingObject(b),
                ]).serializedBytes()
                return accepting.map {
                    OutboxEntry(seq: 0, eventId: eventId, target: $0.target, kind: .booking, deviceId: b.deviceId,
                                payload: payload, createdAt: at, nextAttemptAt: at)
                }
            }
    }

    /// A UUID made from `kind` and `key` (the same every time): two 64-bit FNV-1a hashes of the
    /// text, with the version bits of a name-based UUID.
    public static func stableId(_ kind: String, _ key: String) -> UUID {
        func fnv(_ text: String, seed: UInt64) -> UInt64 {
            var h = seed
            for byte in text.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return h
        }
        let text = "roombridge-reminder:\(kind):\(key)"
        let a = fnv(text, seed: 0xcbf2_9ce4_8422_2325), b = fnv(text, seed: 0x8422_2325_cbf2_9ce4)
        var bytes = (0..<8).map { UInt8(truncatingIfNeeded: a >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: b >> (56 - 8 * $0)) }
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: custom
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension InventoryStore {
    /// Writes today's reminders of `kinds` to the outbox (``enqueueOutbox(_:)``: those written
    /// before are left alone); returns how many entries were new.
    public func sendReminders(_ kinds: [ReminderKind], schedule: ReminderSchedule, routes: [OutboxRoute],
                              now: Date) async throws -> Int {
        guard !kinds.isEmpty, !routes.isEmpty else { return 0 }
        var active: [Rental] = []
        var request = PageRequest(limit: PageRequest.maximumLimit)
        while true {
            let page = try await activeRentals(userId: nil, page: request)
            active += page.items
            guard let next = page.nextCursor else { break }
            request.cursor = next
        }
        let day = schedule.day(of: now)
        var entries: [OutboxEntry] = []
        if kinds.contains(.due) {
            // The bookings that start today, and those a rental due today runs into (up to a day after).
            var bookings: [Booking] = []
            var page = PageRequest(limit: PageRequest.maximumLimit)
            let query = BookingQuery(from: day.start, until: day.end.addingTimeInterval(86400))
            while true {
                let found = try await self.bookings(query, page: page)
                bookings += found.items
                guard let next = found.nextCursor else { break }
                page.cursor = next
            }
            entries += ReminderEvent.dueNotices(day: day, rentals: active, at: now, routes: routes, bookings: bookings)
            entries += ReminderEvent.bookingNotices(day: day, bookings: bookings, at: now, routes: routes)
        }
        if kinds.contains(.digest) {
            entries += ReminderEvent.digest(day: day, active: active, at: now, timeZone: schedule.timeZone, routes: routes)
        }
        return try await enqueueOutbox(entries)
    }
}
