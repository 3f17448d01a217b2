import Foundation
import JSON
import RoomBridgeAPI
import struct RoomBridgeCore.CurtainState
import struct RoomBridgeCore.Event
import struct RoomBridgeCore.LendingOutcome
import struct RoomBridgeCore.PresenceChangeEvent
import struct RoomBridgeCore.StateSnapshot
import struct RoomBridgeCore.StocktakeNotice

// What roombridge-web reads from roombridged's Watch, in the contract's types (``StateAPI/Watch``): the state is
// `StateSnapshot`, each event an `Event`; inventory and lending replies are RoomBridgeAPI's methods over the domain's
// own types.

extension StateSnapshot {
    /// Every configured curtain: `curtains`, else the single `curtain` unless it is disabled.
    var allCurtains: [CurtainState] {
        if !curtains.isEmpty { return curtains }
        return curtain.connection == .disabled ? [] : [curtain]
    }

    /// The state after a `curtain` event, as the web follows it between snapshots: the curtain with the event's id
    /// replaced (added when new, removed when it comes disabled: a reload took it out of the configuration), and
    /// `curtain` following the first.
    func applying(_ c: CurtainState) -> StateSnapshot {
        var s = self
        guard let id = c.id else {
            s.curtain = c
            return s
        }
        var updated = curtains.filter { $0.id != id }
        if c.connection != .disabled { updated.append(c) }
        updated.sort { ($0.id ?? "") < ($1.id ?? "") }
        s.curtains = updated
        s.curtain = updated.first ?? CurtainState(connection: .disabled)
        return s
    }
}

/// A Watch event as the web keeps it: the contract's ``Event`` (`io.roombridge.State` type `Event`), and its JSON
/// as the daemon sent it, which the API's event stream passes on whole.
public struct WatchedEvent: Sendable, Equatable {
    public var event: Event
    public var raw: JSONValue?

    public init(_ event: Event, raw: JSONValue? = nil) {
        self.event = event
        self.raw = raw
    }

    var seq: Int { Int(event.seq) }
    /// The kind as named on the wire.
    var kind: String { event.kind.rawValue }
    var curtain: CurtainState? { if case .curtain(let c) = event.payload { c } else { nil } }
    var lending: LendingOutcome? { if case .lending(let o) = event.payload { o } else { nil } }
    var presence: PresenceChangeEvent? { if case .presence(let p) = event.payload { p } else { nil } }
    /// A stocktake started or was closed.
    var stocktake: StocktakeNotice? { if case .stocktake(let n) = event.payload { n } else { nil } }

    /// A tap during a stocktake: a device counted or a tag noted as unexpected.
    var countsInStocktake: Bool { lending.map { $0.kind == .counted || $0.kind == .unexpected } ?? false }
}

/// One `Watch` reply (``StateAPI/Watch``): the state (or, resuming, `resumedAfter`) first, then one event each.
struct WatchReply: Sendable {
    var state: StateSnapshot?
    var event: WatchedEvent?
    var resumedAfter: Int?

    /// The reply's parameters decoded, the event keeping its raw form.
    static func decode(_ parameters: [String: JSONValue]) throws -> WatchReply {
        let reply = try JSONValueDecoder().decode(StateAPI.Watch.Reply.self, from: parameters)
        return WatchReply(state: reply.state, event: reply.event.map { WatchedEvent($0, raw: parameters["event"]) },
                          resumedAfter: reply.resumedAfter)
    }
}
