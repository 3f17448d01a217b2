import Lending
import RoomBridgeAPI
import RoomBridgeCore
import Varlink
import RoomBridgeAPI

/// Why a registration failed; `message` says what to do. Nothing is recorded in the inventory
/// unless the write was verified.
public struct TagRegistrationError: Error, Sendable, Equatable {
    public enum Reason: String, Sendable, Codable, CaseIterable {
        case noSuchDevice, writeInProgress, noReader, noTag, timeout, cancelled, unsupportedTag, wrongTag,
             readOnly, tooSmall, notFormattable, tagLifted, writeRefused, verifyFailed, readerUnavailable,
             alreadyBound, messageTooLarge
    }
    public var reason: Reason
    public var deviceId: String
    public var message: String

    public init(_ reason: Reason, deviceId: String, _ message: String) {
        self.reason = reason
        self.deviceId = deviceId
        self.message = message
    }
}

/// Performs tag registrations (implemented by the daemon over the NFC readers and the store).
public protocol TagRegistering: Sendable {
    /// Arms the reader and waits for a writable tag; returns once the tag is written, verified and bound.
    func register(_ request: TagWriteRequest) async throws(TagRegistrationError) -> TagWriteReport
    /// Cancels a pending registration; false when none was pending.
    func cancel() async -> Bool
}

/// `io.roombridge.Tags`: the last tap, and device tag registration.
public struct TagsInterface: VarlinkInterface {
    public let name = "io.roombridge.Tags"
    public var interfaceDescription: String { Self.idl }

    private let state: SystemState
    private let registrar: (any TagRegistering)?
    private let authorizer: Authorizer

    /// - Parameter registrar: nil when no NFC reader is enabled (Write then fails with `NoReader`).
    public init(state: SystemState, registrar: (any TagRegistering)?, authorizer: Authorizer) {
        self.state = state
        self.registrar = registrar
        self.authorizer = authorizer
    }

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        switch call.methodName {
        case "GetLastTap":
            let tap = await state.snapshot().lastTap
            try await replies.reply(tap.map { ["tap": try WireCoding.encode($0)] } ?? [:], continues: false)
        case "Write":
            try authorizer.requireMutation(context)
            let request = try WireCoding.decode(TagWriteRequest.self, from: call.parameters)
            // IDs with control characters are refused at the boundary (see TextRules).
            if TextRules.firstControlCharacter(in: request.deviceId) != nil { throw VarlinkError.invalidParameter("deviceId") }
            if let uri = request.uri, TextRules.firstControlCharacter(in: uri) != nil { throw VarlinkError.invalidParameter("uri") }
            guard let registrar else {
                throw VarlinkError("io.roombridge.Tags.NoReader", parameters: [
                    "message": "NFC is disabled in the configuration (nfc.enabled); enable it and restart roombridged"])
            }
            let report: TagWriteReport
            do {
                report = try await registrar.register(request)
            } catch {
                throw VarlinkError(error.reason == .noSuchDevice ? "io.roombridge.Tags.NoSuchDevice" : "io.roombridge.Tags.WriteFailed",
                                   parameters: ["deviceId": .string(error.deviceId), "reason": .string(error.reason.rawValue),
                                                "message": .string(error.message)])
            }
            try await replies.reply(try JSONValueEncoder().encodeObject(report), continues: false)
        case "CancelWrite":
            try authorizer.requireMutation(context)
            let cancelled = await registrar?.cancel() ?? false
            try await replies.reply(["cancelled": .bool(cancelled)], continues: false)
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }

    public static let idl = InterfaceIDL.tags
}
