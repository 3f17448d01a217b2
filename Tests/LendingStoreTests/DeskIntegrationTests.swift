import Foundation
import Lending
import LendingStore
import Synchronization
import Testing

final class TestClock: Sendable {
    private let time = Mutex(base)
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("Lending desk on the SQLite store")
struct DeskIntegrationTests {
    @Test func badgeLendReturnAndUnknownTagEndToEnd() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir, devices: 2, users: 2)
        defer { try? store.close() }
        try await store.addBadge(Badge(identifier: "04A1B2C3", kind: .iso14443a, userId: "U-1", registeredAt: base))
        try await store.registerTag(uid: "04112233445501", deviceId: "D-001", at: base)
        let clock = TestClock()
        let desk = LendingDesk(store: store, policy: LendingPolicy(armDuration: 30, defaultLoanPeriod: 86_400),
                               location: "room-1", now: { clock.now })

        #expect(await desk.handle(TagTap(uid: "04112233445501")).kind == "badgeRequired")
        #expect(await desk.handle(TagTap(uid: "04A1B2C3")).kind == "armed")
        clock.advance(3)
        #expect(await desk.handle(TagTap(uid: "04112233445501")).kind == "lent")            // by UID binding
        #expect(await desk.handle(TagTap(uid: "04FFFFFFFFFF01", deviceIdOnTag: "D-002")).kind == "lent")  // by tag record
        #expect(await desk.handle(TagTap(uid: "04998877")) == .unknownTag(uid: "04998877"))

        let active = try await store.activeRentals(userId: "U-1", page: .first).items
        #expect(active.map(\.deviceId) == ["D-001", "D-002"])
        #expect(active.allSatisfy { $0.location == "room-1" && $0.dueAt == at(3 + 86_400) })

        clock.advance(60)  // session expired: a tap returns, anonymously
        #expect(await desk.handle(TagTap(uid: "04112233445501")).kind == "returned")
        let history = try await store.history(HistoryQuery(deviceId: "D-001"), page: .first).items
        #expect(history.first?.returnedAt == at(63) && history.first?.returnedBy == nil)
        #expect(history.first?.returnLocation == "room-1")

        // Another reader returns a device lent at the first; returnedBy is the user armed there.
        let other = LendingDesk(store: store, location: "room-2", now: { clock.now })
        try await other.arm(userId: "U-2")
        #expect(await other.handle(TagTap(uid: "04FFFFFFFFFF02", deviceIdOnTag: "D-002")).kind == "returned")
        #expect(try await store.device(id: "D-002")?.activeRental == nil)
        let returned = try await store.history(HistoryQuery(deviceId: "D-002"), page: .first).items.first
        #expect(returned?.returnedBy == "U-2" && returned?.returnLocation == "room-2")
    }
}
