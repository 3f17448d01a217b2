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
