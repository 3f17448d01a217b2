#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import PostgresNIO

// Taking in an installation moved from SQLite (`roombridgectl db migrate-to`).
extension PostgresInventoryStore: InventoryCopyTarget {
    public func restore(_ copy: InventoryCopy) async throws -> [String: Int] {
        let logger = self.logger
        return try await transaction { c in
            for table in InventoryCopy.dataTables {
                let rows = try await Self.count(c, table, logger: logger)
                if rows > 0 { throw InventoryCopyError.targetNotEmpty(table: table, rows: rows) }
            }
            try await c.query("DELETE FROM device_groups", logger: logger)
            for g in copy.groups {
                try await c.query("""
                    INSERT INTO device_groups (id, name, sort_order) VALUES (\(g.id), \(g.name), \(Int32(clamping: g.sortOrder)))
                    """, logger: logger)
            }
            // Rentals before devices: a device broken since is not lendable, and the schema refuses a rental of it.
            for r in copy.rentals {
                try await c.query("""
                    INSERT INTO rentals (id, device_id, model, os_version, serial_number, user_id, user_name, rented_at, due_at,
                                         returned_at, returned_by, location, return_location, lent_by, return_note)
                    VALUES (\(r.id), \(r.deviceId), \(r.model), \(r.osVersion), \(r.serialNumber), \(r.userId), \(r.userName),
                            \(Self.ms(r.rentedAt)), \(r.dueAt.map(Self.ms)), \(r.returnedAt.map(Self.ms)), \(r.returnedBy),
                            \(r.location), \(r.returnLocation), \(r.lentBy), \(r.returnNote))
                    """, logger: logger)
            }
            for d in copy.devices {
                try await c.query("""
                    INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type,
                                         registered_at, note, is_nfc_registered)
                    VALUES (\(d.id), \(d.groupId), \(d.model), \(d.serialNumber), \(d.osVersion), \(d.status.rawValue),
                            \(d.connectorType), \(Self.ms(d.registeredAt)), \(d.note), \(d.isNFCRegistered))
                    """, logger: logger)
            }
            for u in copy.users {
                try await c.query("INSERT INTO users (id, name, registered_at) VALUES (\(u.id), \(u.name), \(Self.ms(u.registeredAt)))",
                                  logger: logger)
            }
            for b in copy.badges {
                try await c.query("""
                    INSERT INTO badges (identifier, kind, user_id, registered_at, label)
                    VALUES (\(b.identifier), \(b.kind.rawValue), \(b.userId), \(Self.ms(b.registeredAt)), \(b.label))
                    """, logger: logger)
            }
            for t in copy.tagBindings {
                try await c.query("INSERT INTO tag_bindings (uid, device_id, bound_at) VALUES (\(t.uid.hex), \(t.deviceId), \(Self.ms(t.boundAt)))",
                                  logger: logger)
            }
            for e in copy.deviceLog {
                try await c.query("""
                    INSERT INTO device_log (id, device_id, operation, field, old_value, new_value, at, actor)
                    VALUES (\(e.id), \(e.deviceId), \(e.operation.rawValue), \(e.field), \(e.oldValue), \(e.newValue),
                            \(Self.ms(e.at)), \(e.actor))
                    """, logger: logger)
            }
            for a in copy.overdueAnnouncements {
                try await c.query("""
                    INSERT INTO overdue_announcements (rental_id, due_at, announced_at)
                    VALUES (\(a.rentalId), \(Self.ms(a.dueAt)), \(Self.ms(a.announcedAt)))
                    """, logger: logger)
            }
            for s in copy.keptSchedules {
                try await c.query("""
                    INSERT INTO curtain_schedules (curtain, open_minute, open_enabled, close_minute, close_enabled, updated_at)
                    VALUES (\(s.curtain), \(Int32(clamping: s.openMinute)), \(s.openEnabled), \(Int32(clamping: s.closeMinute)),
                            \(s.closeEnabled), \(Self.ms(s.updatedAt)))
                    """, logger: logger)
            }
            for e in copy.outbox {
                try await c.query("""
                    INSERT INTO outbox (\(unescaped: Self.outboxColumns))
                    VALUES (\(e.seq), \(e.eventId.uuidString.lowercased()), \(e.target), \(e.kind.rawValue), \(e.deviceId),
                            \(String(decoding: e.payload, as: UTF8.self)), \(Self.ms(e.createdAt)), \(Int32(clamping: e.attempts)),
                            \(Self.ms(e.nextAttemptAt)), \(e.state.rawValue), \(e.lastError), \(e.deliveredAt.map(Self.ms)))
                    """, logger: logger)
            }
            // The copied IDs were given explicitly: new rows continue after them.
            for (table, column) in [("rentals", "id"), ("device_log", "id"), ("outbox", "seq")] {
                try await c.query(PostgresQuery(unsafeSQL: """
                    SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), COALESCE((SELECT MAX(\(column)) FROM \(table)), 0) + 1, false)
                    """), logger: logger)
            }
            var counts: [String: Int] = [:]
            for table in copy.counts.keys { counts[table] = try await Self.count(c, table, logger: logger) }
            try InventoryCopy.check(counts, against: copy)
            return counts
        }
    }

    private static func count(_ c: PostgresConnection, _ table: String, logger: Logger) async throws -> Int {
        Int(try await rows(c, PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \(table)"), logger: logger) {
            try $0[0].decode(Int64.self)
        }.first ?? 0)
    }

    private static func ms(_ date: Date) -> Int64 { StoreConventions.millis(date) }
}
