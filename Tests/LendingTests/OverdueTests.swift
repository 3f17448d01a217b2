import Foundation
import Lending
import LendingStore
import RoomBridgeCore
import Testing

/// Overdue announcements through the coordinator, the SQLite store and SystemState, on a clock
/// the test moves (checks are called directly; nothing waits for the timer).
@Suite("Overdue announcements (injected clock)")
struct OverdueTests {
    let clock = ManualClock(t0)

    func coordinator(_ f: StoreFixture, _ state: SystemState) -> LendingCoordinator {
        let clock = self.clock
        return LendingCoordinator(store: f.store, state: state, policy: LendingPolicy(armDuration: 30),
                                  location: "room-1", now: { clock.now })
    }

    /// Every overdue event the state has emitted so far (from its replay ring).
    func overdueEvents(_ state: SystemState) async throws -> [OverdueNotice] {
        let subscription = await state.subscribe(since: 0, counted: false)
        let last = subscription.snapshot.seq
        var notices: [OverdueNotice] = []
        guard last > 0 else { return notices }
        for try await event in subscription.events {
            if case .overdue(let notice) = event.payload { notices.append(notice) }
            if event.seq >= last { break }
        }
        return notices
    }

    @Test func announcedOnceWhenDueTimePassesAlsoAfterARestart() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let state = SystemState()
        let lending = coordinator(f, state)
        let lent = try await lending.lend(deviceId: "D-1", userId: "U-1", dueAt: t0.addingTimeInterval(100))
        _ = try await lending.lend(deviceId: "D-2", userId: "U-2", dueAt: t0.addingTimeInterval(500))
        #expect(await state.snapshot().lending.overdue == 0)

        clock.advance(100)  // due at 100 is not overdue at 100
        #expect(try await lending.checkOverdue().isEmpty)
        clock.advance(1)
        let announced = try await lending.checkOverdue()
        #expect(announced.map(\.rentalId) == [lent.id])
        #expect(announced.first?.message.contains("roombridgectl renew D-1") == true)
        #expect(announced.first?.userName == "Alice" && announced.first?.dueAt == t0.addingTimeInterval(100))
        #expect(await state.snapshot().lending.overdue == 1)
        clock.advance(60)
        #expect(try await lending.checkOverdue().isEmpty)  // once
        #expect(try await overdueEvents(state).map(\.deviceId) == ["D-1"])

        // A restart: a new coordinator and state on the same store announce nothing again, but
        // count it, and announce what fell due meanwhile.
        clock.advance(1000)
        let restartedState = SystemState()
        let restarted = coordinator(f, restartedState)
        #expect(try await restarted.checkOverdue().map(\.deviceId) == ["D-2"])
        #expect(await restartedState.snapshot().lending.overdue == 2)
        #expect(try await overdueEvents(restartedState).map(\.deviceId) == ["D-2"])
    }

    @Test func returnsAndRenewalsUpdateTheCountAndARenewalThatFallsDueIsAnnouncedAgain() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let state = SystemState()
        let lending = coordinator(f, state)
        _ = try await lending.lend(deviceId: "D-1", userId: "U-1", dueAt: t0.addingTimeInterval(10))
        _ = try await lending.lend(deviceId: "D-2", userId: "U-1", dueAt: t0.addingTimeInterval(10))
        clock.advance(20)
        #expect(try await lending.checkOverdue().count == 2)
        #expect(await state.snapshot().lending.overdue == 2)

        _ = try await lending.returnDevice(deviceId: "D-2")
        #expect(await state.snapshot().lending.overdue == 1)
        _ = try await lending.renew(deviceId: "D-1", dueAt: clock.now.addingTimeInterval(100))
        #expect(await state.snapshot().lending.overdue == 0)
        clock.advance(50)
        #expect(try await lending.checkOverdue().isEmpty)
        clock.advance(51)
        #expect(try await lending.checkOverdue().map(\.deviceId) == ["D-1"])  // the new due date passed
        #expect(await state.snapshot().lending.overdue == 1)
    }

    /// Started by the daemon: the first check runs at once and announces what fell due while
    /// it was stopped.
    @Test func startingTheWatchChecksAtOnce() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        _ = try await coordinator(f, SystemState()).lend(deviceId: "D-1", userId: "U-1", dueAt: t0.addingTimeInterval(10))
        clock.advance(3600)
        let state = SystemState()
        await coordinator(f, state).startOverdueWatch()
        #expect(await state.snapshot().lending.overdue == 1)
        #expect(try await overdueEvents(state).map(\.deviceId) == ["D-1"])
    }
}
