import Foundation
import Lending
@testable import PostgresStore
import Synchronization
import Testing
import TestSupport

/// Two daemons on one PostgreSQL database: each hears the other's lends and returns (LISTEN/NOTIFY),
/// never its own, and one whose listening connection was lost misses nothing.
@Suite("Rental changes across kiosks (PostgreSQL)", .enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
struct RentalFeedTests {
    final class Heard: Sendable {
        let changes = Mutex<[RentalChange]>([])
        var all: [RentalChange] { changes.withLock { $0 } }
    }

    @Test func aKioskHearsTheOthersChangesButNotItsOwn() async throws {
        let fixture = try await StoreFixture(.postgresql, devices: 3, users: 1)
        defer { fixture.close() }
        let a = try #require(fixture.store as? PostgresInventoryStore)
        let b = try #require(try await fixture.openAgain() as? PostgresInventoryStore)
        defer { b.close() }
        let heard = Heard()
        let feed = await a.rentalChanges()
        let listener = Task { for await change in feed { heard.changes.withLock { $0.append(change) } } }
        defer { listener.cancel() }
        // The feed listens once its connection is up: B's first lend may come before that, and is caught up.
        _ = try await b.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), location: "desk-b"))
        try await eventually("A hears B's lend") { heard.all.contains { $0.kind == .lent && $0.rental.deviceId == "D-001" } }
        _ = try await a.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(1), location: "desk-a"))
        _ = try await b.returnDevice(ReturnRequest(deviceId: "D-001", at: at(2), location: "desk-b"))
        try await eventually("A hears B's return") { heard.all.contains { $0.kind == .returned && $0.rental.deviceId == "D-001" } }
        #expect(!heard.all.contains { $0.rental.deviceId == "D-002" }, "A heard its own lend")
        #expect(heard.all.first { $0.kind == .lent }?.rental.location == "desk-b")
        let seqs = heard.all.map(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)

        // A's connections die, the listening one among them (a network cut); B lends meanwhile.
        let killed = try await fixture.count("""
            SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(a.origin)'
            """)
        #expect(killed >= 1)
        _ = try await b.lend(LendRequest(deviceId: "D-003", userId: "U-1", at: at(3), location: "desk-b"))
        try await eventually("A hears the lend made while it was not listening") {
            heard.all.contains { $0.kind == .lent && $0.rental.deviceId == "D-003" }
        }
        #expect(heard.all.filter { $0.rental.deviceId == "D-003" }.count == 1)
    }

    /// `change_seq` is drawn when the statement runs: a change that drew the lower one but commits
    /// after a later change still reaches the other kiosk (it is not taken for one already seen).
    @Test func aChangeCommittedOutOfOrderStillArrives() async throws {
        let fixture = try await StoreFixture(.postgresql, devices: 3, users: 1)
        defer { fixture.close() }
        let a = try #require(fixture.store as? PostgresInventoryStore)
        let b = try #require(try await fixture.openAgain() as? PostgresInventoryStore)
        defer { b.close() }
        _ = try await b.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), location: "desk-b"))
        let heard = Heard()
        let feed = await a.rentalChanges()
        let listener = Task { for await change in feed { heard.changes.withLock { $0.append(change) } } }
        defer { listener.cancel() }
        let logger = b.logger
        // B's first transaction changes D-001's rental (drawing a change_seq) and stays open while B
        // lends D-002 (a higher change_seq, committed first); then it commits.
        let drawn = AsyncStream<Void>.makeStream()
        let lendDone = AsyncStream<Void>.makeStream()
        let slow = Task {
            try await b.withConnection { c in
                _ = try await PostgresInventoryStore.rows(c, "BEGIN", logger: logger) { _ in 0 }
                _ = try await PostgresInventoryStore.rows(c, "UPDATE rentals SET location = 'desk-b2' WHERE device_id = 'D-001'",
                                                          logger: logger) { _ in 0 }
                drawn.continuation.yield()
                for await _ in lendDone.stream { break }
                _ = try await PostgresInventoryStore.rows(c, "COMMIT", logger: logger) { _ in 0 }
            }
        }
        for await _ in drawn.stream { break }
        _ = try await b.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(1), location: "desk-b"))
        try await eventually("A hears the lend that committed first") { heard.all.contains { $0.rental.deviceId == "D-002" } }
        lendDone.continuation.yield()
        try await slow.value
        try await eventually("A hears the change that drew the lower change_seq but committed later") {
            heard.all.contains { $0.rental.deviceId == "D-001" && $0.rental.location == "desk-b2" }
        }
        let d002 = try #require(heard.all.first { $0.rental.deviceId == "D-002" })
        let d001 = try #require(heard.all.first { $0.rental.deviceId == "D-001" })
        #expect(d001.seq < d002.seq, "the test did not make the commits cross")
        #expect(heard.all.count == 2)
    }
}
