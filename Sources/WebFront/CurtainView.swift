import struct RoomBridgeCore.CurtainState

/// What the curtain page shows of one curtain, in the reader's language: the pure mapping from
/// the daemon's `Curtain` to the panel's texts and whether its buttons may be used. The page
/// renders it at first and its script applies it again from every `curtain` event.
public struct CurtainLive: Encodable, Sendable, Equatable {
    /// The curtain's name in the daemon (`Curtain.id`): which panel this is for.
    public var id: String?
    public var connection: String
    /// The connection in words ("Connected", "Searching for the curtain", …).
    public var status: String
    public var motion: String
    public var position: Int?
    public var target: Int?
    /// The position in words, with the motion while it moves ("40% open — opening").
    public var positionText: String
    /// The wall switch is moving the curtain: motion buttons are disabled.
    public var lockedOut: Bool
    /// Motion buttons may be used (connected and not locked out).
    public var usable: Bool
    /// "Last error: …", while the daemon reports one.
    public var lastError: String?
}

public enum CurtainView {
    /// The panel's state, or nil when no curtain is configured.
    public static func live(_ c: CurtainState, _ l: Localizer) -> CurtainLive? {
        guard c.connection != .disabled else { return nil }
        let connection = c.connection.rawValue
        let status = l.has("curtainPage.conn.\(connection)") ? l.t("curtainPage.conn.\(connection)") : connection
        var position: String
        switch c.position {
        case 100?: position = l.t("curtain.open")
        case 0?: position = l.t("curtain.closed")
        case let p?: position = l.t("curtain.position", ["percent": l.number(p)])
        case nil: position = l.t("common.none")
        }
        switch c.motion {
        case .opening: position += " — " + l.t("curtain.opening")
        case .closing: position += " — " + l.t("curtain.closing")
        case .idle: break
        }
        if c.motion != .idle, let target = c.target {
            position += " (" + l.t("curtainPage.target", ["percent": l.number(target)]) + ")"
        }
        return CurtainLive(id: c.id, connection: connection, status: status, motion: c.motion.description, position: c.position,
                           target: c.target, positionText: position, lockedOut: c.manualOperationActive,
                           usable: c.connection.acceptsCommands && !c.manualOperationActive,
                           lastError: c.lastError.map { l.t("curtainPage.lastError", ["message": $0]) })
    }
}
