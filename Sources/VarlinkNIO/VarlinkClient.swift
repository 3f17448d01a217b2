#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import NIOPosix
import Varlink

/// Why a ``VarlinkClient`` could not connect or lost its connection.
public enum VarlinkClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing exists at the socket path (the service is probably not running).
    case socketNotFound(path: String)
    /// The socket file exists but nobody listens on it (the service is not running).
    case connectionRefused(path: String)
    /// The socket exists but this user may not connect to it.
    case permissionDenied(path: String)
    /// Connecting failed for another reason.
    case connectFailed(path: String, reason: String)
    /// The server closed the connection before the call was answered.
    case connectionClosed
    /// The server sent something that is not a valid Varlink reply.
    case protocolError(String)

    public var description: String {
        switch self {
        case .socketNotFound(let p): return "no Varlink socket at \(p) (is the service running?)"
        case .connectionRefused(let p): return "nothing is listening on \(p) (is the service running?)"
        case .permissionDenied(let p): return "permission denied connecting to \(p) (are you in the socket's group?)"
        case .connectFailed(let p, let r): return "cannot connect to \(p): \(r)"
        case .connectionClosed: return "the service closed the connection"
        case .protocolError(let m): return "invalid reply from the service: \(m)"
        }
    }
}

/// A Varlink client on a Unix socket.
///
/// Calls may be issued from several tasks; they are pipelined on the one connection and
/// answered in order. Error replies throw ``VarlinkError``; transport problems throw
/// ``VarlinkClientError``.
public final class VarlinkClient: Sendable {
    public typealias Parameters = [String: JSONValue]
    /// What an expectation needs after a reply.
    enum ExpectationState {
        /// More replies belong to this call.
        case waiting
        /// The call is complete.
        case done
        /// The call is complete, and the connection can no longer pair replies with calls.
        case broken(VarlinkClientError)
    }

    /// Receives each reply (or the failure) for one call.
    typealias Expectation = @Sendable (Result<VarlinkReply, any Error>) -> ExpectationState

    private let channel: any Channel
    private let handler: NIOLoopBound<ClientHandler>
    /// The socket path this client is connected to.
    public let path: String

    private init(channel: any Channel, handler: NIOLoopBound<ClientHandler>, path: String) {
        self.channel = channel
        self.handler = handler
        self.path = path
    }

    deinit {
        channel.close(promise: nil)
    }

    /// Connects to the Varlink socket at `path`.
    /// - Throws: ``VarlinkClientError`` (`socketNotFound`, `connectionRefused`, `permissionDenied`, `connectFailed`).
    public static func connect(
        path: String, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maxMessageSize: Int = 16 << 20
    ) async throws -> VarlinkClient {
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ClientHandler(maxMessageSize: maxMessageSize))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(unixDomainSocketPath: path).get()
        } catch {
            throw mapConnectError(error, path: path)
        }
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: ClientHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return VarlinkClient(channel: channel, handler: handler, path: path)
    }

    static func mapConnectError(_ error: any Error, path: String) -> VarlinkClientError {
        var code: Int32?
        if let io = error as? IOError { code = io.errnoCode }
        if let e = error as? NIOConnectionError {
            for attempt in e.connectionErrors { if let io = attempt.error as? IOError { code = io.errnoCode } }
        }
        switch code {
        case ENOENT?, ENOTDIR?: return .socketNotFound(path: path)
        case ECONNREFUSED?: return .connectionRefused(path: path)
        case EACCES?, EPERM?: return .permissionDenied(path: path)
        case let c?: return .connectFailed(path: path, reason: errnoDescription(c))
        case nil:
            if error is SocketAddressError { return .connectFailed(path: path, reason: "invalid socket path") }
            return .connectFailed(path: path, reason: "\(error)")
        }
    }

    /// Sends a call; `expectation` (if any) is registered before the write so replies match calls in order.
    private func submit(_ call: VarlinkCall, expectation: Expectation?) -> EventLoopFuture<Void> {
        let bytes = call.framedBytes()
        let channel = self.channel
        let handler = self.handler
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute {
            if let expectation, !handler.value.enqueue(expectation) {
                written.fail(VarlinkClientError.connectionClosed)
                return
            }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenFailure { _ in channel.close(promise: nil) }
            promise.futureResult.cascade(to: written)
            channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: promise)
        }
        return written.futureResult
    }

    /// Calls `method` and returns the reply's parameters.
    /// - Throws: ``VarlinkError`` for an error reply, ``VarlinkClientError`` for transport problems.
    public func call(_ method: String, parameters: Parameters = [:]) async throws -> Parameters {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Parameters, any Error>) in
                _ = submit(VarlinkCall(method: method, parameters: parameters)) { result in
                    switch result {
                    case .success(let reply):
                        if let error = reply.varlinkError {
                            continuation.resume(throwing: error)
                        } else if reply.continues {
                            // Streaming to a call without `more` breaks the reply/call pairing
                            // for the rest of the connection: give up on it.
                            let error = VarlinkClientError.protocolError("\(method) sent several replies although the call did not ask for more")
                            continuation.resume(throwing: error)
                            return .broken(error)
                        } else {
                            continuation.resume(returning: reply.parameters)
                        }
                        return .done
                    case .failure(let error):
                        continuation.resume(throwing: error)
                        return .done
                    }
                }
            }
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// Calls `method` with Encodable parameters and decodes the reply.
    /// - Throws: ``VarlinkError``, ``VarlinkClientError``, or `protocolError` naming the field
    ///   that did not decode.
    public func call<P: Encodable, R: Decodable>(_ method: String, _ parameters: P, returning type: R.Type) async throws -> R {
        let reply = try await call(method, parameters: JSONValueEncoder().encodeObject(parameters))
        do {
            return try JSONValueDecoder().decode(R.self, from: reply)
        } catch let error as DecodingError {
            throw VarlinkClientError.protocolError("reply of \(method): field '\(JSONValueDecoder.fieldPath(of: error))' does not match \(R.self)")
        }
    }

    /// Calls `method` with `more: true` and yields each reply's parameters until the last one.
    /// An error reply ends the stream by throwing ``VarlinkError``. Cancelling the iterating
    /// task (or dropping the stream early) closes the connection, as the protocol requires
    /// for a client no longer interested in the replies.
    public func stream(_ method: String, parameters: Parameters = [:]) -> AsyncThrowingStream<Parameters, any Error> {
        AsyncThrowingStream { continuation in
            let channel = self.channel
            continuation.onTermination = { termination in
                if case .cancelled = termination { channel.close(promise: nil) }
            }
            _ = submit(VarlinkCall(method: method, parameters: parameters, more: true)) { result in
                switch result {
                case .success(let reply):
                    if let error = reply.varlinkError {
                        continuation.finish(throwing: error)
                        return .done
                    }
                    continuation.yield(reply.parameters)
                    if reply.continues { return .waiting }
                    continuation.finish()
                    return .done
                case .failure(let error):
                    continuation.finish(throwing: error)
                    return .done
                }
            }
        }
    }

    /// Sends a `oneway` call (no reply); returns once it is written.
    public func oneway(_ method: String, parameters: Parameters = [:]) async throws {
        do {
            try await submit(VarlinkCall(method: method, parameters: parameters, oneway: true), expectation: nil).get()
        } catch {
            throw VarlinkClientError.connectionClosed
        }
    }

    /// Closes the connection; pending calls fail with ``VarlinkClientError/connectionClosed``.
    public func close() async {
        try? await channel.close()
    }

    /// Completes when the connection is closed (by either side).
    public var closeFuture: EventLoopFuture<Void> { channel.closeFuture }
}

/// Frames replies and hands each to the oldest outstanding call.
final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var decoder: VarlinkFrameDecoder
    private var pending = CircularBuffer<VarlinkClient.Expectation>()
    private var terminalError: (any Error)?

    init(maxMessageSize: Int) {
        decoder = VarlinkFrameDecoder(maxMessageSize: maxMessageSize)
    }

    /// Registers the expectation for the next call; `false` if the connection is already gone.
    func enqueue(_ expectation: @escaping VarlinkClient.Expectation) -> Bool {
        if let terminalError {
            _ = expectation(.failure(terminalError))
            return false
        }
        pending.append(expectation)
        return true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        decoder.append(buffer.readableBytesView)
        do {
            while let message = try decoder.nextMessage() {
                if message.isEmpty { continue }
                let reply = try VarlinkReply(bytes: message)
                guard let expectation = pending.first else {
                    throw VarlinkClientError.protocolError("reply without a call")
                }
                switch expectation(.success(reply)) {
                case .waiting: break
                case .done: pending.removeFirst()
                case .broken(let error):
                    pending.removeFirst()
                    throw error
                }
            }
        } catch let error as VarlinkClientError {
            fail(error, context: context)
        } catch {
            fail(VarlinkClientError.protocolError("\(error)"), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(VarlinkClientError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(VarlinkClientError.connectionClosed, context: context)
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: any Error) {
        if terminalError == nil { terminalError = error }
        while let expectation = pending.popFirst() { _ = expectation(.failure(error)) }
    }
}
