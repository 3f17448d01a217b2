import RoomBridgeCore
import Varlink
import RoomBridgeAPI

/// `io.roombridge.Presence`: who or what is in the room, from iBeacon regions.
public struct PresenceInterface: VarlinkInterface {
    public static let interfaceName = "io.roombridge.Presence"
    public let name = Self.interfaceName
    public var interfaceDescription: String { Self.idl }

    private let state: SystemState

    public init(state: SystemState) {
        self.state = state
    }

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        switch call.methodName {
        case "GetPresence":
            let presence = await state.presenceState()
            try await replies.reply(["presence": try WireCoding.encode(presence)], continues: false)
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }

    public static let idl = InterfaceIDL.presence
}
