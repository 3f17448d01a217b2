import Foundation
import GRDB
import Lending
@testable import LendingStore
import Testing

/// Schema v4: who lent, who returned, who changed a device.
@Suite struct ActorMigrationTests {
    /// A database written by the previous schema (v3) keeps its rows (no actor known) and
    /// records actors from then on.
    @Test func aVersion3DatabaseMigratesAndRecordsActors() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await databaseAtSchema("v3", in: dir) { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, registered_at) VALUES ('U-1', 'Ada', 0);
                INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type, registered_at)
                    VALUES ('D-1', 'iphone', 'iPhone 15', 'SN1', '18', 'normal', 'USB-C', 0);
                INSERT INTO device_log (device_id, operation, field, old_value, new_value, at)
                    VALUES ('D-1', 'add', 'model', NULL, 'iPhone 15', 0);
                INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at, returned_by)
                    VALUES ('D-1', 'iPhone 15', '18', 'SN1', 'U-1', 'Ada', 0, 1000, 'U-1');
                """)
        }

        let store = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? store.close() }
        #expect(try await store.diagnostics().appliedMigrations.contains("v4"))
        let old = try #require(try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.first)
        #expect(old.lentBy == nil && old.returnedBy == "U-1")
        #expect(try await store.deviceLog(deviceId: "D-1", page: .first).items.map(\.actor) == [nil])

        // From then on actors are recorded (ActorTests checks how, on both backends).
        let rental = try await store.lend(LendRequest(deviceId: "D-1", userId: "U-1", at: at(10), lentBy: .unixUser("alice")))
        #expect(rental.lentBy == "unix:alice")
    }
}

/// Schema v9 (reminders): the outbox table is rebuilt for its wider CHECK; its rows, their state
/// and its numbering stay.
@Suite struct OutboxMigrationTests {
    @Test func aVersion8OutboxKeepsItsEntriesAndNumbering() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await databaseAtSchema("v8", in: dir) { db in
            for seq in 1...3 {
                try db.execute(sql: """
                    INSERT INTO outbox (event_id, target, kind, device_id, payload, created_at, next_attempt_at, state)
                    VALUES (?, 'hook', 'lend', 'D-1', '{}', 0, 0, ?)
                    """, arguments: [UUID().uuidString.lowercased(), seq == 1 ? "delivered" : "pending"])
            }
            try db.execute(sql: "DELETE FROM outbox WHERE seq = 3")  // pruned: 3 was handed out
        }

        let store = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? store.close() }
        #expect(try await store.diagnostics().appliedMigrations.contains("v9"))
        #expect(try await store.outboxCounts() == [OutboxCounts(target: "hook", pending: 1, delivered: 1)])
        let schedule = ReminderSchedule(digestAt: 0, timeZone: TimeZone(secondsFromGMT: 0)!)
        #expect(try await store.sendReminders([.digest], schedule: schedule, routes: [OutboxRoute(target: "hook")], now: at(0)) == 1)
        let seqs = try await store.outboxEntries(state: nil, page: .first).items.map(\.seq)
        #expect(seqs == [4, 2, 1])
    }
}

/// Version 10: devices bound before it are NFC-registered after it.
@Suite struct NFCRegistrationMigrationTests {
    @Test func aDeviceBoundBeforeVersion10IsRegisteredAfterIt() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await databaseAtSchema("v9", in: dir) { db in
            try db.execute(sql: "INSERT INTO device_groups (id, name, sort_order) VALUES ('g', 'G', 0)")
            for id in ["D-1", "D-2"] {
                try db.execute(sql: """
                    INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type, registered_at, note, is_nfc_registered)
                    VALUES (?, 'g', 'M', 'S', '1', 'normal', 'USB-C', 0, NULL, 0)
                    """, arguments: [id])
            }
            try db.execute(sql: "INSERT INTO tag_bindings (uid, device_id, bound_at) VALUES ('04A1B2C3D4E5F6', 'D-1', 0)")
        }
        let store = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? store.close() }
        #expect(try await store.diagnostics().appliedMigrations.contains("v10"))
        #expect(try await store.device(id: "D-1")?.device.isNFCRegistered == true)
        #expect(try await store.device(id: "D-2")?.device.isNFCRegistered == false)
    }
}
