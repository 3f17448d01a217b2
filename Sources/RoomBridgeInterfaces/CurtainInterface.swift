#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RoomBridgeCore
import Varlink
import CurtainProtocol

/// A validated request for the curtain, as the daemon's curtain side receives it.
public enum CurtainControlRequest: Sendable, Equatable {
    case open
    case close
    case stop
    /// Percent open, 0–100 (already checked).
    case moveTo(Int)
    case setSchedule(open: CurtainTime, openEnabled: Bool, close: CurtainTime, closeEnabled: Bool)
    case sync
    case reconnect

    /// The kind recorded as the user request in `SystemState`.
    public var kind: CurtainRequestKind {
        switch self {
        case .open: .open
        case .close: .close
        case .stop: .stop
        case .moveTo: .moveTo
        case .setSchedule: .setSchedule
        case .sync: .sync
        case .reconnect: .reconnect
        }
    }
}

/// Why a curtain request failed; `message` says what to do.
public struct CurtainControlError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, CaseIterable {
        /// The wall switch is moving the curtain; nothing was written.
        case manualOperationActive
        /// No link to the curtain right now; nothing is queued.
        case notConnected
        /// A parameter was refused before anything was written.
        case invalidParameter
        /// The controller answered the write with an ATT error.
        case rejectedByDevice
        /// `curtain.enabled` is false.
        case disabled
        /// Bluetooth failed otherwise (BlueZ busy, timeout, bluetoothd missing…).
        case bluetoothFailed
    }

    public var reason: Reason
    public var message: String
    /// The offending parameter, for `invalidParameter`.
    public var parameter: String?

    public init(_ reason: Reason, _ message: String, parameter: String? = nil) {
        self.reason = reason
        self.message = message
        self.parameter = parameter
    }

    public var description: String { message }

    /// The Varlink error of `io.roombridge.Curtain` for this failure.
    public var varlinkError: VarlinkError {
        var parameters: [String: JSONValue] = ["message": .string(message)]
        let name: String
        switch reason {
        case .manualOperationActive: name = "ManualOperationActive"
        case .notConnected: name = "NotConnected"
        case .invalidParameter:
            name = "InvalidParameter"
            parameters["parameter"] = .string(parameter ?? "")
        case .rejectedByDevice: name = "RejectedByDevice"
        case .disabled: name = "Disabled"
        case .bluetoothFailed: name = "BluetoothFailed"
        }
        return VarlinkError(CurtainInterface.interfaceName + "." + name, parameters: parameters)
    }
}

/// Carries out curtain requests (implemented by the daemon over the BlueZ client).
public protocol CurtainControlling: Sendable {
    /// Performs `request`; returns once the controller accepted the write (motions continue afterwards).
    func perform(_ request: CurtainControlRequest) async throws(CurtainControlError)
}

/// `io.roombridge.Curtain`: the BLE curtain (docs/curtain-gatt.md).
public struct CurtainInterface: VarlinkInterface {
    /// The interface name.
    public static let interfaceName = "io.roombridge.Curtain"
    public let name = CurtainInterface.interfaceName
    public var interfaceDescription: String { Self.idl }

    private let state: SystemState
    private let controller: (any CurtainControlling)?
    private let authorizer: Authorizer

    /// - Parameter controller: nil when `curtain.enabled` is false (commands then fail with `Disabled`).
    public init(state: SystemState, controller: (any CurtainControlling)?, authorizer: Authorizer) {
        self.state = state
        self.controller = controller
        self.authorizer = authorizer
    }

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        let request: CurtainControlRequest
        switch call.methodName {
        case "GetState":
            let curtain = await state.curtainState()
            try await replies.reply(["curtain": try WireCoding.encode(curtain)], continues: false)
            return
        case "Open": request = .open
        case "Close": request = .close
        case "Stop": request = .stop
        case "MoveTo": request = .moveTo(try Self.position(call.parameters))
        case "SetSchedule": request = try Self.schedule(call.parameters)
        case "Sync": request = .sync
        case "Reconnect": request = .reconnect
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
        try authorizer.requireMutation(context)
        guard let controller else {
            throw CurtainControlError(.disabled, "the curtain is disabled in the configuration (curtain.enabled = false); "
                                      + "enable it and restart roombridged").varlinkError
        }
        var position: Int? = nil
        if case .moveTo(let p) = request { position = p }
        await state.recordCurtainRequest(CurtainRequest(kind: request.kind, position: position, at: Date()))
        do {
            try await controller.perform(request)
        } catch {
            throw error.varlinkError
        }
        try await replies.reply([:], continues: false)
    }

    static func invalid(_ parameter: String, _ message: String) -> VarlinkError {
        CurtainControlError(.invalidParameter, message, parameter: parameter).varlinkError
    }

    static func position(_ parameters: [String: JSONValue]) throws(VarlinkError) -> Int {
        guard let value = parameters["position"] else {
            throw invalid("position", "position is missing: give a percentage from 0 (closed) to 100 (open)")
        }
        guard let p = value.intValue, (0...100).contains(p) else {
            throw invalid("position", "position \(value.serialized()) is out of range: use 0 (closed) to 100 (open)")
        }
        return Int(p)
    }

    static func schedule(_ parameters: [String: JSONValue]) throws(VarlinkError) -> CurtainControlRequest {
        func time(_ key: String) throws(VarlinkError) -> CurtainTime {
            guard let text = parameters[key]?.stringValue else {
                throw invalid(key, "\(key) is missing: give a time as HH:MM (24-hour), e.g. 07:30")
            }
            guard let t = try? CurtainTime(parsing: text) else {
                throw invalid(key, "\(key) \"\(text)\" is not a time: use HH:MM (24-hour, 00:00–23:59), e.g. 07:30")
            }
            return t
        }
        func flag(_ key: String) throws(VarlinkError) -> Bool {
            guard let b = parameters[key]?.boolValue else {
                throw invalid(key, "\(key) is missing or not true/false")
            }
            return b
        }
        return .setSchedule(open: try time("open"), openEnabled: try flag("openEnabled"),
                            close: try time("close"), closeEnabled: try flag("closeEnabled"))
    }

    public static let idl = """
        # The BLE curtain: its state, motions and the controller's own schedule.
        # The controller is the source of truth: state comes from what it notifies.
        # Commands return once the controller accepted the write; follow the motion with
        # io.roombridge.State.Watch (curtain events). Commands need the authorised group.
        interface io.roombridge.Curtain

        \(CurtainTypesIDL.text)
        # The curtain now.
        method GetState() -> (curtain: Curtain)

        # Opens fully.
        method Open() -> ()

        # Closes fully.
        method Close() -> ()

        # Stops a motion.
        method Stop() -> ()

        # Moves to position percent open (0 closed, 100 open).
        method MoveTo(position: int) -> ()

        # Writes the controller's schedule: times HH:MM (24-hour, the controller's clock) and
        # whether each is enabled. Allowed during a wall-switch motion.
        method SetSchedule(open: string, close: string, openEnabled: bool, closeEnabled: bool) -> ()

        # Asks the controller for its state and schedule again.
        method Sync() -> ()

        # Drops the link (if any) and searches for the curtain again.
        method Reconnect() -> ()

        # The wall switch is moving the curtain: the person at the switch wins. Nothing was
        # written; try again when the motion has stopped.
        error ManualOperationActive (message: string)

        # There is no link to the curtain now (commands are not queued). message says why.
        error NotConnected (message: string)

        # A parameter was refused before anything was written.
        error InvalidParameter (parameter: string, message: string)

        # The controller refused the command (an ATT error).
        error RejectedByDevice (message: string)

        # curtain.enabled is false in the configuration.
        error Disabled (message: string)

        # Bluetooth failed otherwise (BlueZ busy, no answer in time, bluetoothd not running).
        error BluetoothFailed (message: string)
        """
}

/// The IDL types of the curtain, shared by `io.roombridge.State` and `io.roombridge.Curtain`
/// (Varlink interfaces cannot refer to each other's types, so each declares them; the text is one).
enum CurtainTypesIDL {
    static let text = """
        # An open or close time (HH:MM, 24-hour, the controller's clock) and whether it is enabled.
        type ScheduleEntry (time: string, enabled: bool)

        # The last request made of the curtain.
        type CurtainRequest (
          kind: (search, open, close, stop, moveTo, setSchedule, sync, reconnect),
          position: ?int,
          at: string
        )

        # The curtain. position and target are percent open (0 closed, 100 open).
        # manual: the latest motion was started by the wall switch (or, for curtains without such a flag, was a
        # motion the daemon did not command: SwitchBot touch-and-go, the AM43's remote).
        # profile: roombridge, switchbot or am43. scheduleSource: device when the curtain keeps its schedule,
        # daemon when it keeps none. battery and light: percent, where the curtain reports them.
        type Curtain (
          connection: (disabled, searching, connecting, connected, disconnected),
          address: ?string,
          name: ?string,
          lastRequest: ?CurtainRequest,
          motion: (idle, opening, closing),
          position: ?int,
          target: ?int,
          openSchedule: ?ScheduleEntry,
          closeSchedule: ?ScheduleEntry,
          manual: bool,
          scheduled: bool,
          lastError: ?string,
          profile: ?string,
          scheduleSource: ?(device, daemon),
          battery: ?int,
          light: ?int
        )

        """
}
