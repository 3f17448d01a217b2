import Testing
@testable import CurtainProtocol

/// Manual operation and motion for curtains that report pieces (SwitchBot advertisements, AM43 position pushes).
@Suite struct StateTrackerTests {
    @Test func commandedMotionIsNotManual() {
        var t = CurtainStateTracker()
        _ = t.apply([.position(0), .moving(false)])
        t.commanded(.open)
        // An advertisement from before the motor started: still idle, the command stays ours.
        #expect(t.apply([.position(0), .moving(false)]) == nil)
        let s = t.apply([.position(10), .moving(true)])
        #expect(s == CurtainStatus(motion: .opening, position: 10, target: 100, manual: false))
        #expect(t.apply([.position(100), .moving(false)])?.motion == .idle)
        #expect(t.commandedTarget == nil)
    }

    /// A command whose motion never shows is forgotten after its start window: a pull after it is manual. Within
    /// the window, and once it ran, the motion stays the daemon's own.
    @Test func commandedMotionThatNeverStartedExpires() {
        var t = CurtainStateTracker()
        _ = t.apply([.position(0), .moving(false)])
        t.commanded(.open, at: .seconds(10), startWithin: .seconds(5))
        t.expire(now: .seconds(14))
        #expect(t.commandedTarget == 100)
        t.expire(now: .seconds(16))
        #expect(t.commandedTarget == nil)
        #expect(t.apply([.position(5), .moving(true)])?.isManualMotionActive == true)

        var running = CurtainStateTracker()
        _ = running.apply([.position(0), .moving(false)])
        running.commanded(.open, at: .seconds(10), startWithin: .seconds(5))
        _ = running.apply([.position(5), .moving(true)])
        running.expire(now: .seconds(60))  // a long move outlasts the window: still ours
        #expect(running.apply([.position(50), .moving(true)])?.manual == false)
        #expect(running.status?.manual == false)
    }

    @Test func uncommandedMotionIsManualUntilItEnds() {
        var t = CurtainStateTracker()
        _ = t.apply([.position(50), .moving(false)])
        let s = t.apply([.position(45), .moving(true)])
        #expect(s?.isManualMotionActive == true && s?.motion == .closing && s?.target == 0)
        #expect(t.apply([.position(30), .moving(false)])?.isManualMotionActive == false)
    }

    /// A pull from an end stop is manual at the first report that the curtain moves, before its position changes
    /// (roombridge-bench measured one advertisement interval without it); in between, the direction waits for the
    /// next position; the daemon's own command from an end stop stays its own.
    @Test func pullFromAnEndStopIsManualAtOnce() {
        var closed = CurtainStateTracker()
        _ = closed.apply([.position(0), .moving(false)])
        #expect(closed.apply([.position(0), .moving(true)]) == CurtainStatus(motion: .opening, position: 0, target: 100, manual: true))
        var open = CurtainStateTracker()
        _ = open.apply([.position(100), .moving(false)])
        #expect(open.apply([.position(100), .moving(true)])?.isManualMotionActive == true)
        #expect(open.status?.motion == .closing)
        var half = CurtainStateTracker()
        _ = half.apply([.position(50), .moving(false)])
        #expect(half.apply([.position(50), .moving(true)]) == nil)
        #expect(half.apply([.position(55), .moving(true)]) == CurtainStatus(motion: .opening, position: 55, target: 100, manual: true))
        var ours = CurtainStateTracker()
        _ = ours.apply([.position(0), .moving(false)])
        ours.commanded(.open)
        #expect(ours.apply([.position(0), .moving(true)])?.manual == false)
    }

    @Test func positionPushesInferMotionAndStop() {
        var t = CurtainStateTracker()
        _ = t.apply([.position(0)])
        t.commanded(.moveTo(60))
        #expect(t.apply([.accepted]) == nil)
        #expect(t.apply([.position(5)]) == CurtainStatus(motion: .opening, position: 5, target: 60))
        t.commanded(.stop)
        #expect(t.apply([.position(8)]) == CurtainStatus(motion: .idle, position: 8, target: 8))
        // The remote moves it: manual, ending at the end stop.
        #expect(t.apply([.position(4)])?.isManualMotionActive == true)
        #expect(t.apply([.position(0)])?.motion == .idle)
    }

    @Test func refusedCommandIsForgotten() {
        var t = CurtainStateTracker()
        _ = t.apply([.position(20), .moving(false)])
        t.commanded(.open)
        _ = t.apply([.refused(.switchBot(.error))])
        #expect(t.commandedTarget == nil)
        #expect(t.apply([.position(25), .moving(true)])?.manual == true)
    }

    @Test func levelsAndFullStatus() {
        var t = CurtainStateTracker()
        _ = t.apply([.battery(80), .light(30), .calibrated(true)])
        #expect(t.battery == 80 && t.light == 30 && t.calibrated == true)
        let s = CurtainStatus(motion: .closing, position: 40, target: 0, manual: true)
        #expect(t.apply([.status(s)]) == s)
    }
}
