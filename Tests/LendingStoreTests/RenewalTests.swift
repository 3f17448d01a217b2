import Foundation
import GRDB
import Lending
@testable import LendingStore
import Testing

/// Renewals (the rental goes on with a new due date) and return notes (schema v5).
@Suite("Renew and return note (SQLite and PostgreSQL)")
struct RenewalTests {
    @Test(arguments: Backend.all) func renewMovesTheDueDateOfTheSameRentalAndLogsIt(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        let lent = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(100)))

        let renewed = try await store.renew(deviceId: "D-001", dueAt: at(1000), at: at(50), by: .unixUser("alice"))
        #expect(renewed.id == lent.id && renewed.dueAt == at(1000) && renewed.isActive && renewed.rentedAt == at(0))
        // Not a return and a new lend: still one rental, active, with the new due date.
        let history = try await store.history(HistoryQuery(deviceId: "D-001"), page: .first).items
        #expect(history.count == 1 && history[0].id == lent.id && history[0].dueAt == at(1000) && history[0].returnedAt == nil)
        #expect(try await store.overdueRentals(at: at(500), page: .first).items.isEmpty)
        let log = try await store.deviceLog(deviceId: "D-001", page: .first).items
        let entry = try #require(log.first { $0.field == "dueAt" })
        #expect(entry.operation == .update && entry.actor == "unix:alice" && entry.at == at(50))
        #expect(entry.oldValue == LendingFormat.iso8601(at(100)) && entry.newValue == LendingFormat.iso8601(at(1000)))

        await #expect(throws: LendingError.notLent("D-002")) {
            try await store.renew(deviceId: "D-002", dueAt: at(1000), at: at(60), by: nil)
        }
        await #expect(throws: LendingError.noSuchDevice("D-9")) {
            try await store.renew(deviceId: "D-9", dueAt: at(1000), at: at(60), by: nil)
        }
        // A due date in the past is refused and changes nothing.
        await #expect(throws: LendingError.self) {
            try await store.renew(deviceId: "D-001", dueAt: at(40), at: at(60), by: nil)
        }
        #expect(try await store.device(id: "D-001")?.activeRental?.dueAt == at(1000))
    }

    @Test(arguments: Backend.all) func aReturnNoteIsKeptAndCanMarkTheDeviceBrokenInTheSameStep(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(0)))

        let cracked = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(10), returnedBy: .user("U-1"),
                                                                 note: "cracked screen", markBroken: true))
        #expect(cracked.returnNote == "cracked screen")
        #expect(try await store.device(id: "D-001")?.device.status == .broken)
        let statusChange = try #require(try await store.deviceLog(deviceId: "D-001", page: .first).items.first { $0.field == "status" })
        #expect(statusChange.oldValue == "normal" && statusChange.newValue == "broken" && statusChange.actor == "U-1")

        let fine = try await store.returnDevice(ReturnRequest(deviceId: "D-002", at: at(10), note: "all good"))
        #expect(try await store.device(id: "D-002")?.device.status == .normal)
        let history = try await store.history(HistoryQuery(), page: .first).items
        #expect(Set(history.compactMap(\.returnNote)) == ["cracked screen", "all good"] && fine.returnNote == "all good")
        let csv = RentalExport.csv(history)
        #expect(csv.hasPrefix(RentalExport.csvHeader.joined(separator: ",")) && csv.contains(",cracked screen\r\n"))
    }

    @Test(arguments: Backend.all) func aBadNoteChangesNothing(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        for note in [String(repeating: "x", count: Validation.maximumNoteLength + 1), "bell\u{07}"] {
            await #expect(throws: LendingError.self) {
                try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(10), note: note, markBroken: true))
            }
        }
        let record = try #require(try await store.device(id: "D-001"))
        #expect(record.activeRental != nil && record.device.status == .normal)
        // Line breaks are part of a note.
        let returned = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(10), note: "screen cracked\nbattery swollen"))
        #expect(returned.returnNote == "screen cracked\nbattery swollen")
    }
}

/// What only SQLite's store has: databases written by its earlier schemas.
@Suite("Return note: SQLite migration")
struct SQLiteReturnNoteMigrationTests {
    /// A database written by the previous schema (v4) keeps its rentals (no note) and records
    /// notes from then on.
    @Test func aVersion4DatabaseMigratesAndKeepsNotes() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await databaseAtSchema("v4", in: dir) { db in
            try db.execute(sql: """
                INSERT INTO users (id, name, registered_at) VALUES ('U-1', 'Ada', 0);
                INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type, registered_at)
                    VALUES ('D-1', 'iphone', 'iPhone 15', 'SN1', '18', 'normal', 'USB-C', 0);
                INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at, returned_by, lent_by)
                    VALUES ('D-1', 'iPhone 15', '18', 'SN1', 'U-1', 'Ada', 0, 1000, 'U-1', 'U-1');
                """)
        }

        let store = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? store.close() }
        #expect(try await store.diagnostics().appliedMigrations.contains("v5"))
        let old = try #require(try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.first)
        #expect(old.returnNote == nil && old.lentBy == "U-1")
        _ = try await store.lend(LendRequest(deviceId: "D-1", userId: "U-1", at: at(10)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-1", at: at(20), note: "scratched"))
        let notes = try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.map(\.returnNote)
        #expect(notes == ["scratched", nil])
    }
}
