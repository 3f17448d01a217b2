#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CurtainProtocol

/// The link between the daemon and the curtain controller.
public enum CurtainConnection: String, Sendable, Codable, CaseIterable {
    /// No curtain is configured; the curtain side is off.
    case disabled
    /// Looking for the controller (discovery, or waiting for the adapter/bluetoothd).
    case searching
    /// Connecting and resolving its GATT services.
    case connecting
    /// Connected, subscribed, state adopted from the controller.
    case connected
    /// Not connected; the daemon retries with backoff.
    case disconnected
    /// An on-demand curtain (SwitchBot) between commands: the link is released, its state comes from its
    /// advertisements, and the next command connects.
    case standby

    /// True when the curtain's state is known and commands are taken (connected, or on demand between commands).
    public var acceptsCommands: Bool { self == .connected || self == .standby }
}

/// The last request a person or client made of the curtain.
public enum CurtainRequestKind: String, Sendable, Codable, CaseIterable {
    case search, open, close, stop, moveTo, setSchedule, sync, reconnect
}

/// A request, who made it, when, and whether the curtain refused it.
public struct CurtainRequest: Sendable, Codable, Equatable {
    public var kind: CurtainRequestKind
    /// Target position for `moveTo`.
    public var position: Int?
    public var at: Date
    /// Who asked, as the change logs write it ("unix:aiko", "web:Aiko via unix:roombridge-web"); nil when the
    /// daemon itself asked (a schedule, a search).
    public var by: String?
    /// Why the request was refused ("the wall switch is moving the curtain…"); nil while it is carried out or once
    /// it was accepted.
    public var refused: String?

    public init(kind: CurtainRequestKind, position: Int? = nil, at: Date, by: String? = nil, refused: String? = nil) {
        self.kind = kind
        self.position = position
        self.at = at
        self.by = by
        self.refused = refused
    }
}

/// The curtain as last reported by the controller, plus the daemon's view of the link.
public struct CurtainState: Sendable, Codable, Equatable {
    /// The curtain's name in the configuration (`[curtains.NAME]`, `curtain` for the single-curtain keys): what
    /// the `name` parameter of `io.roombridge.Curtain` methods takes. (`name` is what the device advertises.)
    public var id: String?
    public var connection: CurtainConnection
    /// The controller's Bluetooth address, once found.
    public var address: String?
    /// The controller's advertised name, once found.
    public var name: String?
    public var lastRequest: CurtainRequest?
    public var motion: CurtainMotion
    /// Percent open (0 closed, 100 open); nil until the controller reported it.
    public var position: Int?
    /// Where the current motion ends, percent open.
    public var target: Int?
    /// The open schedule as the controller reported it (the controller is the source of truth).
    public var openSchedule: CurtainSchedule.Entry?
    /// The close schedule as the controller reported it.
    public var closeSchedule: CurtainSchedule.Entry?
    /// The latest motion was started by the wall switch.
    public var manual: Bool
    /// The latest motion was started by the controller's own schedule.
    public var scheduled: Bool
    /// The last failure (connection, write, adapter), in words a person can act on.
    public var lastError: String?
    /// The curtain's profile (`roombridge`, `switchbot`, `am43`).
    public var profile: String?
    /// Who keeps the schedule: `device` (it stores and fires it) or `daemon` (for devices that keep none).
    public var scheduleSource: String?
    /// Battery percent, where the device reports it.
    public var battery: Int?
    /// Light level percent, where the device reports it.
    public var light: Int?
    /// While it moves: when the motion should end, from the curtain's measured speed (``MotionProgress``).
    public var finishesAt: Date?

    public init(id: String? = nil, connection: CurtainConnection = .disconnected, address: String? = nil, name: String? = nil,
                lastRequest: CurtainRequest? = nil, motion: CurtainMotion = .idle, position: Int? = nil,
                target: Int? = nil, openSchedule: CurtainSchedule.Entry? = nil, closeSchedule: CurtainSchedule.Entry? = nil,
                manual: Bool = false, scheduled: Bool = false, lastError: String? = nil) {
        self.id = id
        self.connection = connection
        self.address = address
        self.name = name
        self.lastRequest = lastRequest
        self.motion = motion
        self.position = position
        self.target = target
        self.openSchedule = openSchedule
        self.closeSchedule = closeSchedule
        self.manual = manual
        self.scheduled = scheduled
        self.lastError = lastError
    }

    /// The wall-switch rule: a motion started by the wall switch is in progress,
    /// so remote open/close/stop/move-to are refused.
    public var manualOperationActive: Bool { manual && motion != .idle }
}

/// What became of a group command (`io.roombridge.Curtain` with a group's name, `all` or `*`) on one of the group's
/// curtains.
public struct CurtainOutcome: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// The curtain took the open, close or move and is moving.
        case moving
        /// The curtain took a command that is no motion (stop, schedule, sync, reconnect).
        case done
        /// Refused: someone is moving it by hand (the person at the curtain wins).
        case manual
        /// Refused: the curtain could not be reached.
        case unreachable
        /// Refused otherwise; `error` and `message` say why.
        case failed
    }

    /// The curtain's name.
    public var curtain: String
    public var outcome: Kind
    /// The `io.roombridge.Curtain` error it failed with, when it did.
    public var error: String?
    /// Why it failed, and what to do.
    public var message: String?
    /// Its battery, percent, where it reports one.
    public var battery: Int?
    /// Its battery is at or below the first of ``BatteryWatch/thresholds`` (20 %): change or charge it soon.
    public var lowBattery: Bool

    public init(curtain: String, outcome: Kind, error: String? = nil, message: String? = nil, battery: Int? = nil) {
        self.curtain = curtain
        self.outcome = outcome
        self.error = error
        self.message = message
        self.battery = battery
        self.lowBattery = battery.map(BatteryWatch.isLow) ?? false
    }
}

/// Curtains commanded together under one name: a key of the configuration's `[curtain.groups]` table, e.g.
/// `window = ["left", "right"]`, as `io.roombridge.Curtain.GetState` lists it. Its name goes wherever a curtain's
/// does (`name` parameters, `roombridgectl curtain --name`); ``every`` means every curtain without being declared.
public struct CurtainGroup: Sendable, Codable, Equatable {
    /// The name that means every configured curtain (`*` too, at the Varlink interface).
    public static let every = "all"

    /// The group's name (what `name` parameters take).
    public var name: String
    /// Its curtains' names, in the configuration's order, each once.
    public var curtains: [String]

    public init(name: String, curtains: [String]) {
        self.name = name
        self.curtains = curtains
    }
}

/// Estimates when a curtain's motion ends from its measured speed: percent per second over the motion so far, or,
/// until the motion has moved a percent, over the motion before it. Pure: the caller gives the time.
public struct MotionProgress: Sendable {
    private var start: (motion: CurtainMotion, position: Int, at: Date)?
    /// Percent per second, as last measured.
    public private(set) var speed: Double?

    public init() {}

    /// Takes the curtain's state at `now`; returns when its motion should end: nil while it is idle, and before any
    /// speed was measured.
    public mutating func estimate(_ curtain: CurtainState, now: Date) -> Date? {
        guard curtain.motion != .idle, let position = curtain.position, let target = curtain.target else {
            start = nil
            return nil
        }
        if let s = start, s.motion == curtain.motion {
            let moved = abs(position - s.position)
            let elapsed = now.timeIntervalSince(s.at)
            if moved >= 1, elapsed > 0 { speed = Double(moved) / elapsed }
        } else {
            start = (curtain.motion, position, now)
        }
        guard let speed, speed > 0 else { return nil }
        return now.addingTimeInterval(Double(abs(target - position)) / speed)
    }
}

/// A curtain's battery fell to one of ``BatteryWatch/thresholds``: change or charge it soon.
public struct BatteryNotice: Sendable, Codable, Equatable {
    /// The curtain's name.
    public var curtain: String
    /// Its battery now, percent.
    public var battery: Int
    /// The threshold it fell to or below, percent.
    public var threshold: Int

    public init(curtain: String, battery: Int, threshold: Int) {
        self.curtain = curtain
        self.battery = battery
        self.threshold = threshold
    }

    /// "the left curtain's battery is at 12 %".
    public var sentence: String { "the \(curtain) curtain's battery is at \(battery) %" }
}

/// Tells when a curtain's battery crosses a threshold going down, once per crossing: 20 %, then 10 %, then 5 %. A
/// battery that comes back above the first threshold by ``BatteryWatch/hysteresis`` (changed or charged) starts over,
/// so that a reading that wavers around a threshold is not told twice. Pure: the caller feeds the readings.
public struct BatteryWatch: Sendable {
    public static let thresholds = [20, 10, 5]
    public static let hysteresis = 5

    /// Whether `battery` is low: at or below the first threshold.
    public static func isLow(_ battery: Int) -> Bool { battery <= (thresholds.first ?? 0) }
    /// The lowest threshold told so far (nil: none since the battery was last above them).
    private var told: Int?

    public init() {}

    /// Takes a reading; returns the threshold it crossed, when it crossed one not told yet (the lowest, when a
    /// reading skips several).
    public mutating func observe(_ battery: Int?) -> Int? {
        guard let battery else { return nil }
        if battery > (Self.thresholds.first ?? 0) + Self.hysteresis {
            told = nil
            return nil
        }
        guard let crossed = Self.thresholds.last(where: { battery <= $0 }), crossed < (told ?? Int.max) else { return nil }
        told = crossed
        return crossed
    }
}
