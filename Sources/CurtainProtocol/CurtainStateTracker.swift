/// Builds a ``CurtainStatus`` for devices that report pieces (position pushes, "moving" bits, replies) rather than the
/// `roombridge` controller's STATUS frame, and tells manual operation apart: a motion the client did not command
/// (SwitchBot touch-and-go, the AM43's remote or button) is manual, and while it lasts remote motions are refused
/// exactly as with the controller's MANUAL flag. Pure: the client feeds it what it sends and what the device says.
public struct CurtainStateTracker: Sendable, Hashable {
    public private(set) var status: CurtainStatus?
    public private(set) var battery: Int?
    public private(set) var light: Int?
    public private(set) var calibrated: Bool?
    /// The target of the motion we commanded and that has not ended yet.
    public private(set) var commandedTarget: Int?
    /// The commanded motion has been seen running (until then an "idle" report is the state before it started).
    private var commandSeenMoving = false
    /// By when the commanded motion must have been seen running (the client's clock), if the client said when it
    /// commanded it: a command whose motion never showed (lost, or the motor refused it silently) is forgotten then,
    /// so that a later pull is not taken for it (``expire(now:)``).
    public private(set) var commandedStartDeadline: Duration?
    /// We asked for a stop: the next report without motion information ends the motion.
    private var stopRequested = false

    public init() {}

    /// Records a command the client is about to write.
    public mutating func commanded(_ command: CurtainCommand) {
        commandedStartDeadline = nil
        switch command {
        case .open: commandedTarget = 100
        case .close: commandedTarget = 0
        case .moveTo(let p): commandedTarget = min(max(p, 0), 100)
        case .stop:
            commandedTarget = nil
            stopRequested = true
        case .setSchedule, .sync: return
        }
        commandSeenMoving = false
    }

    /// Records a command written at `now` (the client's clock): its motion must show within `startWithin`.
    public mutating func commanded(_ command: CurtainCommand, at now: Duration, startWithin: Duration) {
        commanded(command)
        if commandedTarget != nil { commandedStartDeadline = now + startWithin }
    }

    /// Forgets a commanded motion that has not started by its deadline.
    public mutating func expire(now: Duration) {
        guard let deadline = commandedStartDeadline, !commandSeenMoving, now > deadline else { return }
        commandedTarget = nil
        commandedStartDeadline = nil
    }

    /// The link went down: motions in flight are no longer ours to finish.
    public mutating func linkLost() { commandedTarget = nil }

    /// Folds what the device said; returns the new status when it changed.
    public mutating func apply(_ events: [CurtainDeviceEvent]) -> CurtainStatus? {
        var position: Int?
        var motion: CurtainMotion?
        var moving: Bool?
        for event in events {
            switch event {
            case .status(let s):
                status = s
                return s
            case .position(let p): position = p
            case .motion(let m): motion = m
            case .moving(let m): moving = m
            case .battery(let b): battery = b
            case .light(let l): light = l
            case .calibrated(let c): calibrated = c
            case .refused:
                commandedTarget = nil  // the motion we asked for will not happen
                stopRequested = false
            case .schedule, .accepted, .loggedIn: break
            }
        }
        guard position != nil || motion != nil || moving != nil else { return nil }
        let before = status
        let previous = status?.position
        let p = position ?? previous ?? 0
        // Direction: said by the device, else toward our target, else from the change of position.
        var m: CurtainMotion
        if let motion {
            m = motion
        } else if moving == false {
            m = .idle
        } else if let target = commandedTarget, target != p {
            m = target > p ? .opening : .closing
        } else if let previous, previous != p {
            m = p > previous ? .opening : .closing
        } else if moving == true {
            m = status?.motion ?? .idle
            // The device says it moves but not which way (a SwitchBot's first advertisement of a pull still
            // carries the position it started from): from an end stop it can only go one way, so the pull is
            // known, and refused commands with it, one advertisement sooner; elsewhere the next position tells.
            if m == .idle, commandedTarget == nil, !stopRequested {
                if p == 0 { m = .opening } else if p == 100 { m = .closing }
            }
        } else {
            m = commandedTarget == p ? .idle : (status?.motion ?? .idle)
        }
        // A position push at an end stop, or at our target, or after our stop, ends the motion.
        if moving == nil, motion == nil, (p == 0 && m == .closing) || (p == 100 && m == .opening)
            || commandedTarget == p || stopRequested {
            m = .idle
        }
        if m != .idle { stopRequested = false }
        let wasMoving = (status?.motion ?? .idle) != .idle
        var manual = status?.manual ?? false
        if m != .idle, !wasMoving { manual = commandedTarget == nil }
        let target: Int
        if m == .idle {
            target = p
            stopRequested = false
            // An idle report before the commanded motion started is the state before it, not its end.
            if commandSeenMoving || commandedTarget == p { commandedTarget = nil }
        } else {
            commandSeenMoving = true
            if let t = commandedTarget, !manual { target = t } else { target = m == .opening ? 100 : 0 }
        }
        status = CurtainStatus(motion: m, position: p, target: target, manual: manual)
        return status == before ? nil : status
    }
}
