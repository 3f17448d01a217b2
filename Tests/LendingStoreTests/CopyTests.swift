import CurtainProtocol
import Foundation
import Lending
import LendingStore
import Testing

/// Moving an installation: everything a SQLite store holds goes into a new store of either backend.
@Suite("Copying an inventory to another store (SQLite to SQLite and PostgreSQL)")
struct CopyTests {
    /// A SQLite source with a bit of everything: history of a device broken since, an active rental,
    /// a return note, an overdue announcement, badges, a tag, a kept curtain schedule and the outbox
    /// entries of a target (one delivered).
    static let routes = [OutboxRoute(target: "hook")]

    static func source() async throws -> StoreFixture {
        let fixture = try await StoreFixture(.sqlite, devices: 3, users: 2, outboxRoutes: routes)
        let store = fixture.store
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), lentBy: .unixUser("alice")))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(10), note: "cracked screen", markBroken: true))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-2", at: at(20), dueAt: at(30), location: "desk"))
        _ = try await store.claimOverdueAnnouncements(at: at(40))
        try await store.addBadge(Badge(identifier: "04AABBCC", kind: .iso14443a, userId: "U-1", registeredAt: at(1), label: "山田"))
        try await store.registerTag(uid: "04112233445566", deviceId: "D-003", at: at(2))
        let kept = CurtainSchedule(openTime: try CurtainTime(hour: 7, minute: 5), openEnabled: true,
                                   closeTime: try CurtainTime(hour: 21, minute: 30), closeEnabled: false)
        try await (store as? any CurtainScheduleStore)?.keepSchedule(kept, curtain: "left")
        let first = try #require(try await store.pendingOutbox(limit: 1, now: at(100)).first)
        try await store.markDelivered(seq: first.seq, at: at(100))
        return fixture
    }

    @Test(arguments: Backend.all) func everythingArrivesAndNewRowsContinueAfterIt(_ backend: Backend) async throws {
        let source = try await Self.source()
        defer { source.close() }
        let copy = try await #require(source.store as? any InventoryCopySource).copyAll()
        #expect(copy.rentals.count == 2 && copy.deviceLog.count > 3 && copy.overdueAnnouncements.count == 1)

        #expect(copy.outbox.map(\.kind) == [.lend, .return, .lend, .overdue])
        let target = try await StoreFixture(backend, devices: 0, users: 0, outboxRoutes: Self.routes)
        defer { target.close() }
        let counts = try await #require(target.store as? any InventoryCopyTarget).restore(copy)
        #expect(counts == copy.counts)

        // Read back through the store, as the daemon would.
        let store = target.store
        #expect(try await store.device(id: "D-001")?.device.status == .broken)
        #expect(try await store.device(id: "D-002")?.activeRental?.location == "desk")
        let history = try await store.history(HistoryQuery(deviceId: "D-001"), page: .first).items
        #expect(history == copy.rentals.filter { $0.deviceId == "D-001" })
        #expect(history.first?.returnNote == "cracked screen" && history.first?.lentBy == "unix:alice")
        #expect(try await store.deviceLog(deviceId: "D-001", page: .first).items.sorted { $0.id < $1.id }
                == copy.deviceLog.filter { $0.deviceId == "D-001" })
        #expect(try await store.allBadges(page: .first).items.map(\.label) == ["山田"])
        if case .device(let record) = try await store.resolve(uid: "04112233445566") {
            #expect(record.device.id == "D-003")
        } else {
            Issue.record("the tag binding did not arrive")
        }
        #expect(try await store.claimOverdueAnnouncements(at: at(50)).isEmpty)  // already announced at the source
        #expect(try await (store as? any CurtainScheduleStore)?.keptSchedule(curtain: "left")?.openTime.minute == 5)
        // New rows get IDs after the copied ones.
        let next = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-1", at: at(60)))
        #expect(next.id > copy.rentals.map(\.id).max()!)
        // The outbox arrives whole (delivered entry included) and goes on after it.
        let entries = try await store.outboxEntries(state: nil, page: .first).items
        #expect(Array(entries.dropFirst().reversed()) == copy.outbox)
        #expect(entries.first?.seq ?? 0 > copy.outbox.map(\.seq).max()!)
        #expect(try await store.pendingOutbox(limit: 10, now: at(200)).map { "\($0.deviceId) \($0.kind)" }
                == ["D-001 return", "D-002 lend", "D-003 lend"])
    }

    @Test(arguments: Backend.all) func aTargetWithDataIsRefusedAndKeepsIt(_ backend: Backend) async throws {
        let source = try await Self.source()
        defer { source.close() }
        let copy = try await #require(source.store as? any InventoryCopySource).copyAll()
        let target = try await StoreFixture(backend, devices: 1, users: 0)
        defer { target.close() }
        await #expect(throws: InventoryCopyError.targetNotEmpty(table: "devices", rows: 1)) {
            try await #require(target.store as? any InventoryCopyTarget).restore(copy)
        }
        #expect(try await target.count("SELECT COUNT(*) FROM users") == 0)
        #expect(try await target.count("SELECT COUNT(*) FROM devices") == 1)
    }
}
