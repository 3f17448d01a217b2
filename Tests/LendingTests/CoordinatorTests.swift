import Foundation
import GRDB
import Lending
import LendingStore
import RoomBridgeCore
import Synchronization
import Testing

/// A clock the test moves by hand; as a ``LendingClock`` (``lending``) its sleepers wake when it is moved past
/// their deadline, so the coordinator's timers fire without real waiting.
final class ManualClock: Sendable {
    private struct Sleeper {
        let id: Int
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var time: Date
        var sleepers: [Sleeper] = []
        var nextID = 0
    }
    private let state: Mutex<State>
    init(_ start: Date) { state = Mutex(State(time: start)) }
    var now: Date { state.withLock { $0.time } }

    func advance(_ seconds: TimeInterval) {
        let due = state.withLock { s -> [Sleeper] in
            s.time = s.time.addingTimeInterval(seconds)
            let now = s.time
            let due = s.sleepers.filter { $0.deadline <= now }
            s.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many timers wait on this clock now.
    var sleeping: Int { state.withLock { $0.sleepers.count } }

    fileprivate func sleep(until deadline: Date) async throws {
        let id = state.withLock { s -> Int in s.nextID += 1; return s.nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let wake = state.withLock { s -> Bool in
                    guard s.time < deadline else { return true }
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: c))
                    return false
                }
                if wake { c.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { s -> Sleeper? in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: i)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// This clock as the coordinator's.
    var lending: some LendingClock { Adapter(clock: self) }

    private struct Adapter: LendingClock {
        let clock: ManualClock
        func now() -> Date { clock.now }
        func sleep(until deadline: Date) async throws { try await clock.sleep(until: deadline) }
    }
}

/// The real SQLite store in a fresh temporary directory, holding Alice and Bob with their
/// badges, and devices D-1 and D-2 (normal) and D-3 (disposed), each with a registered tag.
struct StoreFixture {
    let directory: String
    let store: SQLiteInventoryStore
    var database: String { directory + "/lending.sqlite" }

    static let tags: [TagUID: String] = ["04112233445501": "D-1", "04112233445502": "D-2", "04112233445503": "D-3"]

    init() async throws {
        directory = FileManager.default.temporaryDirectory.path + "/roombridge-lending-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try await SQLiteInventoryStore.open(
            StoreConfiguration(path: directory + "/lending.sqlite", integrityCheck: .none))
        for user in [alice, bob] { try await store.addUser(user) }
        for badge in [aliceBadge, bobBadge] { try await store.addBadge(badge) }
        for d in [device("D-1"), device("D-2"), device("D-3", status: .disposed)] { try await store.addDevice(d, at: t0) }
        for (uid, id) in Self.tags { try await store.registerTag(uid: uid, deviceId: id, at: t0) }
    }

    func rentals() async throws -> [Rental] {
        try await store.history(HistoryQuery(), page: .first).items.sorted { $0.id < $1.id }
    }

    func cleanup() {
        try? store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

@Suite("Lending coordinator (rules + the SQLite store + SystemState, injected clock)")
struct LendingCoordinatorTests {
    let clock = ManualClock(t0)
    let state = SystemState()

    func coordinator(_ f: StoreFixture, _ policy: LendingPolicy = LendingPolicy(armDuration: 30),
                     location: String = "room-1") -> LendingCoordinator {
        let clock = self.clock
        return LendingCoordinator(store: f.store, state: state, policy: policy, location: location, now: { clock.now })
    }

    @Test func badgeThenDevicesThenTimeout() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        #expect(await lending.handle(tap("04A1B2C3")).kind == "armed")
        #expect(await state.snapshot().lending.armed?.userId == "U-1")
        clock.advance(5)
        #expect(await lending.handle(tap("04112233445501")) ==
            .lent(deviceId: "D-1", model: "iPhone 15", userId: "U-1", userName: "Alice", dueAt: nil))
        #expect(await state.snapshot().lending.lastOutcome?.kind == .lent)
        clock.advance(5)
        // The session stays armed for more devices (record on the registered tag this time).
        #expect(await lending.handle(tap("04112233445502", deviceOnTag: "D-2")).kind == "lent")
        #expect(await lending.session()?.remaining(at: clock.now) == 20)
        clock.advance(20)
        #expect(await lending.session() == nil)
        // Return by whoever taps it: nobody armed now.
        #expect(await lending.handle(tap("04112233445501")) ==
            .returned(deviceId: "D-1", model: "iPhone 15", borrowerId: "U-1", borrowerName: "Alice", returnedBy: nil))
        clock.advance(5)  // past the repeat window of the return
        #expect(await lending.handle(tap("04112233445501")) == .badgeRequired(deviceId: "D-1", model: "iPhone 15"))
        let rentals = try await f.rentals()
        #expect(rentals.count == 2)
        #expect(rentals[0].location == "room-1" && rentals[0].returnLocation == "room-1")
        #expect(rentals[0].returnedAt == t0.addingTimeInterval(30))
        #expect(rentals[1].isActive)
    }

    @Test func returnWhileArmedRecordsTheArmedUser() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        _ = await lending.handle(tap("04A1B2C3"))
        _ = await lending.handle(tap("04112233445501"))
        _ = await lending.handle(tap("0123456789ABCDEF")) // Bob replaces Alice
        clock.advance(5)  // past the repeat window of the lend
        #expect(await lending.session()?.userId == bob.id)
        let outcome = await lending.handle(tap("04112233445501"))
        #expect(outcome == .returned(deviceId: "D-1", model: "iPhone 15", borrowerId: "U-1", borrowerName: "Alice", returnedBy: "U-2"))
        // Who acted: the badge armed at each tap.
        #expect(try await f.rentals()[0].returnedBy == "U-2")
        #expect(try await f.rentals()[0].lentBy == "U-1")
    }

    @Test func clientArmAndDisarm() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        await #expect(throws: LendingError.noSuchUser("U-404")) { try await lending.arm(userId: "U-404") }
        let session = try await lending.arm(userId: "U-2")
        #expect(session.reader == nil)
        #expect(session.expiresAt == t0.addingTimeInterval(30))
        #expect(await lending.handle(tap("04112233445502")).kind == "lent")
        #expect(await lending.disarm() == .disarmed("U-2"))
        #expect(await state.snapshot().lending.armed == nil)
        #expect(await lending.handle(tap("04112233445501")).kind == "badgeRequired")
        #expect(await lending.disarm() == .disarmed(nil))
    }

    @Test func refusedAndUnknownRecordNothing() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        _ = await lending.handle(tap("04A1B2C3"))
        #expect(await lending.handle(tap("04112233445503")).kind == "refused")
        #expect(await lending.handle(tap("04998877665544")) == .unknownTag(uid: "04998877665544"))
        #expect(await lending.handle(tap("04998877665544", deviceOnTag: "D-404")) ==
            .unknownDevice(deviceId: "D-404", uid: "04998877665544"))
        #expect(try await f.rentals().isEmpty)
        #expect(await lending.session()?.userId == alice.id)
    }

    /// A tag written with D-1's record whose UID nobody bound lends nothing and returns
    /// nothing; the refusal is published as `refused` with the reason `unregisteredTag`.
    @Test func aDeviceRecordOnAnUnregisteredTagLendsAndReturnsNothing() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        _ = await lending.handle(tap("04A1B2C3"))
        let forged = await lending.handle(tap("04FFFFFFFFFFFF", deviceOnTag: "D-1"))
        #expect(forged == .unregisteredTag(deviceId: "D-1", model: "iPhone 15", uid: "04FFFFFFFFFFFF", boundTo: nil))
        #expect(try await f.rentals().isEmpty)
        let published = await state.snapshot().lending.lastOutcome
        #expect(published?.kind == .refused && published?.refusal == .unregisteredTag)
        // Lent through its registered tag, a forged tag cannot return it either; nor can
        // D-2's tag carrying D-1's record.
        #expect(await lending.handle(tap("04112233445501")).kind == "lent")
        #expect(await lending.handle(tap("04FFFFFFFFFFFF", deviceOnTag: "D-1")).kind == "unregisteredTag")
        #expect(await lending.handle(tap("04112233445502", deviceOnTag: "D-1")) ==
            .unregisteredTag(deviceId: "D-1", model: "iPhone 15", uid: "04112233445502", boundTo: "device D-2"))
        #expect(try await f.rentals().map(\.isActive) == [true])
    }

    /// With lending.max_active_per_user = 1, Alice's second device tap lends nothing and is
    /// published as `refused` with the reason `limitReached`; the session stays armed, and a
    /// lend by ID is refused the same way until she returns one.
    @Test func theLimitRefusesATapAndALendByID() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f, LendingPolicy(armDuration: 30, maxActivePerUser: 1))
        _ = await lending.handle(tap("04A1B2C3"))
        #expect(await lending.handle(tap("04112233445501")).kind == "lent")
        let refused = await lending.handle(tap("04112233445502"))
        #expect(refused == .limitReached(deviceId: "D-2", model: "iPhone 15", userId: "U-1", userName: "Alice", limit: 1,
                                         deviceIds: ["D-1"]))
        #expect(refused.message.contains("Alice already has 1 device (D-1)") && refused.message.contains("return one first"))
        let published = await state.snapshot().lending.lastOutcome
        #expect(published?.kind == .refused && published?.refusal == .limitReached && published?.deviceId == "D-2")
        #expect(await lending.session()?.userId == "U-1")
        #expect(try await f.rentals().map(\.deviceId) == ["D-1"])
        await #expect(throws: LendingError.limitReached("U-1", userName: "Alice", limit: 1, deviceIds: ["D-1"])) {
            try await lending.lend(deviceId: "D-2", userId: "U-1")
        }
        _ = try await lending.lend(deviceId: "D-2", userId: "U-2")  // Bob is below it
        clock.advance(5)
        #expect(await lending.handle(tap("04112233445501")).kind == "returned")  // returns are never limited
    }

    /// A device placed twice 0.3 s apart is lent once; the second tap is reported and records
    /// nothing. After the window a tap returns it, and a repeat of that return changes nothing.
    @Test func aDoubleTapLendsOnce() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f, LendingPolicy(armDuration: 30, repeatWindow: 5))
        _ = await lending.handle(tap("04A1B2C3"))
        #expect(await lending.handle(tap("04112233445501")).kind == "lent")
        clock.advance(0.3)
        #expect(await lending.handle(tap("04112233445501")) ==
            .repeated(deviceId: "D-1", model: "iPhone 15", change: .lent, userName: "Alice"))
        #expect(await state.snapshot().lending.lastOutcome?.refusal == .alreadyLent)
        #expect(try await f.rentals().map(\.isActive) == [true])
        clock.advance(5)
        #expect(await lending.handle(tap("04112233445501")).kind == "returned")
        clock.advance(0.3)
        #expect(await lending.handle(tap("04112233445501")).kind == "alreadyReturned")
        #expect(try await f.rentals().map(\.isActive) == [false])
        // A return by ID counts too.
        clock.advance(10)
        _ = try await lending.lend(deviceId: "D-2", userId: "U-2")
        #expect(await lending.handle(tap("04112233445502")).kind == "alreadyLent")
    }

    /// A write the database refuses (here a trigger, as a failing disk would) is reported at
    /// the reader, records nothing and leaves the session armed.
    @Test func aRefusedWriteIsReportedAndRecordsNothing() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        _ = await lending.handle(tap("04A1B2C3"))
        let saboteur = try DatabaseQueue(path: f.database)
        try await saboteur.write { db in
            try db.execute(sql: "CREATE TRIGGER no_rentals BEFORE INSERT ON rentals BEGIN SELECT RAISE(ABORT, 'the disk said no'); END")
        }
        try saboteur.close()
        let failed = await lending.handle(tap("04112233445501"))
        #expect(failed.kind == "failed")
        #expect(failed.message.contains("the disk said no"))
        #expect(await state.snapshot().lending.lastOutcome?.kind == .failed)
        #expect(try await f.rentals().isEmpty)
        #expect(await lending.session()?.userId == alice.id)
    }

    /// Two readers share the store: a device lent at one is returned at the other, by the
    /// user armed there.
    @Test func anotherReaderReturnsWithItsArmedUser() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let first = coordinator(f, LendingPolicy(armDuration: 30, defaultLoanPeriod: 86_400))
        _ = await first.handle(tap("04A1B2C3"))
        clock.advance(3)
        #expect(await first.handle(tap("04112233445502", deviceOnTag: "D-2")).kind == "lent")
        #expect(try await f.store.device(id: "D-2")?.activeRental?.dueAt == t0.addingTimeInterval(3 + 86_400))
        let second = coordinator(f, location: "room-2")
        try await second.arm(userId: "U-2")
        #expect(await second.handle(tap("04112233445502")).kind == "returned")
        let returned = try await f.rentals().first
        #expect(returned?.returnedBy == "U-2" && returned?.returnLocation == "room-2")
    }

    @Test func allHistoryFollowsCursors() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f, LendingPolicy(armDuration: 1000, repeatWindow: 0))
        _ = await lending.handle(tap("04A1B2C3"))
        for uid: TagUID in ["04112233445501", "04112233445502", "04112233445501", "04112233445501", "04112233445502"] {
            clock.advance(1)
            _ = await lending.handle(tap(uid))
        }
        let all = try await f.store.allHistory(HistoryQuery(userId: "U-1"), pageSize: 2)
        #expect(all.count == 3)
    }
}
