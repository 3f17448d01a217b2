import Foundation
import GRDB
import Lending
@testable import LendingStore
import Synchronization
import Testing

/// Empties the root page of `index` in a closed database file (a valid, empty index leaf), the
/// kind of damage `quick_check` does not see because it never compares an index with its table.
func emptyIndexPage(_ index: String, in path: String) throws {
    let queue = try DatabaseQueue(path: path)
    let (root, pageSize) = try queue.read { db in
        (try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [index]) ?? 0,
         try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
    }
    try queue.close()
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64((root - 1) * pageSize))
    // B-tree page header: leaf index page (0x0A), no freeblock, no cells, content at the end.
    try handle.write(contentsOf: Data([0x0A, 0, 0, 0, 0, UInt8(pageSize >> 8 & 0xFF), UInt8(pageSize & 0xFF), 0]))
}

/// Replaces `old` with `new` (same length) in every leaf page of the named indexes of a closed
/// database file, as a flipped byte on disk would; returns how many indexes had it.
func replaceInIndexPages(_ indexes: [String], of path: String, _ old: [UInt8], with new: [UInt8]) throws -> Int {
    let queue = try DatabaseQueue(path: path)
    let (pages, pageSize) = try queue.read { db in
        (try Row.fetchAll(db, sql: """
            SELECT name, pageno FROM dbstat WHERE name IN (\(indexes.map { _ in "?" }.joined(separator: ","))) AND pagetype = 'leaf'
            """, arguments: StatementArguments(indexes)).map { ($0["name"] as String, $0["pageno"] as Int) },
         try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
    }
    try queue.close()
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var hit = Set<String>()
    for (name, page) in pages {
        let offset = UInt64((page - 1) * pageSize)
        try handle.seek(toOffset: offset)
        var bytes = [UInt8](try handle.read(upToCount: pageSize) ?? Data())
        var changed = false
        var i = 0
        while i + old.count <= bytes.count {
            if Array(bytes[i..<i + old.count]) == old {
                bytes.replaceSubrange(i..<i + old.count, with: new)
                changed = true
            }
            i += 1
        }
        if changed {
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data(bytes))
            hit.insert(name)
        }
    }
    return hit.count
}

/// The store as the daemon opens it (quick check at open).
func quickConfig(_ path: String) -> StoreConfiguration {
    StoreConfiguration(path: path, busyTimeout: 10, integrityCheck: .quick)
}

@Suite("Store health: damaged indexes, a full disk, bad IDs, refused files")
struct HealthTests {
    /// A store with D-001 lent to U-1 whose unique index of active rentals is then damaged.
    func damagedStore(_ dir: TempDir) async throws -> SQLiteInventoryStore {
        let store = try await seededStore(dir)
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        try store.close()
        try emptyIndexPage("rentals_one_active_per_device", in: dir.database)
        return try await SQLiteInventoryStore.open(quickConfig(dir.database))
    }

    @Test func aDamagedUniqueIndexNeverLendsTwice() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await damagedStore(dir)  // quick_check passes
        defer { try? store.close() }
        await #expect {
            try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(60)))
        } throws: { error in
            guard case LendingError.storageCorrupt(_, let detail) = error else { return false }
            return detail.contains("D-001")
        }
        // Writes are refused from now on, reads still work, and D-001 is still U-1's only.
        await #expect(throws: LendingError.self) {
            try await store.addUser(User(id: "U-9", name: "Nine", registeredAt: base))
        }
        let history = try await store.history(HistoryQuery(deviceId: "D-001"), page: .first).items
        #expect(history.filter { $0.returnedAt == nil }.map(\.userId) == ["U-1"])
        #expect(try await store.activeRentals(userId: nil, page: .first).items.count == 1)
    }

    /// Issue 33: D-001 lent to U-1 behind 20,000 returned rentals of D-002, then `D-001` turned
    /// into `D-000` in the leaf pages of both indexes the lend trusts (found with dbstat). Writes
    /// are refused from the moment the store opens, before any full check has run: the lend
    /// that came "as soon as the socket accepts" does not become a second active rental.
    @Test func indexDamageFoundAtOpenRefusesTheFirstWrite() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        try await store.pool.write { db in
            let insert = try db.makeStatement(sql: """
                INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at)
                VALUES ('D-002', 'Model D-002', '1.0', 'SN-D-002', 'U-2', 'User 2', ?, ?)
                """)
            for n in 0..<20_000 { try insert.execute(arguments: [n * 10, n * 10 + 5]) }
        }
        try store.close()
        let damaged = try replaceInIndexPages(["rentals_one_active_per_device", "rentals_by_device"],
                                              of: dir.database, Array("D-001".utf8), with: Array("D-000".utf8))
        #expect(damaged == 2)

        let reopened = try await SQLiteInventoryStore.open(quickConfig(dir.database))  // quick_check passes
        defer { try? reopened.close() }
        let refusal = try #require(reopened.writeRefusal)
        #expect(refusal.description.contains("rentals_one_active_per_device"))
        await #expect(throws: refusal) {
            try await reopened.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(300_000)))
        }
        let active = try await reopened.pool.read { db in
            try String.fetchAll(db, sql: "SELECT user_id FROM rentals NOT INDEXED WHERE device_id = 'D-001' AND returned_at IS NULL")
        }
        #expect(active == ["U-1"])
        // The operator hears of it as soon as the daemon listens for health events.
        let events = Mutex<[StoreHealthEvent]>([])
        reopened.observeHealth { event in events.withLock { $0.append(event) } }
        #expect(events.withLock { $0 } == [.integrityFailed(refusal)])
    }

    @Test func aSoundDatabaseWithManyRentalsOpensForWrites() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(0)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-002", at: at(60)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-2", at: at(120)))
        try store.close()
        let reopened = try await SQLiteInventoryStore.open(quickConfig(dir.database))
        defer { try? reopened.close() }
        #expect(reopened.writeRefusal == nil)
        _ = try await reopened.lend(LendRequest(deviceId: "D-003", userId: "U-2", at: at(180)))
    }

    @Test func theFullCheckFindsIndexOnlyDamageAndRefusesWrites() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await damagedStore(dir)
        defer { try? store.close() }
        let events = Mutex<[StoreHealthEvent]>([])
        store.observeHealth { event in events.withLock { $0.append(event) } }
        let failure = try #require(try await store.checkIntegrity())
        guard case .storageCorrupt(let path, let detail) = failure else {
            Issue.record("unexpected \(failure)")
            return
        }
        #expect(path == dir.database)
        #expect(detail.contains("rentals_one_active_per_device"))
        #expect(failure.description.contains("REINDEX") && failure.description.contains("backup"))
        #expect(store.writeRefusal == failure)
        await #expect(throws: failure) {
            try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(60)))
        }
        #expect(try await store.device(id: "D-002") != nil)
        #expect(events.withLock { $0 } == [.integrityFailed(failure)])
    }

    @Test func aSoundDatabasePassesTheFullCheck() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        defer { try? store.close() }
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        #expect(try await store.checkIntegrity() == nil)
        #expect(store.writeRefusal == nil)
    }

    /// SQLite reports a database at its `max_page_count` as SQLITE_FULL, as it does ENOSPC
    /// (the integration test fills a real tmpfs).
    @Test func aFullDiskIsStorageFullAndReportedOncePerEpisode() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        defer { try? store.close() }
        let events = Mutex<[StoreHealthEvent]>([])
        store.observeHealth { event in events.withLock { $0.append(event) } }
        try await store.pool.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        let big = String(repeating: "x", count: 20000)
        func bigDevice(_ n: Int) -> Device {
            var device = makeDevice("D-big-\(n)")
            device.note = big  // a note is free text of any length
            return device
        }
        for n in 1...3 {
            await #expect(throws: LendingError.storageFull(directory: dir.path)) {
                try await store.addDevice(bigDevice(n), at: base)
            }
        }
        #expect(try await store.device(id: "D-big-1") == nil, "nothing was recorded")
        #expect(LendingError.storageFull(directory: dir.path).description.contains("is full"))
        try await store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        try await store.addDevice(bigDevice(4), at: base)
        #expect(events.withLock { $0 } == [.diskFull(directory: dir.path), .diskSpaceAvailable(directory: dir.path)])
    }

    @Test(arguments: ["a\u{0}b", "\u{0}", "line\nbreak", "esc\u{1B}[31m", "del\u{7F}"])
    func idsWithControlCharactersAreRefused(id: String) async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        defer { try? store.close() }
        await #expect(throws: LendingError.self) { try await store.addUser(User(id: id, name: "N", registeredAt: base)) }
        await #expect(throws: LendingError.self) { try await store.addDevice(makeDevice(id), at: base) }
        await #expect(throws: LendingError.self) { try await store.addGroup(DeviceGroup(id: id, name: "G", sortOrder: 0)) }
        #expect(try await store.users(nameContains: nil, page: .first).items.map(\.id) == ["U-1", "U-2"])
    }

    /// Issue 33: after a clean stop the `-wal` was sometimes still there, holding the last
    /// changes: GRDB closes its readers after its writer, and a reader cannot checkpoint.
    @Test func aCleanCloseAfterReadsAndWritesLeavesOnlyTheDatabaseFile() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        #expect(try await store.device(id: "D-001") != nil)  // a reader connection is open now
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(60)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).contains("lending.sqlite-wal"))
        try store.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["lending.sqlite"])
        let reopened = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? reopened.close() }
        #expect(try await reopened.device(id: "D-001")?.activeRental == nil)
    }

    @Test func aRefusedDatabaseLeavesNoWalOrShmBehind() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir, devices: 300)
        try store.close()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: dir.database))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size) - 8192))
        try handle.close()
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()

        await #expect(throws: StoreOpenError.self) { try await SQLiteInventoryStore.open(config(dir.database)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == before)
        #expect(before == ["lending.sqlite"])
    }
}
