import RoomBridgeCore
import Varlink

/// `io.roombridge.Presence`'s methods as the clients call them (see ``InventoryAPI``).
public enum PresenceAPI {
    public static let interface = "io.roombridge.Presence"

    public enum GetPresence: VarlinkMethod {
        public static let name = "io.roombridge.Presence.GetPresence"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var presence: PresenceState }
    }
}
