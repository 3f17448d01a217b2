import CurtainProtocol

/// The curtain controller's firmware as pure, deterministic logic: motor, wall switch, schedule, and the
/// frames it notifies (curtain-gatt.md). No I/O and no D-Bus: the simulator drives it with a clock.
///
/// Time is seconds since local midnight of day 0 (`now`); the time of day is `now mod 86 400`.
/// Call ``advance(to:)`` to let time pass; every method returns the frames the controller would notify,
/// in order, each stamped with the simulated time it is sent at.
public struct CurtainMotorModel: Sendable {
    /// A frame and the simulated time it is sent at.
    public struct TimedFrame: Sendable, Hashable {
        public var time: Double
        public var frame: CurtainFrame
    }

    /// The outcome of a write to the command characteristic.
    public enum WriteOutcome: Sendable, Hashable {
        /// Accepted; these frames follow.
        case accepted([TimedFrame])
        /// A write request refused with this ATT error code (nothing changed).
        case attError(UInt8)
        /// A write-without-response that was refused: an ERROR frame is notified instead.
        case errorFrame(TimedFrame)
    }

    /// A press on the wall switch.
    public enum SwitchPress: String, Sendable, Hashable, CaseIterable {
        /// The "up" button: opens; stops if already opening.
        case open
        /// The "down" button: closes; stops if already closing.
        case close
        /// The "stop" button.
        case stop
    }

    /// Motor speed in percent per second.
    public var speed: Double
    /// Interval of STATUS frames while moving, seconds.
    public var statusInterval: Double
    /// The schedule the controller acts on.
    public private(set) var schedule: CurtainSchedule
    /// Exact position (0–100).
    public private(set) var exactPosition: Double
    /// Target position.
    public private(set) var target: Int
    /// Motor state.
    public private(set) var motion: CurtainMotion
    /// FL bit0.
    public private(set) var manual: Bool
    /// FL bit1.
    public private(set) var scheduled: Bool
    /// Battery percent (advertised only).
    public var battery: Int
    /// Simulated time, seconds since midnight of day 0.
    public private(set) var now: Double

    private var nextStatusAt: Double?

    public init(position: Int = 0, schedule: CurtainSchedule = .disabled, speed: Double = 10,
                statusInterval: Double = 0.5, now: Double = 0, battery: Int = 87) {
        self.exactPosition = Double(min(max(position, 0), 100))
        self.target = min(max(position, 0), 100)
        self.schedule = schedule
        self.speed = speed
        self.statusInterval = statusInterval
        self.motion = .idle
        self.manual = false
        self.scheduled = false
        self.now = now
        self.battery = battery
    }

    /// Reported position (rounded).
    public var position: Int { Int(exactPosition.rounded()) }

    /// The current STATUS (what a read of the status characteristic returns).
    public var status: CurtainStatus {
        CurtainStatus(motion: motion, position: position, target: target, manual: manual, scheduled: scheduled)
    }

    /// Current advertised service data.
    public var advertisement: CurtainAdvertisement {
        CurtainAdvertisement(position: position, motion: motion, manual: manual, scheduled: scheduled, battery: battery)
    }

    /// The time of day, as minutes and seconds since midnight.
    public var secondsOfDay: Double {
        let d = now.truncatingRemainder(dividingBy: 86_400)
        return d < 0 ? d + 86_400 : d
    }

    // MARK: Writes

    /// Handles bytes written to the command characteristic (`withResponse`: write request vs command).
    public mutating func write(_ bytes: [UInt8], withResponse: Bool) -> WriteOutcome {
        let command: CurtainCommand
        do throws(CurtainDecodeError) {
            command = try CurtainCommand.decode(bytes)
        } catch {
            if withResponse { return .attError(error.attError) }
            return .errorFrame(TimedFrame(time: now, frame: .error(opcode: error.opcode, code: error.errorCode)))
        }
        return .accepted(apply(command))
    }

    /// Applies a decoded command as if it came over BLE.
    public mutating func apply(_ command: CurtainCommand) -> [TimedFrame] {
        switch command {
        case .open: return startMotion(to: 100, manual: false, scheduled: false)
        case .close: return startMotion(to: 0, manual: false, scheduled: false)
        case .moveTo(let p): return startMotion(to: min(max(p, 0), 100), manual: false, scheduled: false)
        case .stop:
            manual = false
            scheduled = false
            return stopMotion()
        case .setSchedule(let s):
            schedule = s
            return [stamp(.schedule(s))]
        case .sync:
            return [stamp(.status(status)), stamp(.schedule(schedule))]
        }
    }

    /// Frames sent right after a client enables notifications: STATUS then SCHEDULE.
    public func subscribeFrames() -> [TimedFrame] {
        [stamp(.status(status)), stamp(.schedule(schedule))]
    }

    // MARK: Local inputs

    /// A press on the wall switch; sets MANUAL when it starts a motion.
    public mutating func press(_ button: SwitchPress) -> [TimedFrame] {
        switch (button, motion) {
        case (.stop, _), (.open, .opening), (.close, .closing):
            return stopMotion()
        case (.open, _):
            return startMotion(to: 100, manual: true, scheduled: false)
        case (.close, _):
            return startMotion(to: 0, manual: true, scheduled: false)
        }
    }

    /// Changes the schedule on the controller itself (its own UI / a reset); notifies SCHEDULE.
    public mutating func setScheduleLocally(_ s: CurtainSchedule) -> [TimedFrame] {
        schedule = s
        return [stamp(.schedule(s))]
    }

    // MARK: Time

    /// Lets time pass until `time`, returning the frames sent meanwhile (periodic STATUS, arrival,
    /// schedule firings). Times earlier than `now` are ignored.
    public mutating func advance(to time: Double) -> [TimedFrame] {
        var frames: [TimedFrame] = []
        guard time > now else { return frames }
        while true {
            let arrival = arrivalTime
            let fire = nextScheduleFiring()
            let candidates = [nextStatusAt, arrival, fire?.time].compactMap { $0 }
            guard let next = candidates.min(), next <= time else { break }
            move(to: next)
            if let arrival, next >= arrival {
                exactPosition = Double(target)
                motion = .idle
                nextStatusAt = nil
                frames.append(stamp(.status(status)))
            } else if let fire, next >= fire.time {
                frames += startMotion(to: fire.open ? 100 : 0, manual: false, scheduled: true)
            } else {
                frames.append(stamp(.status(status)))
                nextStatusAt = next + max(statusInterval, 0.01)
            }
        }
        move(to: time)
        return frames
    }

    /// Lets `seconds` pass.
    public mutating func advance(by seconds: Double) -> [TimedFrame] {
        advance(to: now + seconds)
    }

    // MARK: Internals

    private func stamp(_ f: CurtainFrame) -> TimedFrame { TimedFrame(time: now, frame: f) }

    private var arrivalTime: Double? {
        guard motion != .idle, speed > 0 else { return nil }
        return now + abs(Double(target) - exactPosition) / speed
    }

    /// Moves the motor (not the events) to `time`.
    private mutating func move(to time: Double) {
        guard time > now else { return }
        if motion != .idle {
            let step = (time - now) * speed
            exactPosition = motion == .opening
                ? min(exactPosition + step, Double(target))
                : max(exactPosition - step, Double(target))
        }
        now = time
    }

    private mutating func startMotion(to newTarget: Int, manual: Bool, scheduled: Bool) -> [TimedFrame] {
        self.manual = manual
        self.scheduled = scheduled
        target = newTarget
        if Double(newTarget) == exactPosition {
            motion = .idle
            nextStatusAt = nil
        } else {
            motion = Double(newTarget) > exactPosition ? .opening : .closing
            nextStatusAt = now + max(statusInterval, 0.01)
        }
        return [stamp(.status(status))]
    }

    private mutating func stopMotion() -> [TimedFrame] {
        exactPosition = exactPosition.rounded()
        target = position
        motion = .idle
        nextStatusAt = nil
        return [stamp(.status(status))]
    }

    /// The next enabled schedule time strictly after `now` (open wins a tie... close is applied after it
    /// only if it is strictly later; equal times fire open).
    private func nextScheduleFiring() -> (time: Double, open: Bool)? {
        var best: (time: Double, open: Bool)?
        let day = (now / 86_400).rounded(.down) * 86_400
        for (enabled, t, open) in [(schedule.openEnabled, schedule.openTime, true),
                                   (schedule.closeEnabled, schedule.closeTime, false)] where enabled {
            var at = day + Double(t.minutesSinceMidnight * 60)
            if at <= now { at += 86_400 }
            if best == nil || at < best!.time { best = (at, open) }
        }
        return best
    }
}
