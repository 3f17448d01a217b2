import Synchronization

/// Credentials of the process on the other end of a Unix socket (from `SO_PEERCRED`).
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups (from `SO_PEERGROUPS`, taken at accept); may be empty.
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// `true` if `gid` is the primary or a supplementary group of the peer.
    public func isMember(ofGroup gid: UInt32) -> Bool { self.gid == gid || groups.contains(gid) }
}

/// What a handler knows about the connection a call arrived on.
public struct VarlinkCallContext: Sendable {
    /// The peer's credentials, if the transport provides them.
    public var peer: PeerCredentials?

    public init(peer: PeerCredentials? = nil) { self.peer = peer }
}

/// Where a handler sends its replies.
///
/// Send exactly one final reply (`continues: false`). Only calls with `more` may send
/// intermediate replies (`continues: true`); doing so on a call without `more` answers the
/// call with `org.varlink.service.ExpectedMore` (as sd-varlink does) and throws
/// ``VarlinkReplySinkError/expectedMore``. `reply` suspends while the peer is not reading
/// (backpressure) and throws once the connection is gone, so a streaming handler stops.
/// Do not call `reply` concurrently from several tasks.
public protocol VarlinkReplySink: Sendable {
    func reply(_ parameters: [String: JSONValue], continues: Bool) async throws
    /// Sends parameters already serialized as one JSON object (``JSONSerializer``'s output),
    /// e.g. an event shared by every subscriber; same rules as ``reply(_:continues:)``.
    func reply(encodedParameters: [UInt8], continues: Bool) async throws
    /// The call's ``VarlinkReplyPoster`` when the call has `more` and the transport can queue
    /// replies without a task; nil otherwise (the default).
    var poster: (any VarlinkReplyPoster)? { get }
}

/// Queues continuing replies of one `more` call without suspending, for replies made outside
/// the call's task, e.g. by an event source on its own executor that feeds many calls. Posted
/// replies are written in order, after every reply the call's task has already sent, once
/// ``flush()`` is called: an event posted to many calls is then written in one pass. Post
/// nothing after the call's final reply.
public protocol VarlinkReplyPoster: Sendable {
    /// Queues one continuing reply, framed by ``VarlinkReply/framedBytes()`` (`continues`
    /// set), unless `limit` posted replies are still waiting to be written (`.tooSlow`: the
    /// peer does not read) or the connection is gone (`.closed`).
    func post(framed: [UInt8], limit: Int) -> VarlinkPostResult
    /// Starts writing what was posted.
    func flush()
}

/// What ``VarlinkReplyPoster/post(framed:limit:)`` did.
public enum VarlinkPostResult: Sendable, Hashable {
    case queued
    /// Not queued: `limit` posted replies are waiting to be written.
    case tooSlow
    /// Not queued: the connection is closed.
    case closed
}

extension VarlinkReplySink {
    public var poster: (any VarlinkReplyPoster)? { nil }

    /// Parses the bytes and sends them as parameters (for sinks that do not pass bytes through).
    public func reply(encodedParameters: [UInt8], continues: Bool) async throws {
        try await reply((try? JSONParser.parse(encodedParameters))?.objectValue ?? [:], continues: continues)
    }

    /// Sends the final reply.
    public func reply(_ parameters: [String: JSONValue] = [:]) async throws {
        try await reply(parameters, continues: false)
    }

    /// Encodes `value` (which must encode to a JSON object) and sends it.
    public func reply<T: Encodable>(encoding value: T, continues: Bool = false) async throws {
        try await reply(JSONValueEncoder().encodeObject(value), continues: continues)
    }
}

/// Misuse of a ``VarlinkReplySink``.
public enum VarlinkReplySinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call already got its final reply.
    case callAlreadyAnswered(method: String)
    /// `continues: true` on a call without `more`; the call was answered with `ExpectedMore`.
    case expectedMore(method: String)

    public var description: String {
        switch self {
        case .callAlreadyAnswered(let m): return "reply to \(m) after its final reply"
        case .expectedMore(let m): return "\(m) was called without 'more' but the handler tried to stream; answered with ExpectedMore"
        }
    }
}

/// One Varlink interface implementation.
public protocol VarlinkInterface: Sendable {
    /// The interface name, e.g. `"io.example.Thing"`; must equal the name in ``interfaceDescription``.
    var name: String { get }
    /// The IDL text, starting with `interface io.example.Thing`. The service parses it at
    /// start-up, answers `MethodNotFound` for methods it does not declare and
    /// `InvalidParameter` for parameters that do not match the method's input.
    var interfaceDescription: String { get }
    /// Handles one validated call of a method declared in ``interfaceDescription``.
    ///
    /// Send replies through `replies` (see ``VarlinkReplySink``); returning without a final
    /// reply sends an empty one. Throw a ``VarlinkError`` to answer with an error (also after
    /// streaming started: it ends the stream); throw
    /// ``VarlinkError/methodNotImplemented(_:)`` for declared methods not implemented. Any
    /// other error answers `org.varlink.service.InternalError`. The task is cancelled when
    /// the client hangs up. For `oneway` calls replies are discarded.
    func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws
}

/// An interface that can answer some calls at once, from what it already holds (e.g. a cached
/// serialization of its state), without suspending. A transport may then answer such a call
/// on the thread that read it, without handing it to a task.
public protocol VarlinkImmediateInterface: VarlinkInterface {
    /// The reply to `call` (validated, neither `more` nor `oneway`) if it can be given now
    /// without waiting for anything and without heavy work; nil sends the call through
    /// ``VarlinkInterface/handle(_:context:replies:)`` as usual.
    func immediateReply(to call: VarlinkCall, context: VarlinkCallContext) -> VarlinkReply?
}

/// A call answered by synchronous work on a thread that may block (a point lookup in a local
/// database), started by the transport on the thread that read the call: one hop to that thread
/// and one back, instead of through a task.
public struct VarlinkOffload: Sendable {
    /// Runs its argument on a thread that may block: never the cooperative pool or an event loop.
    public let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// The reply's parameters; a ``VarlinkError`` thrown answers with it, any other error with
    /// `InternalError`, as from ``VarlinkInterface/handle(_:context:replies:)``.
    public let work: @Sendable () throws -> [String: JSONValue]

    public init(schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                work: @escaping @Sendable () throws -> [String: JSONValue]) {
        self.schedule = schedule
        self.work = work
    }
}

/// An interface that can answer some calls by synchronous work off the event loop and off the
/// cooperative pool (``VarlinkOffload``). Only for calls that change nothing: a transport may
/// drop the reply of an offloaded call when its connection closes meanwhile, and a shutdown
/// does not wait for one.
public protocol VarlinkOffloadingInterface: VarlinkInterface {
    /// The work that answers `call` (validated, neither `more` nor `oneway`), or nil to send
    /// the call through ``VarlinkInterface/handle(_:context:replies:)`` as usual. The call's
    /// answer must be the same either way.
    func offload(_ call: VarlinkCall, context: VarlinkCallContext) -> VarlinkOffload?
}

/// A problem with the interfaces given to ``VarlinkService``.
public enum VarlinkServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidInterfaceDescription(interface: String, VarlinkIDLError)
    case nameMismatch(declared: String, described: String)
    case duplicateInterface(String)

    public var description: String {
        switch self {
        case .invalidInterfaceDescription(let i, let e): return "interface \(i): invalid description: \(e)"
        case .nameMismatch(let d, let s): return "interface \(d) has a description for '\(s)'; the names must match"
        case .duplicateInterface(let i): return "interface \(i) is registered twice"
        }
    }
}

/// A Varlink service: routes calls to its interfaces and implements `org.varlink.service`
/// (`GetInfo`, `GetInterfaceDescription`). Transport-independent: feed it messages and write
/// the replies it produces, in order, one call at a time per connection.
public final class VarlinkService: Sendable {
    public static let serviceInterfaceName = "org.varlink.service"

    /// The description of `org.varlink.service` this service answers with (the varlink.org
    /// text, plus `InternalError`).
    public static let serviceInterfaceDescription = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        # The service failed unexpectedly while handling the call.
        error InternalError ()

        """

    public let vendor: String
    public let product: String
    public let version: String
    public let url: String

    private struct Registered: Sendable {
        let definition: VarlinkInterfaceDefinition
        let description: String
        let implementation: (any VarlinkInterface)?
    }

    private let interfaces: [String: Registered]
    /// Interface names in `GetInfo` order (`org.varlink.service` first).
    public let interfaceNames: [String]
    private let unexpectedErrorHandler: (@Sendable (VarlinkCall, any Error) -> Void)?
    private let allowUnknownParameters: Bool

    /// Creates a service; parses every interface description.
    /// - Parameters:
    ///   - allowUnknownParameters: accept and ignore call parameters (at any nesting level)
    ///     that the method does not declare. The default rejects them with `InvalidParameter`
    ///     naming the field, as sd-varlink and python-varlink do.
    ///   - onUnexpectedError: called when a handler throws an error that is not a
    ///     ``VarlinkError`` (the client gets `InternalError`); use it to log.
    public init(
        vendor: String, product: String, version: String, url: String,
        interfaces: [any VarlinkInterface],
        allowUnknownParameters: Bool = false,
        onUnexpectedError: (@Sendable (VarlinkCall, any Error) -> Void)? = nil
    ) throws(VarlinkServiceError) {
        self.allowUnknownParameters = allowUnknownParameters
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
        self.unexpectedErrorHandler = onUnexpectedError
        var map: [String: Registered] = [:]
        var names = [Self.serviceInterfaceName]
        let serviceDefinition: VarlinkInterfaceDefinition
        do { serviceDefinition = try VarlinkInterfaceDefinition(parsing: Self.serviceInterfaceDescription) } catch {
            throw .invalidInterfaceDescription(interface: Self.serviceInterfaceName, error)
        }
        map[Self.serviceInterfaceName] = Registered(definition: serviceDefinition, description: Self.serviceInterfaceDescription, implementation: nil)
        for iface in interfaces {
            let definition: VarlinkInterfaceDefinition
            do { definition = try VarlinkInterfaceDefinition(parsing: iface.interfaceDescription) } catch {
                throw .invalidInterfaceDescription(interface: iface.name, error)
            }
            guard definition.name == iface.name else { throw .nameMismatch(declared: iface.name, described: definition.name) }
            guard map[iface.name] == nil else { throw .duplicateInterface(iface.name) }
            map[iface.name] = Registered(definition: definition, description: iface.interfaceDescription, implementation: iface)
            names.append(iface.name)
        }
        self.interfaces = map
        self.interfaceNames = names
    }

    /// The parsed definition of a registered interface.
    public func definition(ofInterface name: String) -> VarlinkInterfaceDefinition? { interfaces[name]?.definition }

    /// Handles one raw message (JSON without its NUL). Malformed messages, the empty one (a lone
    /// NUL) included, are answered with ``VarlinkMessageError/varlinkError``.
    /// Replies are passed to `send` in order; `send` should suspend for backpressure and throw
    /// when the connection is gone.
    /// - Parameter poster: the connection's way to queue replies without a task, for `more` calls.
    public func handle(message: [UInt8], context: VarlinkCallContext, poster: (any VarlinkReplyPoster)? = nil,
                       send: @escaping @Sendable (VarlinkReply) async throws -> Void) async {
        let call: VarlinkCall
        do { call = try VarlinkCall(bytes: message) } catch {
            try? await send(VarlinkReply(error.varlinkError))
            return
        }
        await handle(call, context: context, poster: poster, send: send)
    }

    /// Handles one call: validates it, dispatches it and sends its replies (none for `oneway`).
    /// Never throws; failures become error replies.
    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, poster: (any VarlinkReplyPoster)? = nil,
                       send: @escaping @Sendable (VarlinkReply) async throws -> Void) async {
        let sink = CallReplySink(call: call, poster: call.more && !call.oneway ? poster : nil, send: send)
        do {
            if call.upgrade { throw VarlinkError.invalidParameter("upgrade") }  // protocol upgrades are not supported
            guard let registered = interfaces[call.interface] else { throw VarlinkError.interfaceNotFound(call.interface) }
            try registered.definition.validateCall(method: call.methodName, parameters: call.parameters,
                                                  allowUnknownFields: allowUnknownParameters)
            if let implementation = registered.implementation {
                try await implementation.handle(call, context: context, replies: sink)
            } else {
                try await handleServiceCall(call, sink: sink)
            }
            if !sink.isFinished { try await sink.reply([:], continues: false) }
        } catch let error as VarlinkError {
            await sink.finish(with: error)
        } catch is VarlinkReplySinkError {
            // Already answered (ExpectedMore or a final reply); nothing more to send.
        } catch {
            if sink.transportFailed || error is CancellationError || Task.isCancelled { return }
            unexpectedErrorHandler?(call, error)
            await sink.finish(with: .internalError)
        }
    }

    /// How a call is answered without the connection's task.
    public enum AnswerWithoutTask: Sendable {
        /// The framed reply (with its NUL), ready now (``VarlinkImmediateInterface``).
        case now([UInt8])
        /// Offloaded work (``VarlinkOffloadingInterface``): call it to start the work; its argument
        /// is called, on the work's thread, with the framed reply.
        case offloaded(@Sendable (_ done: @escaping @Sendable ([UInt8]) -> Void) -> Void)
    }

    /// The answer to `message` when its interface can give it at once or by offloaded work, else
    /// nil: then pass the message to ``handle(message:context:send:)``, which also answers every
    /// malformed or invalid call. The message is parsed and validated once for both.
    public func answerWithoutTask(to message: [UInt8], context: VarlinkCallContext) -> AnswerWithoutTask? {
        guard let call = try? VarlinkCall(bytes: message), !call.more, !call.oneway, !call.upgrade,
              let registered = interfaces[call.interface] else { return nil }
        let immediate = registered.implementation as? any VarlinkImmediateInterface
        let offloading = registered.implementation as? any VarlinkOffloadingInterface
        guard immediate != nil || offloading != nil,
              (try? registered.definition.validateCall(method: call.methodName, parameters: call.parameters,
                                                       allowUnknownFields: allowUnknownParameters)) != nil
        else { return nil }
        if let reply = immediate?.immediateReply(to: call, context: context), !reply.continues {
            return .now(reply.framedBytes())
        }
        guard let offload = offloading?.offload(call, context: context) else { return nil }
        let unexpected = unexpectedErrorHandler
        return .offloaded { done in
            offload.schedule {
                let reply: VarlinkReply
                do {
                    reply = VarlinkReply(parameters: try offload.work())
                } catch let error as VarlinkError {
                    reply = VarlinkReply(error)
                } catch {
                    unexpected?(call, error)
                    reply = VarlinkReply(.internalError)
                }
                done(reply.framedBytes())
            }
        }
    }

    /// Runs one call and collects its replies (for tests and in-process use).
    public func replies(to call: VarlinkCall, context: VarlinkCallContext = VarlinkCallContext()) async -> [VarlinkReply] {
        let collected = Mutex<[VarlinkReply]>([])
        await handle(call, context: context) { reply in collected.withLock { $0.append(reply) } }
        return collected.withLock { $0 }
    }

    private func handleServiceCall(_ call: VarlinkCall, sink: CallReplySink) async throws {
        switch call.methodName {
        case "GetInfo":
            try await sink.reply([
                "vendor": .string(vendor), "product": .string(product), "version": .string(version),
                "url": .string(url), "interfaces": .array(interfaceNames.map { .string($0) }),
            ], continues: false)
        case "GetInterfaceDescription":
            let name = call.parameters["interface"]?.stringValue ?? ""
            guard let registered = interfaces[name] else { throw VarlinkError.interfaceNotFound(name) }
            try await sink.reply(["description": .string(registered.description)], continues: false)
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }
}

/// Enforces the reply rules for one call.
final class CallReplySink: VarlinkReplySink {
    private struct State {
        var finished = false
        var transportFailed = false
    }

    let call: VarlinkCall
    let send: @Sendable (VarlinkReply) async throws -> Void
    let poster: (any VarlinkReplyPoster)?
    private let state = Mutex(State())

    init(call: VarlinkCall, poster: (any VarlinkReplyPoster)? = nil, send: @escaping @Sendable (VarlinkReply) async throws -> Void) {
        self.call = call
        self.poster = poster
        self.send = send
    }

    var isFinished: Bool { state.withLock { $0.finished } }
    var transportFailed: Bool { state.withLock { $0.transportFailed } }

    func reply(_ parameters: [String: JSONValue], continues: Bool) async throws {
        try await deliver(VarlinkReply(parameters: parameters, continues: continues))
    }

    func reply(encodedParameters: [UInt8], continues: Bool) async throws {
        try await deliver(VarlinkReply(encodedParameters: encodedParameters, continues: continues))
    }

    private func deliver(_ reply: VarlinkReply) async throws {
        let continues = reply.continues
        enum Action { case discard, send, expectedMore }
        let action: Action = try state.withLock { s throws(VarlinkReplySinkError) in
            if s.finished { throw .callAlreadyAnswered(method: call.method) }
            if continues && !call.more && !call.oneway { s.finished = true; return .expectedMore }
            if !continues { s.finished = true }
            return call.oneway ? .discard : .send
        }
        switch action {
        case .discard: return
        case .send: try await transmit(reply)
        case .expectedMore:
            try await transmit(VarlinkReply(.expectedMore))
            throw VarlinkReplySinkError.expectedMore(method: call.method)
        }
    }

    /// Sends `error` as the final reply unless the call is finished, oneway, or the connection is gone.
    func finish(with error: VarlinkError) async {
        let shouldSend = state.withLock { s in
            defer { s.finished = true }
            return !s.finished && !s.transportFailed && !call.oneway
        }
        if shouldSend { try? await transmit(VarlinkReply(error)) }
    }

    private func transmit(_ reply: VarlinkReply) async throws {
        do { try await send(reply) } catch {
            state.withLock { $0.transportFailed = true }
            throw error
        }
    }
}
