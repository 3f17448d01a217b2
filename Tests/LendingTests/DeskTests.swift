import Foundation
import Lending
import Synchronization
import Testing

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let time: Mutex<Date>
    init(_ start: Date) { time = Mutex(start) }
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

struct Unsupported: Error {}

/// In-memory store with just what the desk uses; enforces one active rental per device.
actor FakeStore: InventoryStore {
    var devices: [DeviceID: Device] = [:]
    var users: [UserID: User] = [:]
    var badges: [String: Badge] = [:]
    var tags: [String: DeviceID] = [:]
    var rentals: [Rental] = []
    var failNextLend: LendingError?

    init(devices: [Device], users: [User], badges: [Badge], tags: [String: DeviceID]) {
        for d in devices { self.devices[d.id] = d }
        for u in users { self.users[u.id] = u }
        for b in badges { self.badges[b.identifier] = b }
        self.tags = tags
    }

    func setFailNextLend(_ error: LendingError) { failNextLend = error }

    func record(_ id: DeviceID) -> DeviceRecord? {
        devices[id].map { DeviceRecord(device: $0, activeRental: rentals.first { $0.deviceId == id && $0.isActive }) }
    }

    func device(id: DeviceID) async throws -> DeviceRecord? { record(id) }
    func user(id: UserID) async throws -> User? { users[id] }
    func resolve(uid: String) async throws -> UIDBinding? {
        if let id = tags[uid], let r = record(id) { return .device(r) }
        if let b = badges[uid], let u = users[b.userId] { return .badge(b, u) }
        return nil
    }

    func lend(_ request: LendRequest) async throws -> Rental {
        if let error = failNextLend { failNextLend = nil; throw error }
        guard let d = devices[request.deviceId] else { throw LendingError.noSuchDevice(request.deviceId) }
        guard let u = users[request.userId] else { throw LendingError.noSuchUser(request.userId) }
        if let a = rentals.first(where: { $0.deviceId == d.id && $0.isActive }) {
            throw LendingError.alreadyLent(d.id, userId: a.userId, userName: a.userName, since: a.rentedAt)
        }
        let r = Rental(id: Int64(rentals.count + 1), deviceId: d.id, model: d.model, osVersion: d.osVersion,
                       serialNumber: d.serialNumber, userId: u.id, userName: u.name, rentedAt: request.at,
                       dueAt: request.dueAt, location: request.location)
        rentals.append(r)
        return r
    }

    func returnDevice(_ request: ReturnRequest) async throws -> Rental {
        guard let i = rentals.firstIndex(where: { $0.deviceId == request.deviceId && $0.isActive }) else {
            throw LendingError.notLent(request.deviceId)
        }
        rentals[i].returnedAt = request.at
        rentals[i].returnedBy = request.returnedBy
        rentals[i].returnLocation = request.location
        return rentals[i]
    }

    func groups() async throws -> [DeviceGroup] { throw Unsupported() }
    func addGroup(_ group: DeviceGroup) async throws { throw Unsupported() }
    func updateGroup(_ group: DeviceGroup) async throws { throw Unsupported() }
    func deleteGroup(id: GroupID) async throws { throw Unsupported() }
    func addDevice(_ device: Device, at: Date) async throws { throw Unsupported() }
    func updateDevice(_ device: Device, at: Date) async throws -> [DeviceLogEntry] { throw Unsupported() }
    func deleteDevice(id: DeviceID, at: Date) async throws { throw Unsupported() }
    func devices(_ filter: DeviceFilter, page: PageRequest) async throws -> Page<DeviceRecord> { throw Unsupported() }
    func deviceLog(deviceId: DeviceID, page: PageRequest) async throws -> Page<DeviceLogEntry> { throw Unsupported() }
    func addUser(_ user: User) async throws { throw Unsupported() }
    func updateUser(_ user: User) async throws { throw Unsupported() }
    func deleteUser(id: UserID) async throws { throw Unsupported() }
    func users(nameContains: String?, page: PageRequest) async throws -> Page<User> { throw Unsupported() }
    func addBadge(_ badge: Badge) async throws { throw Unsupported() }
    func deleteBadge(identifier: String) async throws { throw Unsupported() }
    func badges(userId: UserID) async throws -> [Badge] { throw Unsupported() }
    func bindTag(_ binding: TagBinding) async throws { throw Unsupported() }
    func unbindTag(uid: String) async throws { throw Unsupported() }
    func tagBindings(deviceId: DeviceID) async throws -> [TagBinding] { throw Unsupported() }
    func registerTag(uid: String, deviceId: DeviceID, at: Date) async throws { throw Unsupported() }
    func activeRentals(userId: UserID?, page: PageRequest) async throws -> Page<Rental> { throw Unsupported() }
    func overdueRentals(at now: Date, page: PageRequest) async throws -> Page<Rental> { throw Unsupported() }
    func history(_ query: HistoryQuery, page: PageRequest) async throws -> Page<Rental> {
        let all = rentals.filter { query.userId == nil || $0.userId == query.userId }
        let start = page.cursor.flatMap(Int.init) ?? 0
        let items = Array(all.dropFirst(start).prefix(page.limit))
        let next = start + items.count < all.count ? String(start + items.count) : nil
        return Page(items: items, nextCursor: next)
    }
}

@Suite("Lending desk (rules + store, injected clock)")
struct LendingDeskTests {
    let clock = ManualClock(t0)
    let store = FakeStore(
        devices: [device("D-1"), device("D-2"), device("D-3", status: .disposed)],
        users: [alice, bob], badges: [aliceBadge, bobBadge],
        tags: ["04112233445501": "D-1", "04112233445502": "D-2", "04112233445503": "D-3"])

    func makeDesk(_ policy: LendingPolicy = LendingPolicy(armDuration: 30)) -> LendingDesk {
        let clock = self.clock
        return LendingDesk(store: store, policy: policy, location: "room-1", now: { clock.now })
    }

    @Test func badgeThenDevicesThenTimeout() async throws {
        let desk = makeDesk()
        #expect(await desk.handle(TagTap(uid: "04A1B2C3")).kind == "armed")
        clock.advance(5)
        #expect(await desk.handle(TagTap(uid: "04112233445501")) ==
            .lent(deviceId: "D-1", model: "iPhone 15", userId: "U-1", userName: "Alice", dueAt: nil))
        clock.advance(5)
        // The session stays armed for more devices (record on the tag this time).
        #expect(await desk.handle(TagTap(uid: "04FFFFFFFFFFFF", deviceIdOnTag: "D-2")).kind == "lent")
        #expect(await desk.currentSession()?.remaining(at: clock.now) == 20)
        clock.advance(20)
        #expect(await desk.currentSession() == nil)
        // Return by whoever taps it: nobody armed now.
        #expect(await desk.handle(TagTap(uid: "04112233445501")) ==
            .returned(deviceId: "D-1", model: "iPhone 15", borrowerId: "U-1", borrowerName: "Alice", returnedBy: nil))
        #expect(await desk.handle(TagTap(uid: "04112233445501")) == .badgeRequired(deviceId: "D-1", model: "iPhone 15"))
        let rentals = await store.rentals
        #expect(rentals.count == 2)
        #expect(rentals[0].location == "room-1")
        #expect(rentals[0].returnedAt == t0.addingTimeInterval(30))
        #expect(rentals[1].isActive)
    }

    @Test func returnWhileArmedRecordsTheArmedUser() async throws {
        let desk = makeDesk()
        _ = await desk.handle(TagTap(uid: "04A1B2C3"))
        _ = await desk.handle(TagTap(uid: "04112233445501"))
        _ = await desk.handle(TagTap(uid: "0123456789ABCDEF")) // Bob replaces Alice
        #expect(await desk.currentSession()?.user == bob)
        let outcome = await desk.handle(TagTap(uid: "04112233445501"))
        #expect(outcome == .returned(deviceId: "D-1", model: "iPhone 15", borrowerId: "U-1", borrowerName: "Alice", returnedBy: "U-2"))
        #expect(await store.rentals[0].returnedBy == "U-2")
    }

    @Test func clientArmAndDisarm() async throws {
        let desk = makeDesk()
        await #expect(throws: LendingError.noSuchUser("U-404")) { try await desk.arm(userId: "U-404") }
        let session = try await desk.arm(userId: "U-2")
        #expect(session.badgeIdentifier == nil)
        #expect(session.expiresAt == t0.addingTimeInterval(30))
        #expect(await desk.handle(TagTap(uid: "04112233445502")).kind == "lent")
        #expect(await desk.disarm() == .disarmed("U-2"))
        #expect(await desk.handle(TagTap(uid: "04112233445501")).kind == "badgeRequired")
        #expect(await desk.disarm() == .disarmed(nil))
    }

    @Test func refusedUnknownAndFailedRecordNothing() async throws {
        let desk = makeDesk()
        _ = await desk.handle(TagTap(uid: "04A1B2C3"))
        #expect(await desk.handle(TagTap(uid: "04112233445503")).kind == "refused")
        #expect(await desk.handle(TagTap(uid: "04998877665544")) == .unknownTag(uid: "04998877665544"))
        #expect(await desk.handle(TagTap(uid: "04998877665544", deviceIdOnTag: "D-404")) ==
            .unknownDevice(deviceId: "D-404", uid: "04998877665544"))
        await store.setFailNextLend(.alreadyLent("D-1", userId: "U-2", userName: "Bob", since: t0))
        let failed = await desk.handle(TagTap(uid: "04112233445501"))
        #expect(failed.kind == "failed")
        #expect(failed.message.contains("already lent to Bob"))
        #expect(await store.rentals.isEmpty)
        // Still armed after those taps.
        #expect(await desk.currentSession()?.user == alice)
    }

    @Test func allHistoryFollowsCursors() async throws {
        let desk = makeDesk(LendingPolicy(armDuration: 1000))
        _ = await desk.handle(TagTap(uid: "04A1B2C3"))
        for uid in ["04112233445501", "04112233445502", "04112233445501", "04112233445501", "04112233445502"] {
            _ = await desk.handle(TagTap(uid: uid))
            clock.advance(1)
        }
        let all = try await store.allHistory(HistoryQuery(userId: "U-1"), pageSize: 2)
        #expect(all.count == 3)
    }
}
