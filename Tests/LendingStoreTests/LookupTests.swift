import Lending
import LendingStore
import Testing

/// Single-row lookups: fresh across stores on one file, and right when many run at once.
@Suite struct LookupTests {
    @Test func lookupsSeeAnotherStoresCommitsAndManyAtOnceAllAnswer() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir, devices: 20)
        defer { try? store.close() }
        // A second store on the same file: another daemon.
        let other = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? other.close() }

        #expect(try await store.device(id: "D-007")?.activeRental == nil)
        _ = try await other.lend(LendRequest(deviceId: "D-007", userId: "U-2", at: at(10)))
        #expect(try await store.device(id: "D-007")?.activeRental?.userId == "U-2")

        // Many at once, more than the pool has readers: all answer right.
        let answers = try await withThrowingTaskGroup(of: (String, String?).self) { group in
            for _ in 0..<10 {
                for n in 1...20 {
                    let id = String(format: "D-%03d", n)
                    group.addTask { (id, try await store.device(id: id)?.activeRental?.userId) }
                }
            }
            return try await group.reduce(into: [(String, String?)]()) { $0.append($1) }
        }
        #expect(answers.count == 200)
        #expect(answers.allSatisfy { $0.0 == "D-007" ? $0.1 == "U-2" : $0.1 == nil })
        #expect(try await store.user(id: "U-2")?.id == "U-2")
        #expect(try await store.device(id: "D-999") == nil)
    }

    @Test func aClosedStoreRefusesLookups() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        try store.close()
        await #expect(throws: (any Error).self) { try await store.device(id: "D-001") }
    }
}
