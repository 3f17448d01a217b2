import Foundation
import GRDB
import Lending
import LendingStore
import Testing

@Suite("Opening and migrating the database")
struct OpeningTests {
    @Test func createsDirectoryAndMigratesAnEmptyFile() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path + "/var/lib/roombridge/roombridge.sqlite"
        let store = try await SQLiteInventoryStore.open(config(path))
        defer { try? store.close() }
        #expect(FileManager.default.fileExists(atPath: path))
        let diagnostics = try await store.diagnostics()
        #expect(diagnostics.journalMode == "wal")
        #expect(diagnostics.synchronous == 2)  // FULL
        #expect(diagnostics.foreignKeys)
        #expect(diagnostics.appliedMigrations == SQLiteInventoryStore.knownMigrations)
        #expect(try await store.groups() == DeviceGroup.defaults)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.path + "/var/lib/roombridge")
        #expect((attributes[.posixPermissions] as? Int) == 0o750)
    }

    @Test func reopeningIsANoOp() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let first = try await seededStore(dir)
        try first.close()
        let second = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? second.close() }
        #expect(try await second.device(id: "D-001")?.device.model == "Model D-001")
    }

    /// Without the retry in `migrate`, about one round in three failed with "table devices
    /// already exists".
    @Test(arguments: 1...6)
    func daemonsStartingTogetherOnAFreshFileBothMigrate(round: Int) async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let stores = try await withThrowingTaskGroup(of: SQLiteInventoryStore.self) { group in
            for _ in 0..<4 { group.addTask { try await SQLiteInventoryStore.open(config(dir.database)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stores.count == 4)
        for store in stores {
            #expect(try await store.diagnostics().appliedMigrations == SQLiteInventoryStore.knownMigrations)
            try store.close()
        }
    }

    @Test func upgradesTheVersion1Fixture() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let queue = try DatabaseQueue(path: dir.database)
        try await queue.write { db in try db.execute(sql: schemaV1FixtureSQL) }
        try queue.close()

        let store = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? store.close() }
        #expect(try await store.diagnostics().appliedMigrations == SQLiteInventoryStore.knownMigrations)

        // Free-text groups became groups with stable IDs.
        let d1 = try #require(try await store.device(id: "D-1"))
        #expect(d1.device.groupId == "Androidスマホ")
        #expect(d1.device.isNFCRegistered)
        #expect(try await store.groups().contains { $0.id == "Androidスマホ" })
        // "Lent" is derived from rentals now.
        #expect(d1.activeRental?.userName == "Suzuki")
        #expect(d1.device.status == .normal)  // was 正常
        #expect(try await store.device(id: "D-3")?.device.status == .broken)  // was 故障
        // An unknown status is not lendable until someone looks; the original text is in the log.
        #expect(try await store.device(id: "D-4")?.device.status == .broken)
        let d4Log = try await store.deviceLog(deviceId: "D-4", page: .first).items
        #expect(d4Log.map(\.oldValue) == ["紛失"] && d4Log.map(\.newValue) == ["broken"])
        #expect(try await store.deviceLog(deviceId: "D-1", page: .first).items.map(\.oldValue) == ["正常"])
        #expect(try await store.device(id: "D-3")?.isLent == false)
        // The two open rentals of D-2: the newest stays open, the older is closed when it was lent again.
        let d2 = try await store.history(HistoryQuery(deviceId: "D-2"), page: .first).items
        #expect(d2.count == 2)
        #expect(d2[0].userId == "U-2" && d2[0].isActive)
        #expect(d2[1].userId == "U-1" && d2[1].returnedAt == d2[0].rentedAt)
        #expect(d2[1].returnLocation?.contains("migration") == true)
        // Log and users survive; a missing registration date became the epoch.
        let log = try await store.deviceLog(deviceId: "D-2", page: .first).items
        #expect(log.map(\.field) == ["osVersion"])
        #expect(log.first?.operation == .update)
        #expect(try await store.user(id: "U-2")?.registeredAt == Date(timeIntervalSince1970: 0))
        // The v2 invariants hold on the upgraded file.
        await #expect(throws: LendingError.self) {
            try await store.lend(LendRequest(deviceId: "D-2", userId: "U-1", at: at(0)))
        }
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-1", at: at(0)))
        let rental = try await store.lend(LendRequest(deviceId: "D-1", userId: "U-1", at: at(1), dueAt: at(100)))
        #expect(rental.dueAt == at(100))
    }

    @Test func refusesADatabaseFromANewerBinaryWithoutTouchingIt() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await seededStore(dir).close()
        let queue = try DatabaseQueue(path: dir.database)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v3-badges-v2')") }
        try queue.close()
        let before = try #require(fileBytes(dir.database))

        await #expect(throws: StoreOpenError.newerThanBinary(path: dir.database, unknownMigrations: ["v3-badges-v2"])) {
            try await SQLiteInventoryStore.open(config(dir.database))
        }
        #expect(fileBytes(dir.database) == before)
        let message = StoreOpenError.newerThanBinary(path: "p", unknownMigrations: ["v3"]).description
        #expect(message.contains("upgrade roombridged"))
    }

    @Test func refusesGarbageWithoutTouchingIt() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: dir.database))
        await #expect {
            try await SQLiteInventoryStore.open(config(dir.database))
        } throws: { error in
            guard case StoreOpenError.corrupt = error else { return false }
            return true
        }
        #expect(fileBytes(dir.database) == garbage)
        #expect(!FileManager.default.fileExists(atPath: dir.database + "-wal"))
    }

    @Test func refusesADamagedDatabase() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir, devices: 300)
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: dir.database + "-wal"))  // checkpointed at close
        // Overwrite pages 2… with garbage, keeping the valid header page.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: dir.database))
        let pageSize = 4096
        let size = try handle.seekToEnd()
        #expect(size > UInt64(pageSize * 4))
        try handle.seek(toOffset: UInt64(pageSize))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - pageSize * 2))
        try handle.close()
        let before = fileBytes(dir.database)

        await #expect {
            try await SQLiteInventoryStore.open(config(dir.database))
        } throws: { error in
            guard case StoreOpenError.corrupt = error else { return false }
            return true
        }
        #expect(fileBytes(dir.database) == before)
    }

    @Test func refusesAForeignDatabase() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let queue = try DatabaseQueue(path: dir.database)
        try await queue.write { db in try db.execute(sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY)") }
        try queue.close()
        await #expect {
            try await SQLiteInventoryStore.open(config(dir.database))
        } throws: { error in
            guard case StoreOpenError.foreignDatabase = error else { return false }
            return true
        }
    }

    @Test func refusesAnUnwritableFile() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await seededStore(dir).close()
        let undo = try makeUnwritable(dir.database)
        defer { undo() }
        await #expect {
            try await SQLiteInventoryStore.open(config(dir.database))
        } throws: { error in
            guard case StoreOpenError.notWritable(let path, _) = error else { return false }
            return path == dir.database
        }
    }

    @Test func refusesAnUnwritableDirectory() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try await seededStore(dir).close()
        let undo = try makeUnwritable(dir.path)
        defer { undo() }
        await #expect {
            try await SQLiteInventoryStore.open(config(dir.database))
        } throws: { error in
            guard case StoreOpenError.notWritable(let path, _) = error else { return false }
            return path == dir.path
        }
        await #expect {
            try await SQLiteInventoryStore.open(config(dir.path + "/sub/dir/db.sqlite"))
        } throws: { error in
            guard case StoreOpenError.cannotCreateDirectory = error else { return false }
            return true
        }
    }
}
