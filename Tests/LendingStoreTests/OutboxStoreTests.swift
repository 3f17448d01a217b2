import Foundation
import JSON
import Lending
import LendingStore
import Testing

/// The store's side of the outbox (SQLite v7, PostgreSQL v5): entries written in the change's
/// transaction, delivery order per device, and what an administrator may do with an entry.
@Suite("Outbox in the store (SQLite and PostgreSQL)")
struct OutboxStoreTests {
    static let routes = [OutboxRoute(target: "hook"), OutboxRoute(target: "chat", kinds: [.lend])]

    func entries(_ store: any InventoryStore, target: String) async throws -> [OutboxEntry] {
        try await store.outboxEntries(state: nil, page: PageRequest(limit: 1000)).items.filter { $0.target == target }.reversed()
    }

    @Test(arguments: Backend.all) func withoutTargetsNothingIsWritten(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend)
        defer { fixture.close() }
        _ = try await fixture.store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(10)))
        _ = try await fixture.store.claimOverdueAnnouncements(at: at(20))
        _ = try await fixture.store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(30)))
        #expect(try await fixture.count("SELECT COUNT(*) FROM outbox") == 0)
        #expect(try await fixture.store.outboxCounts().isEmpty)
    }

    @Test(arguments: Backend.all) func everyChangeWritesItsEventForEachTargetThatWantsIt(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, outboxRoutes: Self.routes)
        let store = fixture.store
        defer { fixture.close() }
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(10)))
        _ = try await store.renew(deviceId: "D-001", dueAt: at(50), at: at(5), by: nil)
        #expect(try await store.claimOverdueAnnouncements(at: at(60)).count == 1)
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(70), note: "cracked screen"))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-2", at: at(80)))

        let hook = try await entries(store, target: "hook")
        #expect(hook.map(\.kind) == [.lend, .renew, .overdue, .return, .lend])
        #expect(hook.map(\.deviceId) == ["D-001", "D-001", "D-001", "D-001", "D-002"])
        #expect(hook.allSatisfy { $0.state == .pending && $0.attempts == 0 })
        let chat = try await entries(store, target: "chat")
        #expect(chat.map(\.kind) == [.lend, .lend])
        // One event, one ID for every target: receivers deduplicate by it.
        #expect(chat.map(\.eventId) == [hook[0].eventId, hook[4].eventId])
        #expect(Set(hook.map(\.eventId)).count == 5)

        let returned = try JSONValue(parsing: hook[3].payload)
        #expect(returned["kind"]?.stringValue == "return")
        #expect(returned["id"]?.stringValue == hook[3].eventId.uuidString.lowercased())
        #expect(returned["rental"]?["returnNote"]?.stringValue == "cracked screen")
        #expect(returned["rental"]?["userName"]?.stringValue == "User 1")
        #expect(try await store.outboxCounts() == [OutboxCounts(target: "chat", pending: 2),
                                                   OutboxCounts(target: "hook", pending: 5)])
    }

    /// Nothing is sent that did not happen: a refused change writes no entry.
    @Test(arguments: Backend.all) func aRefusedChangeWritesNoEntry(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, outboxRoutes: Self.routes)
        let store = fixture.store
        defer { fixture.close() }
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        await #expect(throws: LendingError.self) {
            try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(1)))
        }
        await #expect(throws: LendingError.self) {
            try await store.returnDevice(ReturnRequest(deviceId: "D-002", at: at(2)))
        }
        await #expect(throws: LendingError.self) {
            try await store.renew(deviceId: "D-003", dueAt: at(100), at: at(3), by: nil)
        }
        #expect(try await fixture.count("SELECT COUNT(*) FROM outbox") == 2)
    }

    @Test(arguments: Backend.all) func deliveryIsInOrderPerDeviceAndBacksOff(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, outboxRoutes: [OutboxRoute(target: "hook")])
        var store = fixture.store
        defer { fixture.close(store) }
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(1)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(2)))
        let first = try await store.pendingOutbox(limit: 10, now: at(3))
        // D-001's return waits for its lend.
        #expect(first.map { "\($0.deviceId) \($0.kind)" } == ["D-001 lend", "D-002 lend"])
        // Only the targets asked for (a target no longer configured does not fill the batch).
        #expect(try await store.pendingOutbox(limit: 1, now: at(3), targets: ["gone"]).isEmpty)
        #expect(try await store.pendingOutbox(limit: 1, now: at(3), targets: ["gone", "hook"]).map(\.seq) == [first[0].seq])
        #expect(try await store.pendingOutbox(limit: 1, now: at(3), targets: []).isEmpty)

        try await store.markAttemptFailed(seq: first[0].seq, next: at(100), error: "HTTP 503")
        try await store.markDelivered(seq: first[1].seq, at: at(4))
        #expect(try await store.pendingOutbox(limit: 10, now: at(5)).isEmpty)
        #expect(try await store.outboxCounts() == [OutboxCounts(target: "hook", pending: 2, failing: 1, delivered: 1)])

        // A restart keeps it all.
        StoreFixture.closeStore(store)
        store = try await fixture.openAgain()
        let retried = try await store.pendingOutbox(limit: 10, now: at(100))
        #expect(retried.map(\.seq) == [first[0].seq])
        #expect(retried.first?.attempts == 1 && retried.first?.lastError == "HTTP 503")
        try await store.markDelivered(seq: first[0].seq, at: at(101))
        #expect(try await store.pendingOutbox(limit: 10, now: at(101)).map { "\($0.deviceId) \($0.kind)" } == ["D-001 return"])
    }

    @Test(arguments: Backend.all) func anAdministratorRetriesOrDropsAnEntry(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, outboxRoutes: [OutboxRoute(target: "hook")])
        let store = fixture.store
        defer { fixture.close() }
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(1)))
        let lend = try #require(try await store.pendingOutbox(limit: 10, now: at(2)).first)
        try await store.markAttemptFailed(seq: lend.seq, next: at(1000), error: "timeout")

        // Dropping the stuck lend lets the device's return go.
        try await store.dropOutbox(seq: lend.seq)
        let next = try await store.pendingOutbox(limit: 10, now: at(3))
        #expect(next.map(\.kind) == [.return])
        #expect(try await store.outboxEntries(state: .dropped, page: .first).items.map(\.seq) == [lend.seq])

        // Retried: pending again, due now, and again ahead of the return.
        try await store.retryOutbox(seq: lend.seq, now: at(4))
        #expect(try await store.pendingOutbox(limit: 10, now: at(4)).map(\.seq) == [lend.seq])

        try await store.markDelivered(seq: lend.seq, at: at(5))
        await #expect(throws: LendingError.invalidField("outbox entry \(lend.seq)", reason: "it was delivered already and cannot be dropped")) {
            try await store.dropOutbox(seq: lend.seq)
        }
        await #expect(throws: LendingError.noSuchOutboxEntry(999_999)) { try await store.retryOutbox(seq: 999_999, now: at(5)) }

        // Delivered entries go after the retention period; pending ones stay.
        #expect(try await store.pruneOutbox(before: at(5)) == 0)
        #expect(try await store.pruneOutbox(before: at(6)) == 1)
        #expect(try await fixture.count("SELECT COUNT(*) FROM outbox") == 1)
    }
}

/// Reminders in the outbox (SQLite v9, PostgreSQL v9): written outside a lending change, each
/// once per target however often the daemon writes them (a restart, a second kiosk).
@Suite("Reminders in the outbox (SQLite and PostgreSQL)")
struct ReminderStoreTests {
    @Test(arguments: Backend.all) func eachReminderIsWrittenOncePerTarget(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend)
        defer { fixture.close() }
        let store = fixture.store
        let utc = TimeZone(secondsFromGMT: 0)!
        let schedule = ReminderSchedule(digestAt: 9 * 3600, dueNoticeAt: 9 * 3600, timeZone: utc)
        let day = schedule.day(of: at(0))
        // Lent two days before; D-001 falls due today, D-002 tomorrow, D-003 was due yesterday (overdue).
        let lentAt = day.start.addingTimeInterval(-2 * 86400)
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: lentAt, dueAt: day.end.addingTimeInterval(-60)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: lentAt, dueAt: day.end.addingTimeInterval(3600)))
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-2", at: lentAt, dueAt: day.start.addingTimeInterval(-60)))
        let routes = [OutboxRoute(target: "hook"), OutboxRoute(target: "chat", kinds: [.digest])]
        let now = day.start.addingTimeInterval(9 * 3600 + 1)
        #expect(try await store.sendReminders([.digest, .due], schedule: schedule, routes: routes, now: now) == 3)
        // Again, later the same day (a restart): nothing new.
        #expect(try await store.sendReminders([.digest, .due], schedule: schedule, routes: routes, now: now.addingTimeInterval(600)) == 0)

        let all = try await store.outboxEntries(state: nil, page: PageRequest(limit: 100)).items
        #expect(all.map { "\($0.target) \($0.kind) \($0.deviceId)" }.sorted() == ["chat digest ", "hook digest ", "hook due D-001"])
        let digest = try JSONValue(parsing: try #require(all.first { $0.kind == .digest }).payload)
        #expect(digest["lent"]?.intValue == 3)
        #expect(digest["overdueCount"]?.intValue == 1)
        #expect(digest["dueTodayCount"]?.intValue == 1)
        #expect(digest["overdue"]?.arrayValue?.first?["deviceId"]?.stringValue == "D-003")
        #expect(digest["day"]?.stringValue == day.key)
        // The next day has a digest of its own, and D-002's notice.
        let tomorrow = now.addingTimeInterval(86400)
        #expect(try await store.sendReminders([.digest, .due], schedule: schedule, routes: routes, now: tomorrow) == 3)
        // Entries whose event and target are in the outbox are left alone; the others are written.
        let digestEntry = try #require(all.first { $0.kind == .digest && $0.target == "hook" })
        var other = digestEntry
        other.target = "new"
        #expect(try await store.enqueueOutbox([digestEntry, other]) == 1)
    }
}
