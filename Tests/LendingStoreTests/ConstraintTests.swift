import Foundation
import GRDB
import Lending
@testable import LendingStore
import Testing

/// The schema, not a second copy of the rules, keeps "one active rental per device" and "only a
/// normal device is lent"; the store maps what it refuses to `LendingError`.
@Suite("Schema constraints (SQLite and PostgreSQL)")
struct ConstraintTests {
    @Test(arguments: Backend.all) func rawSQLCannotLendADeviceThatIsNotNormal(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1)
        defer { fixture.close() }
        var broken = makeDevice("D-001")
        broken.status = .broken
        try await fixture.store.updateDevice(broken, at: at(1))

        let insert = """
            INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at)
            VALUES ('D-001', 'm', 'o', 's', 'U-1', 'User 1', 0)
            """
        await #expect(throws: (any Error).self) { try await fixture.execute(insert) }
        #expect(try await fixture.count("SELECT COUNT(*) FROM rentals") == 0)
        await #expect(throws: LendingError.notLendable("D-001", status: .broken)) {
            try await fixture.store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(2)))
        }
    }

    @Test(arguments: Backend.all) func aLentDeviceThatBrokeIsReportedAsLent(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1)
        defer { fixture.close() }
        let store = fixture.store
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        var broken = makeDevice("D-001")
        broken.status = .broken
        try await store.updateDevice(broken, at: at(1))
        await #expect(throws: LendingError.alreadyLent("D-001", userId: "U-1", userName: "User 1", since: at(0))) {
            try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(2)))
        }
    }

    /// A database written by the previous schema (v2) gains the constraint and keeps its data.
    @Test func aVersion2DatabaseMigrates() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await databaseAtSchema("v2", in: dir) { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, registered_at) VALUES ('U-1', 'Ada', 0);
                INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type, registered_at)
                    VALUES ('D-1', 'iphone', 'iPhone 15', 'SN1', '18', 'disposed', 'USB-C', 0),
                           ('D-2', 'iphone', 'iPhone 16', 'SN2', '18', 'normal', 'USB-C', 0);
                INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at)
                    VALUES ('D-1', 'iPhone 15', '18', 'SN1', 'U-1', 'Ada', 0, 1000);
                """)
        }

        let store = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? store.close() }
        #expect(try await store.diagnostics().appliedMigrations == SQLiteInventoryStore.knownMigrations)
        #expect(try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.count == 1)
        await #expect(throws: LendingError.notLendable("D-1", status: .disposed)) {
            try await store.lend(LendRequest(deviceId: "D-1", userId: "U-1", at: at(0)))
        }
        let rental = try await store.lend(LendRequest(deviceId: "D-2", userId: "U-1", at: at(0)))
        #expect(rental.model == "iPhone 16" && rental.userName == "Ada")
    }
}
