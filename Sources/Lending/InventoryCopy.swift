#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything one store holds, for moving an installation to another backend
/// (`roombridgectl db migrate-to`): the inventory, people, every rental, the change log, which
/// overdue rentals were announced, and the schedules the daemon keeps for curtains.
public struct InventoryCopy: Sendable, Equatable {
    /// One announced overdue rental (per due date).
    public struct OverdueAnnouncement: Sendable, Equatable {
        public var rentalId: Int64
        public var dueAt: Date
        public var announcedAt: Date
        public init(rentalId: Int64, dueAt: Date, announcedAt: Date) {
            self.rentalId = rentalId
            self.dueAt = dueAt
            self.announcedAt = announcedAt
        }
    }

    /// A curtain schedule the daemon keeps, as stored: minutes after midnight.
    public struct KeptSchedule: Sendable, Equatable {
        public var curtain: String
        public var openMinute: Int
        public var openEnabled: Bool
        public var closeMinute: Int
        public var closeEnabled: Bool
        public var updatedAt: Date
        public init(curtain: String, openMinute: Int, openEnabled: Bool, closeMinute: Int, closeEnabled: Bool, updatedAt: Date) {
            self.curtain = curtain
            self.openMinute = openMinute
            self.openEnabled = openEnabled
            self.closeMinute = closeMinute
            self.closeEnabled = closeEnabled
            self.updatedAt = updatedAt
        }
    }

    public var groups: [DeviceGroup] = []
    public var devices: [Device] = []
    public var users: [User] = []
    public var badges: [Badge] = []
    public var tagBindings: [TagBinding] = []
    /// In ID order; IDs are kept.
    public var rentals: [Rental] = []
    /// In ID order; IDs are kept.
    public var deviceLog: [DeviceLogEntry] = []
    public var overdueAnnouncements: [OverdueAnnouncement] = []
    public var keptSchedules: [KeptSchedule] = []
    /// Every outbox entry (pending ones are delivered from the new store), in `seq` order; `seq` is kept.
    public var outbox: [OutboxEntry] = []

    public init() {}

    /// Rows per table, as compared after a copy.
    public var counts: [String: Int] {
        ["device_groups": groups.count, "devices": devices.count, "users": users.count, "badges": badges.count,
         "tag_bindings": tagBindings.count, "rentals": rentals.count, "device_log": deviceLog.count,
         "overdue_announcements": overdueAnnouncements.count, "curtain_schedules": keptSchedules.count,
         "outbox": outbox.count]
    }
}

/// A store that can hand over everything it holds.
public protocol InventoryCopySource: Sendable {
    /// Everything, read in one transaction.
    func copyAll() async throws -> InventoryCopy
}

/// A store that can take in everything another one held.
public protocol InventoryCopyTarget: Sendable {
    /// Writes `copy` into this store in one transaction; refused unless the store holds no devices, people,
    /// rentals or log entries yet. Returns the rows per table afterwards.
    func restore(_ copy: InventoryCopy) async throws -> [String: Int]
}

/// Why a copy into a store was refused.
public enum InventoryCopyError: Error, Equatable, CustomStringConvertible {
    /// The target already holds data (table, rows).
    case targetNotEmpty(table: String, rows: Int)
    /// After the copy the target's rows differ from the source's (table, expected, found); nothing was kept.
    case countMismatch(table: String, expected: Int, found: Int)

    public var description: String {
        switch self {
        case .targetNotEmpty(let table, let rows):
            "the target database is not empty (\(table) has \(rows) rows); nothing was copied: use a new, empty database"
        case .countMismatch(let table, let expected, let found):
            "after copying, \(table) has \(found) rows where the source has \(expected); nothing was kept: report this"
        }
    }
}

extension InventoryCopy {
    /// The tables that must be empty before a copy goes in (groups are not: every new database has the defaults).
    public static let dataTables = ["devices", "users", "badges", "tag_bindings", "rentals", "device_log", "outbox"]

    /// Throws ``InventoryCopyError/countMismatch(table:expected:found:)`` unless `counts` match this copy's.
    public static func check(_ counts: [String: Int], against copy: InventoryCopy) throws {
        for (table, expected) in copy.counts.sorted(by: { $0.key < $1.key }) where counts[table] != expected {
            throw InventoryCopyError.countMismatch(table: table, expected: expected, found: counts[table] ?? 0)
        }
    }
}
