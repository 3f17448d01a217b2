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
        let queue = try DatabaseQueue(path: dir.database)
        try Schema.migrator.migrate(queue, upTo: "v3")
        try await queue.write { db in
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
        try queue.close()

        let store = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? store.close() }
        #expect(try await store.diagnostics().appliedMigrations.contains("v4"))
        let old = try #require(try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.first)
        #expect(old.lentBy == nil && old.returnedBy == "U-1")
        #expect(try await store.deviceLog(deviceId: "D-1", page: .first).items.map(\.actor) == [nil])

        let rental = try await store.lend(LendRequest(deviceId: "D-1", userId: "U-1", at: at(10), lentBy: .unixUser("alice")))
        #expect(rental.lentBy == "unix:alice")
        let returned = try await store.returnDevice(ReturnRequest(deviceId: "D-1", at: at(20),
                                                                  returnedBy: .signedIn("Ada Admin", via: "roombridge-web")))
        #expect(returned.returnedBy == "web:Ada Admin via unix:roombridge-web")
        let stored = try #require(try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.first)
        #expect(stored.lentBy == "unix:alice" && stored.returnedBy == "web:Ada Admin via unix:roombridge-web")

        var device = try #require(try await store.device(id: "D-1")).device
        device.status = .broken
        let changes = try await store.updateDevice(device, at: at(30), by: .user("U-1"))
        #expect(changes.map(\.actor) == ["U-1"])
        try await store.deleteDevice(id: "D-1", at: at(40), by: .unixUser("root"))
        let log = try await store.deviceLog(deviceId: "D-1", page: .first).items
        #expect(log.filter { $0.operation == .delete }.allSatisfy { $0.actor == "unix:root" })
        #expect(log.first { $0.field == "status" && $0.operation == .update }?.actor == "U-1")
    }
}
