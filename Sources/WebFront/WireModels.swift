import Foundation
import struct RoomBridgeCore.LendingArm
import struct RoomBridgeCore.LendingOutcome
import struct RoomBridgeCore.PresenceChangeEvent
import struct RoomBridgeCore.PresenceState

// What roombridge-web reads from roombridged's Varlink replies: the fields of the IDL types in
// io.roombridge.State, .Inventory and .Lending that the pages show (unknown fields are ignored,
// so the daemon may add fields without breaking this client). Times stay ISO 8601 strings on
// the wire and are parsed where they are shown. `LendingOutcome` and `LendingArm` are the
// contract's own types.

/// `io.roombridge.Inventory` / `io.roombridge.Lending` type `Rental`.
public struct Rental: Decodable, Sendable, Equatable {
    public var id: Int
    public var deviceId: String
    public var model: String
    public var userId: String
    public var userName: String
    public var rentedAt: String
    public var dueAt: String?
    public var returnedAt: String?
    public var overdue: Bool
}

/// `io.roombridge.Inventory` type `Device`.
public struct Device: Decodable, Sendable, Equatable {
    public var id: String
    public var groupId: String
    public var model: String
    public var serialNumber: String
    public var osVersion: String
    public var status: String
    public var connectorType: String
    public var registeredAt: String
    public var note: String?
    public var isNfcRegistered: Bool
    public var rental: Rental?
}

/// `io.roombridge.Inventory` type `Group`.
public struct DeviceGroup: Decodable, Sendable, Equatable {
    public var id: String
    public var name: String
}

/// `io.roombridge.Inventory` type `LogEntry`: one changed field of a device.
public struct LogEntry: Decodable, Sendable, Equatable {
    public var id: Int
    public var operation: String
    public var field: String
    public var oldValue: String?
    public var newValue: String?
    public var at: String
}

/// `io.roombridge.Inventory` type `User`.
public struct User: Decodable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var registeredAt: String
}

/// `io.roombridge.Inventory` type `Badge`: a user's card.
public struct Badge: Decodable, Sendable, Equatable {
    public var identifier: String
    public var kind: String
}

/// `io.roombridge.State` type `Tap` (the fields the badge binding shows); `device` is set when
/// the tag carried a device's record.
public struct LastTap: Decodable, Sendable, Equatable {
    public struct DeviceTag: Decodable, Sendable, Equatable {}
    public var uid: String
    public var tagType: String
    public var at: String
    public var device: DeviceTag?
}

/// `io.roombridge.Inventory` type `TagBinding`.
public struct TagBinding: Decodable, Sendable, Equatable {
    public var uid: String
    public var boundAt: String
}

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

/// Paged list replies.
struct DeviceList: Decodable, Sendable { var devices: [Device]; var nextCursor: String? }
struct RentalList: Decodable, Sendable { var rentals: [Rental]; var nextCursor: String? }
struct UserList: Decodable, Sendable { var users: [User]; var nextCursor: String? }
struct LogList: Decodable, Sendable { var entries: [LogEntry]; var nextCursor: String? }
struct GroupList: Decodable, Sendable { var groups: [DeviceGroup] }
struct DeviceDetail: Decodable, Sendable { var device: Device; var tags: [TagBinding] }
