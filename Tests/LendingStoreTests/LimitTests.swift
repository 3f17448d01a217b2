import Foundation
import Lending
import LendingStore
import Testing

/// The per-user limit on active rentals, applied in the lend's transaction.
@Suite("Per-user limit (SQLite and PostgreSQL)")
struct LimitTests {
    @Test(arguments: Backend.all) func aLendBeyondTheLimitIsRefusedAndChangesNothing(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 4, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        func lend(_ device: String, _ user: String = "U-1", limit: Int? = 2) async throws -> Rental {
            try await store.lend(LendRequest(deviceId: device, userId: user, at: at(0), maxActivePerUser: limit))
        }
        _ = try await lend("D-001")
        _ = try await lend("D-002")
        await #expect(throws: LendingError.limitReached("U-1", userName: "User 1", limit: 2, deviceIds: ["D-001", "D-002"])) {
            try await lend("D-003")
        }
        #expect(try await store.device(id: "D-003")?.activeRental == nil)
        _ = try await lend("D-003", "U-2")  // another user is not affected
        _ = try await lend("D-004", limit: nil)  // no limit: none applies
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(1)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-004", at: at(1)))
        _ = try await lend("D-004")  // below the limit again
        #expect(try await store.activeRentals(userId: "U-1", page: .first).items.map(\.deviceId) == ["D-002", "D-004"])
    }

    /// Two stores on one database (two daemons, or two readers at once) cannot pass the limit together.
    @Test(arguments: Backend.all) func concurrentLendsDoNotPassTheLimit(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 10, users: 1)
        let a = fixture.store
        let b = try await fixture.openAgain()
        defer { fixture.close(b) }
        let lent = await withTaskGroup(of: Bool.self) { group in
            for i in 1...10 {
                let store = i % 2 == 0 ? a : b
                group.addTask {
                    let request = LendRequest(deviceId: String(format: "D-%03d", i), userId: "U-1", at: at(0), maxActivePerUser: 3)
                    return (try? await store.lend(request)) != nil
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(lent == 3)
        #expect(try await a.activeRentals(userId: "U-1", page: .first).items.count == 3)
    }
}
