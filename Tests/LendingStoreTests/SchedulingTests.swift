import Foundation
import GRDB
import Lending
import LendingStore
import Testing
import TestSupport

@Suite("Store calls never block the cooperative pool")
struct SchedulingTests {
    /// Another process holds the write lock; lends wait in SQLite's busy handler. GRDB runs
    /// that wait on its own dispatch queue (`DispatchQueueActor`), so the cooperative pool (2
    /// threads here) keeps running other work — reads included, as WAL readers are not blocked.
    /// If the waits ran on the pool, the read below could not resume before the busy timeout
    /// made the lends fail, and `finished` would not be 0.
    @Test func lendsWaitingForALockLeaveThePoolFree() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir, devices: 6, users: 1)
        defer { try? store.close() }

        let raw = try DatabaseQueue(path: dir.database)
        defer { try? raw.close() }
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? raw.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                locked.signal()
                release.wait()
                try db.execute(sql: "COMMIT")
            }
        }
        thread.start()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { locked.wait(); c.resume() }
        }

        let started = Counter()
        let finished = Counter()
        let lends = Task {
            await withTaskGroup(of: Void.self) { group in
                for d in 1...6 {
                    group.addTask {
                        started.increment()
                        _ = try? await store.lend(LendRequest(deviceId: String(format: "D-%03d", d), userId: "U-1", at: base))
                        finished.increment()
                    }
                }
            }
        }
        // All six lends have entered the store (and cannot pass the lock). Were their waits on
        // the pool, this wait could not resume before the busy timeout failed them.
        try await eventually("all six lends are under way") { started.value == 6 }
        // Cooperative work and WAL reads still proceed.
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { (0..<1000).reduce(0, +) } }
            return await group.reduce(0, +)
        }
        #expect(counts == 8 * 499_500)
        #expect(try await store.device(id: "D-001")?.isLent == false)
        #expect(finished.value == 0)

        release.signal()
        await lends.value
        #expect(finished.value == 6)
        #expect(try await store.activeRentals(userId: "U-1", page: .first).items.count == 6)
    }
}
