#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A month of lending at the desk, for people who keep paper (seed 003): lends, returns, what fell
/// overdue, the most lent devices and who had what. The month is a calendar month of the kiosk's
/// time zone.
public struct MonthlyLendingReport: Sendable, Hashable, Codable {
    /// How often one device was lent in the month.
    public struct DeviceCount: Sendable, Hashable, Codable {
        public var deviceId: DeviceID
        public var model: String
        public var lends: Int

        public init(deviceId: DeviceID, model: String, lends: Int) {
            self.deviceId = deviceId
            self.model = model
            self.lends = lends
        }
    }

    /// One rental of a borrower's in the month.
    public struct Holding: Sendable, Hashable, Codable {
        public var deviceId: DeviceID
        public var model: String
        public var rentedAt: Date
        public var dueAt: Date?
        public var returnedAt: Date?
    }

    /// A borrower and what they had in the month (a rental out at any time in it), by lend time.
    public struct Borrower: Sendable, Hashable, Codable {
        public var userId: UserID
        public var userName: String
        public var rentals: [Holding]
    }

    /// `YYYY-MM`, and the zone it is a month of.
    public var month: String
    public var timeZone: String
    /// The month's first instant and the next month's.
    public var from: Date
    public var until: Date
    /// Rentals lent in the month, returned in it, and those whose due date fell in it (up to the
    /// report's time) and that were not back by then.
    public var lends: Int
    public var returns: Int
    public var overdue: Int
    /// The most lent devices, most first (ties by device ID), at most ``topCount``.
    public var topDevices: [DeviceCount]
    /// Everyone who had a device in the month, by name.
    public var borrowers: [Borrower]

    public static let topCount = 10

    /// The report of `month` from the rentals out at some time in it (``HistoryQuery/overlapping``), at `now`.
    public static func make(month: String, timeZone: TimeZone, from: Date, until: Date, rentals: [Rental], now: Date)
        -> MonthlyLendingReport {
        func within(_ d: Date?) -> Bool { d.map { $0 >= from && $0 < until } ?? false }
        let lent = rentals.filter { within($0.rentedAt) }
        let end = min(until, now)
        let overdue = rentals.filter { r in
            guard let due = r.dueAt, due >= from, due < end else { return false }
            return (r.returnedAt ?? .distantFuture) > due
        }
        var counts: [DeviceID: (model: String, lends: Int)] = [:]
        for r in lent { counts[r.deviceId, default: (r.model, 0)].lends += 1 }
        let top = counts.map { DeviceCount(deviceId: $0.key, model: $0.value.model, lends: $0.value.lends) }
            .sorted { ($0.lends, $1.deviceId) > ($1.lends, $0.deviceId) }
            .prefix(topCount)
        var byUser: [UserID: Borrower] = [:]
        for r in rentals.sorted(by: { ($0.rentedAt, $0.id) < ($1.rentedAt, $1.id) }) {
            byUser[r.userId, default: Borrower(userId: r.userId, userName: r.userName, rentals: [])].rentals.append(
                Holding(deviceId: r.deviceId, model: r.model, rentedAt: r.rentedAt, dueAt: r.dueAt, returnedAt: r.returnedAt))
        }
        let borrowers = byUser.values.sorted { ($0.userName, $0.userId) < ($1.userName, $1.userId) }
        return MonthlyLendingReport(month: month, timeZone: timeZone.identifier, from: from, until: until, lends: lent.count,
                                    returns: rentals.filter { within($0.returnedAt) }.count, overdue: overdue.count,
                                    topDevices: Array(top), borrowers: borrowers)
    }

    /// The month `YYYY-MM` of `zone`: its first instant and the next month's; nil for no such month.
    public static func bounds(of month: String, in zone: TimeZone) -> (from: Date, until: Date)? {
        let parts = month.split(separator: "-")
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let y = Int(parts[0]), let m = Int(parts[1]),
              (1...12).contains(m),
              let from = KioskDay(year: y, month: m, day: 1).start(in: zone),
              let until = KioskDay(year: m == 12 ? y + 1 : y, month: m == 12 ? 1 : m + 1, day: 1).start(in: zone)
        else { return nil }
        return (from, until)
    }
}

extension InventoryStore {
    /// The lending report of `month` (`YYYY-MM`) in `zone`.
    /// - Throws: ``LendingError/invalidField(_:reason:)`` for a month that is not `YYYY-MM`.
    public func monthlyReport(month: String, timeZone zone: TimeZone, now: Date) async throws -> MonthlyLendingReport {
        guard let (from, until) = MonthlyLendingReport.bounds(of: month, in: zone) else {
            throw LendingError.invalidField("month", reason: "expected a month such as 2026-11, got '\(month)'")
        }
        let rentals = try await allHistory(HistoryQuery(since: from, until: until, overlapping: true))
        return MonthlyLendingReport.make(month: month, timeZone: zone, from: from, until: until, rentals: rentals, now: now)
    }
}
