import Foundation
import Lending
import LendingStore
import Testing

/// The store's side of overdue announcements (schema v6).
@Suite("Overdue announcements in the store (SQLite and PostgreSQL)")
struct OverdueStoreTests {
    @Test(arguments: Backend.all) func eachOverdueRentalIsClaimedOncePerDueDate(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 3, users: 1)
        var store = fixture.store
        defer { fixture.close(store) }
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(100)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(0), dueAt: at(50)))
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-1", at: at(0)))  // open-ended
        #expect(try await store.nextOverdueAnnouncement() == at(50))
        #expect(try await store.claimOverdueAnnouncements(at: at(50)).isEmpty)

        #expect(try await store.claimOverdueAnnouncements(at: at(200)).map(\.deviceId) == ["D-002", "D-001"])
        #expect(try await store.claimOverdueAnnouncements(at: at(300)).isEmpty)
        #expect(try await store.overdueCount(at: at(300)) == 2)
        #expect(try await store.overdueCount(at: at(60)) == 1)
        #expect(try await store.nextOverdueAnnouncement() == nil)

        // Reopened (a restart): still announced.
        StoreFixture.closeStore(store)
        store = try await fixture.openAgain()
        #expect(try await store.claimOverdueAnnouncements(at: at(400)).isEmpty)

        // A renewal sets a new due date: announced again once that one passes.
        _ = try await store.renew(deviceId: "D-001", dueAt: at(1000), at: at(400), by: nil)
        #expect(try await store.nextOverdueAnnouncement() == at(1000))
        #expect(try await store.overdueCount(at: at(400)) == 1)
        #expect(try await store.claimOverdueAnnouncements(at: at(1001)).map(\.deviceId) == ["D-001"])
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-002", at: at(1002)))
        #expect(try await store.overdueCount(at: at(1002)) == 1)
    }

    /// Two daemons sharing the database: only one announces a rental.
    @Test(arguments: Backend.all) func twoStoresOnOneDatabaseClaimOnce(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 20, users: 1)
        let a = fixture.store
        let b = try await fixture.openAgain()
        defer { fixture.close(b) }
        for i in 1...20 {
            _ = try await a.lend(LendRequest(deviceId: String(format: "D-%03d", i), userId: "U-1", at: at(0), dueAt: at(Double(i))))
        }
        async let fromA = a.claimOverdueAnnouncements(at: at(100))
        async let fromB = b.claimOverdueAnnouncements(at: at(100))
        let (x, y) = try await (fromA, fromB)
        #expect((x + y).count == 20 && Set((x + y).map(\.id)).count == 20)
    }
}
