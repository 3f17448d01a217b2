import Foundation

/// A calendar day of the kiosk's time zone, as people give it (`2026-12-01`): when it starts,
/// and when it ends. One definition for every front, so that "due on that day" is the same
/// instant from roombridgectl, the web pages and the daemon (the last second of the day).
public struct KioskDay: Sendable, Hashable {
    public let year: Int
    public let month: Int
    public let day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`, else nil.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The day of `zone` that `date` falls on.
    public init(containing date: Date, in zone: TimeZone) {
        let c = Self.calendar(zone).dateComponents([.year, .month, .day], from: date)
        self.init(year: c.year ?? 1970, month: c.month ?? 1, day: c.day ?? 1)
    }

    /// `YYYY-MM-DD`.
    public var text: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    private static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The day's first instant in `zone`; nil when the calendar has no such day (2026-02-30).
    public func start(in zone: TimeZone) -> Date? {
        let calendar = Self.calendar(zone)
        let components = DateComponents(year: year, month: month, day: day)
        guard let start = calendar.date(from: components),
              calendar.dateComponents([.year, .month, .day], from: start) == components else { return nil }
        return start
    }

    /// The next calendar day.
    public var next: KioskDay? {
        let utc = Self.calendar(TimeZone(secondsFromGMT: 0)!)
        guard let noon = utc.date(from: DateComponents(year: year, month: month, day: day, hour: 12)),
              let after = utc.date(byAdding: .day, value: 1, to: noon) else { return nil }
        let c = utc.dateComponents([.year, .month, .day], from: after)
        guard let y = c.year, let m = c.month, let d = c.day else { return nil }
        return KioskDay(year: y, month: m, day: d)
    }

    /// The day's last second in `zone` (a rental due that day is overdue after it): one second
    /// before the next day starts, also on a day of 23 or 25 hours.
    public func end(in zone: TimeZone) -> Date? {
        guard start(in: zone) != nil, let following = next?.start(in: zone) else { return nil }
        return following.addingTimeInterval(-1)
    }
}
