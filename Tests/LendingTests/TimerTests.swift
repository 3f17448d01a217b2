import Foundation
import Lending
import RoomBridgeCore
import Testing
import TestSupport

/// The coordinator's timers (the armed session's end, the next overdue announcement) run on its injected clock:
/// moved by the test, they fire at once, and not a moment before.
@Suite("Lending timers on the injected clock")
struct LendingTimerTests {
    @Test func theArmedSessionEndsWhenTheClockSaysSoAndNotBefore() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let clock = ManualClock(t0)
        let state = SystemState()
        let lending = LendingCoordinator(store: f.store, state: state, policy: LendingPolicy(armDuration: 30),
                                         clock: clock.lending)
        _ = try await lending.arm(userId: "U-2")
        try await eventually("the expiry timer to wait on the clock") { clock.sleeping == 1 }
        clock.advance(29.9)
        #expect(clock.sleeping == 1)
        #expect(await state.snapshot().lending.armed?.userId == "U-2")
        clock.advance(0.1)
        try await eventually("the session to end on the injected clock, without real waiting", timeout: .seconds(5)) {
            await state.snapshot().lending.armed == nil
        }
        let last = await state.snapshot().lending.lastOutcome
        #expect(last?.kind == .disarmed && last?.message.contains("timed out") == true)
    }

    @Test func anOverdueRentalIsAnnouncedWhenItsDueTimePassesOnTheClock() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let clock = ManualClock(t0)
        let state = SystemState()
        let lending = LendingCoordinator(store: f.store, state: state, clock: clock.lending)
        _ = try await lending.lend(deviceId: "D-1", userId: "U-1", dueAt: t0.addingTimeInterval(3600))
        await lending.startOverdueWatch()
        try await eventually("the overdue timer to wait on the clock") { clock.sleeping == 1 }
        clock.advance(3600)  // due at 3600 s: not overdue yet
        #expect(await state.snapshot().lending.overdue == 0)
        clock.advance(1)
        try await eventually("the overdue announcement", timeout: .seconds(5)) {
            await state.snapshot().lending.overdue == 1
        }
    }
}
