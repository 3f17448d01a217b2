import BlueZSimulator
import CurtainProtocol
import Synchronization
import Testing
import TestSupport
@testable import BlueZClient

/// The wall clock a daemon-kept schedule reads, set by the test. Monotonic time (timeouts, backoff, polls) stays
/// real; a wait of a second or more — the schedule's own — lasts until the test sets the time again (or is
/// cancelled), so the schedule sees exactly the times the test chooses.
final class SteppedWallClock: CurtainClock {
    private let real = SystemCurtainClock()
    private let state: Mutex<(seconds: Double, generation: Int, longWaits: Int)>

    init(_ seconds: Double) { state = Mutex((seconds, 0, 0)) }

    func elapsed() -> Duration { real.elapsed() }
    func secondsOfDay() -> Double { state.withLock { $0.seconds } }

    func sleep(for duration: Duration) async throws {
        guard duration >= .seconds(1) else { return try await real.sleep(for: duration) }
        let generation = state.withLock { s in
            s.longWaits += 1
            return s.generation
        }
        while state.withLock({ $0.generation }) == generation { try await Task.sleep(for: .milliseconds(2)) }
    }

    /// Sets the local time of day and wakes the schedule's wait.
    func set(_ seconds: Double) { state.withLock { $0.seconds = seconds; $0.generation += 1 } }
    /// How many schedule waits have begun: one more after ``set(_:)`` means the schedule looked at the new time.
    var longWaits: Int { state.withLock { $0.longWaits } }
}

/// The schedule the daemon keeps for an AM43 (which keeps none), on a wall clock the test moves: it fires at its
/// time and not before, once, and is refused like any command while the motor's own remote moves the blind.
@Suite(.serialized) struct DaemonScheduleClockTests {
    static let sevenAM = 7.0 * 3600

    /// A closed AM43, connected, with `morning` (open 07:00) kept by the daemon; the wall clock at 06:58.
    func scheduled(_ body: (Rig, SteppedWallClock) async throws -> Void) async throws {
        let clock = SteppedWallClock(Self.sevenAM - 120)
        var client = Rig.fastClient()
        client.profile = .am43
        client.clock = clock
        try await Rig.with({ $0.device = .am43(.init()); $0.initialPosition = 0 }, client: client) { rig in
            try await rig.wait("connected") { $0.connection == .connected && $0.status != nil }
            try await rig.client.setSchedule(morning)
            try await rig.wait("the daemon keeps the schedule") { $0.schedule == morning }
            try await body(rig, clock)
        }
    }

    /// How many OPEN commands the simulated AM43 received.
    func opens(_ rig: Rig) async throws -> Int {
        let open = try CurtainProfile.am43.codec.frames(for: .command(.open))
        return await rig.sim.writes.filter { open.contains($0) }.count
    }

    /// Sets the time and waits until the schedule has looked at it (its next wait began).
    func move(_ clock: SteppedWallClock, to seconds: Double) async throws {
        let before = clock.longWaits
        clock.set(seconds)
        try await eventually("the schedule to look at the new time") { clock.longWaits > before }
    }

    @Test func firesOpenAtItsTimeOnceAndNotBefore() async throws {
        try await scheduled { rig, clock in
            try await move(clock, to: Self.sevenAM - 2)  // two seconds early: nothing is sent
            #expect(try await opens(rig) == 0)
            #expect(await rig.sim.deviceStatus.motion == .idle)

            clock.set(Self.sevenAM - 0.2)  // due: OPEN is written and the blind opens
            try await rig.run(until: "the blind open") { $0.status?.position == 100 && $0.status?.motion == .idle }
            #expect(try await opens(rig) == 1)

            try await move(clock, to: Self.sevenAM + 1)  // just after: not sent again
            try await move(clock, to: Self.sevenAM + 60)
            #expect(try await opens(rig) == 1)
        }
    }

    @Test func isRefusedWhileTheRemoteMovesTheBlind() async throws {
        try await scheduled { rig, clock in
            _ = try await rig.sim.handle(.press(.open))  // the motor's own remote: a motion the daemon did not command
            try await rig.run(until: "a manual motion", step: 0.1) { $0.status?.manual == true && $0.status?.motion == .opening }

            try await move(clock, to: Self.sevenAM - 0.2)  // due while the remote moves it: refused, nothing written
            #expect(try await opens(rig) == 0)
            #expect(await rig.client.snapshot.status?.manual == true)
        }
    }
}
