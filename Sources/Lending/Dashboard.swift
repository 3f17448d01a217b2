import Foundation

/// Lending at a glance, for the dashboard: what is lent, overdue and available now, by group; the
/// last days of lending, day by day in the kiosk's time zone; the busiest devices, and those never
/// lent (candidates to retire). Made in the daemon from the store's range queries and aggregates
/// (``DashboardFacts``), never from every rental.
public struct LendingDashboard: Sendable, Hashable, Codable {
    /// One group's devices now. Disposed devices are left out unless lent.
    public struct GroupLoad: Sendable, Hashable, Codable {
        public var groupId: String
        public var name: String
        public var devices: Int
        /// Lent now, and of those, past their due date.
        public var lent: Int
        public var overdue: Int
        /// Not lent and in order (`normal`).
        public var available: Int
        /// Not lent and broken.
        public var broken: Int

        public init(groupId: String, name: String, devices: Int, lent: Int, overdue: Int, available: Int, broken: Int) {
            self.groupId = groupId
            self.name = name
            self.devices = devices
            self.lent = lent
            self.overdue = overdue
            self.available = available
            self.broken = broken
        }
    }

    /// One day of the kiosk's time zone: devices lent that day, and rentals that fell overdue that
    /// day (due in it, before now, and not back by their due time).
    public struct DayLoad: Sendable, Hashable, Codable {
        public var day: String
        public var lends: Int
        public var overdue: Int

        public init(day: String, lends: Int, overdue: Int) {
            self.day = day
            self.lends = lends
            self.overdue = overdue
        }
    }

    /// A device with no rental at all.
    public struct IdleDevice: Sendable, Hashable, Codable {
        public var deviceId: DeviceID
        public var model: String
        public var registeredAt: Date

        public init(deviceId: DeviceID, model: String, registeredAt: Date) {
            self.deviceId = deviceId
            self.model = model
            self.registeredAt = registeredAt
        }
    }

    public var timeZone: String
    /// The first day's first instant, and now.
    public var from: Date
    public var until: Date
    public var groups: [GroupLoad]
    /// Oldest first, one per day, today last.
    public var days: [DayLoad]
    /// The median length of the rentals returned in the period, in seconds; nil when none was.
    public var medianRentalSeconds: Int?
    /// The most lent devices of the period, most first (ties by device ID).
    public var topDevices: [MonthlyLendingReport.DeviceCount]
    /// How many devices (not disposed) were never lent, and the first ``listed`` of them by ID.
    public var neverLentCount: Int
    public var neverLent: [IdleDevice]

    public static let defaultDays = 30
    public static let maximumDays = 366
    public static let topCount = 10
    public static let listed = 20

    /// The first instant of the `days` days of `zone` that end with today.
    public static func start(days: Int, endingAt now: Date, in zone: TimeZone) -> Date {
        var day = KioskDay(containing: now, in: zone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        for _ in 1..<max(1, days) {
            guard let noon = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: 12)),
                  let before = calendar.date(byAdding: .day, value: -1, to: noon) else { break }
            day = KioskDay(containing: before, in: zone)
        }
        return day.start(in: zone) ?? now
    }

    /// The dashboard from `facts`, read for [`from`, `now`).
    public static func make(_ facts: DashboardFacts, from: Date, now: Date, zone: TimeZone) -> LendingDashboard {
        var days: [DayLoad] = []
        var starts: [Date] = []
        var day: KioskDay? = KioskDay(containing: from, in: zone)
        while let d = day, let start = d.start(in: zone), start < now {
            starts.append(start)
            days.append(DayLoad(day: d.text, lends: 0, overdue: 0))
            day = d.next
        }
        // Each time to its day by a binary search over the days' first instants, not a calendar
        // per time (half the debug build's time at 10 k devices; in release the SQL dominates:
        // docs/benchmarks.md, "Store at scale").
        func index(of date: Date) -> Int? {
            guard let first = starts.first, date >= first, date < now else { return nil }
            var (low, high) = (0, starts.count - 1)
            while low < high {
                let mid = (low + high + 1) / 2
                if starts[mid] <= date { low = mid } else { high = mid - 1 }
            }
            return low
        }
        for lent in facts.lentAt {
            if let i = index(of: lent) { days[i].lends += 1 }
        }
        for due in facts.due where due.dueAt < now && (due.returnedAt ?? .distantFuture) > due.dueAt {
            if let i = index(of: due.dueAt) { days[i].overdue += 1 }
        }
        let lengths = facts.rentalLengths.sorted()
        let median: Int? = lengths.isEmpty ? nil
            : Int((lengths.count % 2 == 1 ? lengths[lengths.count / 2]
                   : (lengths[lengths.count / 2 - 1] + lengths[lengths.count / 2]) / 2).rounded())
        return LendingDashboard(timeZone: zone.identifier, from: from, until: now, groups: facts.groups, days: days,
                                medianRentalSeconds: median, topDevices: facts.topDevices,
                                neverLentCount: facts.neverLentCount, neverLent: facts.neverLent)
    }
}

/// What the store answers for a dashboard of [from, until): aggregates it computes itself (the
/// groups, the busiest devices, the never-lent devices) and the few columns of the period's rentals
/// that the days are counted from. Each is a range query over an index.
public struct DashboardFacts: Sendable, Hashable {
    /// A rental due in the period, and when it came back.
    public struct Due: Sendable, Hashable {
        public var dueAt: Date
        public var returnedAt: Date?
        public init(dueAt: Date, returnedAt: Date?) {
            self.dueAt = dueAt
            self.returnedAt = returnedAt
        }
    }

    public var groups: [LendingDashboard.GroupLoad]
    /// When each rental of the period was lent.
    public var lentAt: [Date]
    /// The rentals due in the period.
    public var due: [Due]
    /// How long each rental returned in the period was out, in seconds.
    public var rentalLengths: [Double]
    public var topDevices: [MonthlyLendingReport.DeviceCount]
    public var neverLentCount: Int
    public var neverLent: [LendingDashboard.IdleDevice]

    public init(groups: [LendingDashboard.GroupLoad], lentAt: [Date], due: [Due], rentalLengths: [Double],
                topDevices: [MonthlyLendingReport.DeviceCount], neverLentCount: Int, neverLent: [LendingDashboard.IdleDevice]) {
        self.groups = groups
        self.lentAt = lentAt
        self.due = due
        self.rentalLengths = rentalLengths
        self.topDevices = topDevices
        self.neverLentCount = neverLentCount
        self.neverLent = neverLent
    }
}

extension InventoryStore {
    /// The dashboard of the `days` days of `zone` that end with today, at `now`.
    /// - Throws: ``LendingError/invalidField(_:reason:)`` for `days` outside 1…366.
    public func dashboard(days: Int, timeZone zone: TimeZone, now: Date) async throws -> LendingDashboard {
        guard (1...LendingDashboard.maximumDays).contains(days) else {
            throw LendingError.invalidField("days", reason: "give 1 to \(LendingDashboard.maximumDays) days, got \(days)")
        }
        let from = LendingDashboard.start(days: days, endingAt: now, in: zone)
        let facts = try await dashboardFacts(from: from, until: now, now: now)
        return LendingDashboard.make(facts, from: from, now: now, zone: zone)
    }
}
