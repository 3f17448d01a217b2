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
