import CurtainProtocol
import Foundation
import RoomBridgeCore
import Testing

/// When a moving curtain should arrive: from its speed measured over the motion so far, or the motion before.
@Suite struct MotionProgressTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func moving(_ motion: CurtainMotion, at position: Int, to target: Int) -> CurtainState {
        CurtainState(connection: .connected, motion: motion, position: position, target: target)
    }

    @Test func measuresTheSpeedOfTheMotionAndEstimatesTheRest() {
        var progress = MotionProgress()
        // The first sample of the first motion: no speed known yet.
        #expect(progress.estimate(moving(.opening, at: 0, to: 100), now: t0) == nil)
        // 20 % in 2 s: 10 %/s, 80 % to go.
        #expect(progress.estimate(moving(.opening, at: 20, to: 100), now: t0 + 2) == t0 + 10)
        #expect(progress.speed == 10)
        #expect(progress.estimate(CurtainState(connection: .connected, motion: .idle, position: 100), now: t0 + 10) == nil)

        // The next motion starts from the speed measured before, then measures its own.
        #expect(progress.estimate(moving(.closing, at: 100, to: 50), now: t0 + 20) == t0 + 25)
        #expect(progress.estimate(moving(.closing, at: 90, to: 50), now: t0 + 24) == t0 + 40)  // slower: 2.5 %/s
    }

    @Test func aReversalStartsAMeasurementAndUnknownPositionsEstimateNothing() {
        var progress = MotionProgress()
        _ = progress.estimate(moving(.opening, at: 0, to: 100), now: t0)
        _ = progress.estimate(moving(.opening, at: 10, to: 100), now: t0 + 1)
        // Reversed without stopping: measured from the reversal (10 %/s kept until then).
        #expect(progress.estimate(moving(.closing, at: 10, to: 0), now: t0 + 2) == t0 + 3)
        #expect(progress.estimate(moving(.closing, at: 8, to: 0), now: t0 + 3) == t0 + 7)  // 2 %/s
        #expect(progress.estimate(CurtainState(connection: .connected, motion: .opening), now: t0 + 4) == nil)
    }
}
