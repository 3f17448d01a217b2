import Foundation
import GRDB
import Lending
import LendingStore
@testable import PostgresStore
import Testing

@Suite("Lending, returning, history and overdue (SQLite and PostgreSQL)")
struct RentalTests {
    @Test(arguments: Backend.all) func lendReturnAndHistorySurvivingDeletion(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 2)
        defer { fixture.close() }
        let store = fixture.store

        let rental = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(3600), location: "room-1"))
        #expect(rental.model == "Model D-001" && rental.serialNumber == "SN-D-001" && rental.userName == "User 1")
        #expect(rental.isActive && rental.dueAt == at(3600) && rental.location == "room-1")
        #expect(try await store.device(id: "D-001")?.activeRental == rental)

        await #expect(throws: LendingError.alreadyLent("D-001", userId: "U-1", userName: "User 1", since: at(0))) {
            try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(1)))
        }
        await #expect(throws: LendingError.noSuchUser("U-9")) {
            try await store.lend(LendRequest(deviceId: "D-002", userId: "U-9", at: at(1)))
        }
        await #expect(throws: LendingError.noSuchDevice("D-9")) {
            try await store.lend(LendRequest(deviceId: "D-9", userId: "U-1", at: at(1)))
        }
        await #expect(throws: LendingError.self) {
            try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(10), dueAt: at(5)))
        }
        await #expect(throws: LendingError.deviceIsLent("D-001", userId: "U-1")) { try await store.deleteDevice(id: "D-001", at: at(2)) }
        await #expect(throws: LendingError.userHasDevices("U-1", deviceIds: ["D-001"])) { try await store.deleteUser(id: "U-1") }

        var broken = makeDevice("D-002")
        broken.status = .broken
        try await store.updateDevice(broken, at: at(3))
        await #expect(throws: LendingError.notLendable("D-002", status: .broken)) {
            try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(4)))
        }

        let returned = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(60), returnedBy: .user("U-2"), location: "room-2"))
        #expect(returned.returnedAt == at(60) && returned.returnedBy == "U-2" && returned.returnLocation == "room-2")
        await #expect(throws: LendingError.notLent("D-001")) { try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(61))) }
        await #expect(throws: LendingError.noSuchDevice("D-9")) { try await store.returnDevice(ReturnRequest(deviceId: "D-9", at: at(61))) }

        // A reader whose clock is behind never records a return before the lend.
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(100)))
        let early = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(90)))
        #expect(early.returnedAt == at(100))

        // History survives deleting both the device and the user.
        try await store.deleteDevice(id: "D-001", at: at(200))
        try await store.deleteUser(id: "U-1")
        let history = try await store.history(HistoryQuery(deviceId: "D-001"), page: .first).items
        #expect(history.map(\.userName) == ["User 2", "User 1"])
        #expect(history.allSatisfy { $0.model == "Model D-001" && $0.serialNumber == "SN-D-001" })
        #expect(try await store.history(HistoryQuery(userId: "U-1"), page: .first).items == [returned])
    }

    @Test(arguments: Backend.all) func historyRangesAndCursors(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 3, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        let day: TimeInterval = 86400
        // 40 days: each day U-1 borrows D-001 for an hour, U-2 borrows D-002.
        for d in 0..<40 {
            for (device, user) in [("D-001", "U-1"), ("D-002", "U-2")] {
                _ = try await store.lend(LendRequest(deviceId: device, userId: user, at: at(Double(d) * day)))
                _ = try await store.returnDevice(ReturnRequest(deviceId: device, at: at(Double(d) * day + 3600)))
            }
        }
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-1", at: at(41 * day)))

        let month = HistoryQuery(userId: "U-1", since: at(10 * day), until: at(40 * day))
        let all = try await store.allHistory(month, pageSize: 7)
        #expect(all.count == 30)
        #expect(all.allSatisfy { $0.userId == "U-1" && $0.rentedAt >= at(10 * day) && $0.rentedAt < at(40 * day) })
        #expect(all.map(\.rentedAt) == all.map(\.rentedAt).sorted(by: >))
        #expect(Set(all.map(\.id)).count == 30)

        #expect(try await store.history(HistoryQuery(userId: "U-1"), page: .first).items.count == 41)
        #expect(try await store.history(HistoryQuery(userId: "U-1", includeActive: false), page: .first).items.count == 40)
        let active = try await store.activeRentals(userId: "U-1", page: .first).items
        #expect(active.map(\.deviceId) == ["D-003"])
        #expect(try await store.activeRentals(userId: "U-2", page: .first).items.isEmpty)
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-2", at: at(42 * day)))
        let everyone = try await store.activeRentals(userId: nil, page: PageRequest(limit: 1))
        let next = try await store.activeRentals(userId: nil, page: PageRequest(limit: 1, cursor: everyone.nextCursor))
        #expect((everyone.items + next.items).map(\.deviceId) == ["D-003", "D-002"] && next.nextCursor == nil)
    }

    @Test(arguments: Backend.all) func overdueUsesDueDates(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 5, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(100)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(0), dueAt: at(50)))
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-1", at: at(0), dueAt: at(500)))
        _ = try await store.lend(LendRequest(deviceId: "D-004", userId: "U-1", at: at(0)))  // open-ended
        _ = try await store.lend(LendRequest(deviceId: "D-005", userId: "U-1", at: at(0), dueAt: at(10)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-005", at: at(20)))

        let overdue = try await store.overdueRentals(at: at(200), page: .first)
        #expect(overdue.items.map(\.deviceId) == ["D-002", "D-001"])  // most overdue first
        #expect(overdue.items.allSatisfy { $0.isOverdue(at: at(200)) })
        let paged = try await store.overdueRentals(at: at(1000), page: PageRequest(limit: 2))
        let rest = try await store.overdueRentals(at: at(1000), page: PageRequest(limit: 2, cursor: paged.nextCursor))
        #expect((paged.items + rest.items).map(\.deviceId) == ["D-002", "D-001", "D-003"])
        #expect(try await store.overdueRentals(at: at(50), page: .first).items.isEmpty)  // due at 50 is not yet overdue
    }

    @Test(arguments: Backend.all) func uniqueIndexRefusesASecondActiveRentalThroughRawSQL(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))

        let insert = """
            INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at)
            VALUES ('D-001', 'm', 'o', 's', 'U-2', 'User 2', 5)
            """
        await #expect {
            try await fixture.execute(insert)
        } throws: { error in
            // SQLite: SQLITE_CONSTRAINT_UNIQUE; PostgreSQL: unique_violation.
            (error as? DatabaseError)?.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
                || PostgresInventoryStore.serverError(error)?.state == "23505"
        }
        // Re-opening a returned rental while another is open is refused too.
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(10)))
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(20)))
        await #expect(throws: (any Error).self) { try await fixture.execute("UPDATE rentals SET returned_at = NULL") }
        // A returned rental beside an active one is fine, and deleting a lent device is refused by a trigger.
        await #expect(throws: (any Error).self) { try await fixture.execute("DELETE FROM devices WHERE id = 'D-001'") }
        #expect(try await fixture.count("SELECT COUNT(*) FROM rentals WHERE returned_at IS NULL") == 1)
    }

    @Test(arguments: Backend.all) func csvExportOfStoredHistory(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 0)
        defer { fixture.close() }
        let store = fixture.store
        try await store.addUser(User(id: "U-1", name: "Tanaka, \"Ken\"", registeredAt: base))
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: Date(timeIntervalSince1970: 1_767_225_600)))
        let csv = RentalExport.csv(try await store.allHistory(HistoryQuery()))
        let lines = csv.components(separatedBy: "\r\n")
        #expect(lines.count == 3 && lines[2] == "")
        #expect(lines[1] == "1,D-001,Model D-001,1.0,SN-D-001,U-1,\"Tanaka, \"\"Ken\"\"\",2026-01-01 00:00:00,,,,,,,")
    }
}

/// What only SQLite's store does: its query plans.
@Suite("SQLite query plans")
struct SQLitePlanTests {
    @Test func lookupsUseIndexes() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await seededStore(dir).close()
        let raw = try DatabaseQueue(path: dir.database)
        defer { try? raw.close() }
        func plan(_ sql: String) throws -> String {
            try raw.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }.joined(separator: " | ")
            }
        }
        let whoHas = try plan("SELECT * FROM rentals r WHERE r.device_id = 'D-1' AND r.returned_at IS NULL")
        #expect(whoHas.contains("rentals_one_active_per_device"), "\(whoHas)")
        let userHas = try plan("""
            SELECT * FROM rentals r INDEXED BY rentals_active_by_user
            WHERE r.returned_at IS NULL AND r.user_id = 'U-1' ORDER BY r.rented_at, r.id
            """)
        #expect(userHas.contains("rentals_active_by_user") && !userHas.contains("TEMP B-TREE"), "\(userHas)")
        let month = try plan("""
            SELECT * FROM rentals r WHERE r.user_id = 'U-1' AND r.rented_at >= 1 AND r.rented_at < 2
            AND (r.rented_at, r.id) < (5, 5) ORDER BY r.rented_at DESC, r.id DESC LIMIT 100
            """)
        #expect(month.contains("rentals_by_user") && !month.contains("TEMP B-TREE"), "\(month)")
    }
}
