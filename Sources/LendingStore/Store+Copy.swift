import Foundation
import GRDB
import Lending

// Handing everything over to another backend, and taking it in (`roombridgectl db migrate-to`).
extension SQLiteInventoryStore: InventoryCopySource, InventoryCopyTarget {
    public func copyAll() async throws -> InventoryCopy {
        try await read { db in
            var copy = InventoryCopy()
            copy.groups = try DeviceGroup.fetchAll(db, sql: "SELECT * FROM device_groups ORDER BY id")
            copy.devices = try Device.fetchAll(db, sql: "SELECT * FROM devices ORDER BY id")
            copy.users = try User.fetchAll(db, sql: "SELECT * FROM users ORDER BY id")
            copy.badges = try Badge.fetchAll(db, sql: "SELECT * FROM badges ORDER BY identifier")
            copy.tagBindings = try TagBinding.fetchAll(db, sql: "SELECT * FROM tag_bindings ORDER BY uid")
            copy.rentals = try Rental.fetchAll(db, sql: "SELECT * FROM rentals ORDER BY id")
            copy.deviceLog = try DeviceLogEntry.fetchAll(db, sql: "SELECT * FROM device_log ORDER BY id")
            copy.overdueAnnouncements = try Row.fetchAll(db, sql: """
                SELECT rental_id, due_at, announced_at FROM overdue_announcements ORDER BY rental_id, due_at
                """).map { row in
                InventoryCopy.OverdueAnnouncement(rentalId: row[0], dueAt: Millis.date(row[1]), announcedAt: Millis.date(row[2]))
            }
            copy.keptSchedules = try Row.fetchAll(db, sql: """
                SELECT curtain, open_minute, open_enabled, close_minute, close_enabled, updated_at FROM curtain_schedules ORDER BY curtain
                """).map { row in
                InventoryCopy.KeptSchedule(curtain: row[0], openMinute: row[1], openEnabled: row[2], closeMinute: row[3],
                                           closeEnabled: row[4], updatedAt: Millis.date(row[5]))
            }
            copy.outbox = try Row.fetchAll(db, sql: "SELECT \(Self.outboxColumns) FROM outbox ORDER BY seq").map(Self.decodeOutbox)
            return copy
        }
    }

    public func restore(_ copy: InventoryCopy) async throws -> [String: Int] {
        try await write { db in
            for table in InventoryCopy.dataTables {
                let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
                if rows > 0 { throw InventoryCopyError.targetNotEmpty(table: table, rows: rows) }
            }
            try db.execute(sql: "DELETE FROM device_groups")
            for group in copy.groups { try group.insert(db) }
            // Rentals before devices: a device broken since is not lendable, and the schema refuses a rental of it.
            for rental in copy.rentals { try rental.insert(db) }
            for device in copy.devices { try device.insert(db) }
            for user in copy.users { try user.insert(db) }
            for badge in copy.badges { try badge.insert(db) }
            for binding in copy.tagBindings { try binding.insert(db) }
            for entry in copy.deviceLog { try entry.insert(db) }
            for a in copy.overdueAnnouncements {
                try db.execute(sql: "INSERT INTO overdue_announcements (rental_id, due_at, announced_at) VALUES (?, ?, ?)",
                               arguments: [a.rentalId, Millis.from(a.dueAt), Millis.from(a.announcedAt)])
            }
            for s in copy.keptSchedules {
                try db.execute(sql: """
                    INSERT INTO curtain_schedules (curtain, open_minute, open_enabled, close_minute, close_enabled, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [s.curtain, s.openMinute, s.openEnabled, s.closeMinute, s.closeEnabled, Millis.from(s.updatedAt)])
            }
            for entry in copy.outbox { try Self.insertOutbox(db, entry) }
            var counts: [String: Int] = [:]
            for table in copy.counts.keys {
                counts[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
            }
            try InventoryCopy.check(counts, against: copy)
            return counts
        }
    }
}
