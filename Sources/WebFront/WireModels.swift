import Foundation
import struct RoomBridgeCore.LendingArm
import struct RoomBridgeCore.LendingOutcome
import struct RoomBridgeCore.PresenceChangeEvent
import struct RoomBridgeCore.PresenceState

// What roombridge-web reads from roombridged's Watch and GetState about the curtains (the fields
// the kiosk and the curtain page show; unknown fields are ignored). Inventory and lending replies
// are RoomBridgeAPI's methods over the domain's own types; `LendingOutcome` and `LendingArm` are
// the contract's own types.

/// `io.roombridge.State` type `ScheduleEntry`: an open or close time (HH:MM) and whether it is on.
public struct ScheduleEntry: Codable, Sendable, Equatable {
    public var time: String
    public var enabled: Bool
}

/// `io.roombridge.State` type `Curtain` (the fields the kiosk and the curtain page show).
public struct Curtain: Codable, Sendable, Equatable {
    /// The curtain's name in the daemon's configuration (`curtain` for the single curtain of the `[curtain]` keys);
    /// what `io.roombridge.Curtain` methods take as `name`. (`name` is what the device advertises.)
    public var id: String?
    public var connection: String
    public var motion: String
    public var position: Int?
    public var target: Int?
    public var manual: Bool?
    public var address: String?
    public var name: String?
    public var openSchedule: ScheduleEntry?
    public var closeSchedule: ScheduleEntry?
    public var lastError: String?

    public init(id: String? = nil, connection: String, motion: String, position: Int? = nil, target: Int? = nil,
                manual: Bool? = nil, address: String? = nil, name: String? = nil, openSchedule: ScheduleEntry? = nil,
                closeSchedule: ScheduleEntry? = nil, lastError: String? = nil) {
        self.id = id
        self.connection = connection
        self.motion = motion
        self.position = position
        self.target = target
        self.manual = manual
        self.address = address
        self.name = name
        self.openSchedule = openSchedule
        self.closeSchedule = closeSchedule
        self.lastError = lastError
    }

    /// The wall switch is moving the curtain: remote motions are refused until it stops.
    public var lockedOut: Bool { manual == true && motion != "idle" }
}

/// `io.roombridge.State` type `Lending`.
public struct LendingState: Codable, Sendable, Equatable {
    public var armed: LendingArm?
    public var lastOutcome: LendingOutcome?
}

/// `io.roombridge.State` type `State` (the parts the web front end uses).
public struct DaemonState: Codable, Sendable, Equatable {
    public var seq: Int
    public var startedAt: String?
    /// The kiosk's time zone (nil from a daemon that does not report it).
    public var timeZone: String?
    /// The only curtain, or with several the first by id (`connection: disabled` when none is configured).
    public var curtain: Curtain
    /// Every configured curtain, sorted by id (nil from a daemon that knows one curtain).
    public var curtains: [Curtain]?
    public var lending: LendingState
    public var presence: PresenceState?

    /// Every configured curtain: `curtains`, else the single `curtain` unless it is disabled.
    public var allCurtains: [Curtain] {
        if let curtains, !curtains.isEmpty { return curtains }
        return curtain.connection == "disabled" ? [] : [curtain]
    }

    /// The state after a `curtain` event: the curtain with the event's id replaced (added when new, removed when it
    /// comes disabled: a reload took it out of the configuration), and `curtain` following the first.
    public func applying(_ c: Curtain) -> DaemonState {
        var s = self
        guard let id = c.id, let list = curtains else {
            s.curtain = c
            return s
        }
        var updated = list.filter { $0.id != id }
        if c.connection != "disabled" { updated.append(c) }
        updated.sort { ($0.id ?? "") < ($1.id ?? "") }
        s.curtains = updated
        s.curtain = updated.first ?? Curtain(connection: "disabled", motion: "idle")
        return s
    }
}

/// `io.roombridge.State` type `Event` (the kinds the web front end uses; others carry no payload here).
public struct DaemonEvent: Codable, Sendable, Equatable {
    public var seq: Int
    public var at: String
    public var kind: String
    public var curtain: Curtain?
    public var lending: LendingOutcome?
    public var presence: PresenceChangeEvent?
}

/// One `Watch` reply: the state (or, resuming, `resumedAfter`) first, then one event each.
struct WatchReply: Decodable, Sendable {
    var state: DaemonState?
    var event: DaemonEvent?
    var resumedAfter: Int?
}
