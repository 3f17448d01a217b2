import Foundation
import JSON
import struct RoomBridgeCore.CurtainState
import struct RoomBridgeCore.LendingOutcome
import struct RoomBridgeCore.PresenceChangeEvent
import struct RoomBridgeCore.StateSnapshot
import struct RoomBridgeCore.StocktakeNotice

// What roombridge-web reads from roombridged's Watch: the events, coded by hand on the daemon's
// side (one payload per kind), as far as the web uses them, with the contract's own payload
// types. The state is the contract's `StateSnapshot`; inventory and lending replies are
// RoomBridgeAPI's methods over the domain's own types.

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

/// `io.roombridge.State` type `Event` (the kinds the web front end uses; others carry no payload here).
public struct DaemonEvent: Codable, Sendable, Equatable {
    public var seq: Int
    public var at: String
    public var kind: String
    public var curtain: CurtainState?
    public var lending: LendingOutcome?
    public var presence: PresenceChangeEvent?
    /// A stocktake started or was closed.
    public var stocktake: StocktakeNotice?
    /// The event as the daemon sent it (every field of every kind), for the API's event stream.
    public var raw: JSONValue?

    enum CodingKeys: String, CodingKey { case seq, at, kind, curtain, lending, presence, stocktake }
}

extension DaemonEvent {
    /// A tap during a stocktake: a device counted or a tag noted as unexpected.
    var countsInStocktake: Bool { lending.map { $0.kind == .counted || $0.kind == .unexpected } ?? false }
}

/// One `Watch` reply: the state (or, resuming, `resumedAfter`) first, then one event each.
struct WatchReply: Decodable, Sendable {
    var state: StateSnapshot?
    var event: DaemonEvent?
    var resumedAfter: Int?

    /// The reply's parameters decoded, the event keeping its raw form.
    static func decode(_ parameters: [String: JSONValue]) throws -> WatchReply {
        var reply = try JSONValueDecoder().decode(WatchReply.self, from: parameters)
        reply.event?.raw = parameters["event"]
        return reply
    }
}
