#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RoomBridgeCore
import Varlink
import CurtainProtocol
import Lending
import RoomBridgeAPI

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
        /// The daemon keeps this curtain's schedule and could not store the new one; the old one stays.
        case scheduleNotStored
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
        case .scheduleNotStored: name = "ScheduleNotStored"
        }
        return VarlinkError(CurtainInterface.interfaceName + "." + name, parameters: parameters)
    }
}

extension CurtainOutcome {
    /// The outcome of `request` on `curtain`: taken (moving, or done for a command that is no motion), or why not.
    init(curtain: String, request: CurtainControlRequest, failure: CurtainControlError?, battery: Int?) {
        let kind: Kind
        switch (failure?.reason, request) {
        case (nil, .open), (nil, .close), (nil, .moveTo): kind = .moving
        case (nil, _): kind = .done
        case (.manualOperationActive?, _): kind = .manual
        case (.notConnected?, _): kind = .unreachable
        case (_?, _): kind = .failed
        }
        let error = failure.map { $0.varlinkError.name }
        self.init(curtain: curtain, outcome: kind, error: error, message: failure?.message, battery: battery)
    }
}

/// Carries out curtain requests (implemented by the daemon over one BlueZ client per curtain).
public protocol CurtainControlling: Sendable {
    /// Performs `request` on the curtain named `curtain` (a name `SystemState.curtainIDs()` lists); returns once
    /// its controller accepted the write (motions continue afterwards). The request is in `SystemState` already;
    /// the controller announces it (`SystemState.announceCurtainRequests()`) once the curtain answered, after the
    /// events the answer caused.
    func perform(_ request: CurtainControlRequest, on curtain: String) async throws(CurtainControlError)
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
            let snapshot = await state.snapshot()
            let groups = await state.curtainGroups()
            var curtain = snapshot.curtain
            if let name = try Self.name(call.parameters), name != Self.all {
                curtain = try Self.targets(name, configured: snapshot.curtains.compactMap(\.id), groups: groups).first
                    .flatMap { id in snapshot.curtains.first { $0.id == id } } ?? curtain
            }
            try await replies.reply(["curtain": try WireCoding.encode(curtain),
                                     "curtains": try WireCoding.encode(snapshot.curtains),
                                     "groups": try WireCoding.encode(groups)], continues: false)
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
        let by: String?
        do throws(LendingError) {
            by = try authorizer.actor(context, named: call.parameters["actor"]?.stringValue)?.text
        } catch {
            throw Self.invalid("actor", error.description)
        }
        guard let controller else {
            throw CurtainControlError(.disabled, "the curtain is disabled in the configuration (curtain.enabled = false); "
                                      + "enable it and restart roombridged").varlinkError
        }
        let name = try Self.name(call.parameters)
        // Two visits to the state's actor before the write (the names, then the request of every target), not 2 + N.
        let (configured, groups) = await state.curtainNames()
        let targets = try Self.targets(name, configured: configured, groups: groups)
        var position: Int? = nil
        if case .moveTo(let p) = request { position = p }
        let asked = CurtainRequest(kind: request.kind, position: position, at: Date(), by: by)
        // Recorded before the write; the controller announces it to watchers once the curtain answered, after
        // what the curtain told in answer (the event's serialization is not in the command's way).
        await state.recordCurtainRequest(asked, for: targets)
        let refusals = await Self.perform(request, on: targets, controller)
        // Watchers see what became of the request: the curtains that refused it say why.
        for (id, why) in refusals {
            await state.updateCurtain(id) { c in
                if c.lastRequest == asked { c.lastRequest?.refused = why.message }
            }
        }
        if !refusals.isEmpty { await state.announceCurtainRequests() }
        // A name that is no curtain's is a group (`targets` refused any other): one curtain answers for itself.
        guard let name, !configured.contains(name) else {
            if let failure = targets.first.flatMap({ refusals[$0] }) { throw failure.varlinkError }
            try await replies.reply([:], continues: false)
            return
        }
        // A group: every member's outcome, in the group's order; a member's failure is in its outcome.
        let curtains = await state.snapshot().curtains
        let outcomes = targets.map { id in
            CurtainOutcome(curtain: id, request: request, failure: refusals[id],
                           battery: curtains.first { $0.id == id }?.battery)
        }
        try await replies.reply(["outcomes": try WireCoding.encode(outcomes)], continues: false)
    }

    /// The `name` that means every configured curtain.
    public static let all = "*"

    static func name(_ parameters: [String: JSONValue]) throws(VarlinkError) -> String? {
        guard let value = parameters["name"], value != .null else { return nil }
        guard let name = value.stringValue else {
            throw invalid("name", "name must be a curtain's name as a string (roombridgectl curtain status lists them), "
                          + "or \"*\" for every curtain")
        }
        return name
    }

    /// The curtains a call with `name` acts on: that one; a group's members (`[curtain.groups]`); every one for `*`
    /// or `all`; and without a name the only one. With several configured a name is required; an unknown name is
    /// refused naming the configured curtains and groups.
    static func targets(_ name: String?, configured: [String], groups: [CurtainGroup] = []) throws(VarlinkError) -> [String] {
        let list = configured.joined(separator: ", ")
        let groupList = groups.map(\.name).joined(separator: ", ")
        switch name {
        case nil:
            guard configured.count <= 1 else {
                throw invalid("name", "\(configured.count) curtains are configured (\(list)): give name, one of them, "
                              + (groups.isEmpty ? "" : "a group (\(groupList)), ") + "or \"all\" for every curtain")
            }
            return configured
        case let name? where configured.contains(name):
            return [name]
        case all?, CurtainGroup.every?:
            return configured
        case let name?:
            if let group = groups.first(where: { $0.name == name }) { return group.curtains.filter(configured.contains) }
            throw invalid("name", "no curtain is named \"\(name)\"; "
                          + (configured.isEmpty ? "none is configured" : "the configured ones are: \(list)")
                          + (groups.isEmpty ? "" : "; the groups: \(groupList)"))
        }
    }

    /// Performs `request` on every target at once; returns each curtain's refusal (none: every one took it).
    static func perform(_ request: CurtainControlRequest, on targets: [String],
                        _ controller: any CurtainControlling) async -> [String: CurtainControlError] {
        if targets.count == 1, let id = targets.first {
            // One curtain: no child task to start and wait for.
            do throws(CurtainControlError) {
                try await controller.perform(request, on: id)
                return [:]
            } catch {
                return [id: error]
            }
        }
        return await withTaskGroup(of: (String, CurtainControlError?).self) { group in
            for id in targets {
                group.addTask {
                    do throws(CurtainControlError) {
                        try await controller.perform(request, on: id)
                        return (id, nil)
                    } catch {
                        return (id, error)
                    }
                }
            }
            var refusals: [String: CurtainControlError] = [:]
            for await (id, error) in group { refusals[id] = error }
            return refusals
        }
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

    public static let idl = InterfaceIDL.curtain
}
