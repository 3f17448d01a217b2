#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import NIOCore
import NIOPosix
import Synchronization
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
    /// The server closed the connection before the call was answered. The call was written, so
    /// the service may have carried it out.
    case connectionClosed
    /// The connection was closed before the call was written: the service never saw it, so it
    /// is safe to send it again on a new connection.
    case closedBeforeSending
    /// The connection broke after a call that changes something was sent and before its answer
    /// came; whether the service carried it out is not known. Look before trying again.
    case outcomeUnknown(method: String)
    /// The server sent something that is not a valid Varlink reply.
    case protocolError(String)

    public var description: String {
        switch self {
        case .socketNotFound(let p): return "no Varlink socket at \(p) (is the service running?)"
        case .connectionRefused(let p): return "nothing is listening on \(p) (is the service running?)"
        case .permissionDenied(let p): return "permission denied connecting to \(p) (are you in the socket's group?)"
        case .connectFailed(let p, let r): return "cannot connect to \(p): \(r)"
        case .connectionClosed: return "the service closed the connection"
        case .closedBeforeSending: return "the connection was closed before the call was sent"
        case .outcomeUnknown(let m): return "the connection broke after \(m) was sent and before it was answered; it may or may not have been carried out: look before trying again"
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
    ///
    /// A connect that the kernel refuses for now (`EAGAIN`: the service's listen backlog is
    /// full, e.g. while another local user floods the socket with connects) waits in the
    /// kernel's queue for room, as a blocking `connect(2)` does, for up to `busyTimeout`: the
    /// flood's own blocking connects wait there too, so retrying non-blocking connects would
    /// lose every free place to them. The blocking connect runs on a Dispatch thread, never on
    /// the cooperative pool or an event loop.
    /// - Throws: ``VarlinkClientError`` (`socketNotFound`, `connectionRefused`, `permissionDenied`, `connectFailed`).
    public static func connect(
        path: String, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maxMessageSize: Int = 16 << 20, busyTimeout: Duration = .seconds(5)
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
        } catch where errnoCode(of: error) == EAGAIN {
            do {
                let fd = try await waitingConnect(path: path, timeout: busyTimeout)
                channel = try await bootstrap.withConnectedSocket(fd).get()
            } catch {
                throw mapConnectError(error, path: path)
            }
        } catch {
            throw mapConnectError(error, path: path)
        }
        return try await client(on: channel, path: path)
    }

    /// A blocking connect that waits up to `timeout` for room in the listen backlog; the
    /// connected descriptor, or the `IOError` it failed with (`EAGAIN` when time ran out).
    static func waitingConnect(path: String, timeout: Duration) async throws -> Int32 {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            DispatchQueue.global().async {
                switch blockingUnixConnect(path, timeout: timeout) {
                case .success(let fd): continuation.resume(returning: fd)
                case .failure(let e): continuation.resume(throwing: IOError(errnoCode: e.code, reason: "connect"))
                }
            }
        }
    }

    private static func client(on channel: any Channel, path: String) async throws -> VarlinkClient {
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: ClientHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return VarlinkClient(channel: channel, handler: handler, path: path)
    }

    /// The `errno` behind a failed connect, if it has one.
    static func errnoCode(of error: any Error) -> Int32? {
        var code: Int32?
        if let io = error as? IOError { code = io.errnoCode }
        if let e = error as? NIOConnectionError {
            for attempt in e.connectionErrors { if let io = attempt.error as? IOError { code = io.errnoCode } }
        }
        return code
    }

    static func mapConnectError(_ error: any Error, path: String) -> VarlinkClientError {
        if let mapped = error as? VarlinkClientError { return mapped }
        switch errnoCode(of: error) {
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
    /// An expectation whose call was never written (the connection was already closed, or the
    /// write failed) gets ``VarlinkClientError/closedBeforeSending``; one written and then left
    /// unanswered gets ``VarlinkClientError/connectionClosed``.
    private func submit(_ call: VarlinkCall, expectation: Expectation?) -> EventLoopFuture<Void> {
        let bytes = call.framedBytes()
        let channel = self.channel
        let handler = self.handler
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute {
            var pending: PendingCall?
            if let expectation {
                guard let registered = handler.value.enqueue(expectation) else {
                    written.fail(VarlinkClientError.closedBeforeSending)
                    return
                }
                pending = registered
            }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            let sent = NIOLoopBound(pending, eventLoop: channel.eventLoop)
            promise.futureResult.whenComplete { result in
                switch result {
                case .success: sent.value?.written = true
                case .failure: channel.close(promise: nil)
                }
            }
            promise.futureResult.cascade(to: written)
            channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: promise)
        }
        return written.futureResult
    }

    /// Whether the connection is still open (the service has not closed it, nor has it failed).
    public var isActive: Bool { channel.isActive }

    /// Calls `method` and returns the reply's parameters.
    ///
    /// Cancelling the calling task ends the wait with `CancellationError` and leaves the
    /// connection open for the other calls on it (the reply, when it comes, is discarded).
    /// - Throws: ``VarlinkError`` for an error reply, ``VarlinkClientError`` for transport problems.
    public func call(_ method: String, parameters: Parameters = [:]) async throws -> Parameters {
        let waiter = ReplyWaiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Parameters, any Error>) in
                guard waiter.install(continuation) else { return }
                _ = submit(VarlinkCall(method: method, parameters: parameters)) { result in
                    switch result {
                    case .success(let reply):
                        if let error = reply.varlinkError {
                            waiter.resume(.failure(error))
                        } else if reply.continues {
                            // Streaming to a call without `more` breaks the reply/call pairing
                            // for the rest of the connection: give up on it.
                            let error = VarlinkClientError.protocolError("\(method) sent several replies although the call did not ask for more")
                            waiter.resume(.failure(error))
                            return .broken(error)
                        } else {
                            waiter.resume(.success(reply.parameters))
                        }
                        return .done
                    case .failure(let error):
                        waiter.resume(.failure(error))
                        return .done
                    }
                }
            }
        } onCancel: {
            waiter.resume(.failure(CancellationError()))
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

    /// Calls a method of the contract (``VarlinkMethod``): its typed parameters, its typed reply.
    public func call<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
        try await call(M.name, parameters, returning: M.Reply.self)
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
    private var pending = CircularBuffer<PendingCall>()
    private var terminalError: (any Error)?

    init(maxMessageSize: Int) {
        decoder = VarlinkFrameDecoder(maxMessageSize: maxMessageSize)
    }

    /// Registers the expectation for the next call; nil if the connection is already gone (the
    /// expectation has then been told ``VarlinkClientError/closedBeforeSending``).
    func enqueue(_ expectation: @escaping VarlinkClient.Expectation) -> PendingCall? {
        if terminalError != nil {
            _ = expectation(.failure(VarlinkClientError.closedBeforeSending))
            return nil
        }
        let call = PendingCall(expectation)
        pending.append(call)
        return call
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        decoder.append(buffer.readableBytesView)
        do {
            while let message = try decoder.nextMessage() {
                if message.isEmpty { continue }
                let reply = try VarlinkReply(bytes: message)
                guard let call = pending.first else {
                    throw VarlinkClientError.protocolError("reply without a call")
                }
                switch call.expectation(.success(reply)) {
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

    /// Fails every call waiting for a reply: with `error` those that were written, with
    /// ``VarlinkClientError/closedBeforeSending`` those whose write never completed.
    private func failAll(_ error: any Error) {
        if terminalError == nil { terminalError = error }
        while let call = pending.popFirst() {
            let unsent = !call.written && (error as? VarlinkClientError) == .connectionClosed
            _ = call.expectation(.failure(unsent ? VarlinkClientError.closedBeforeSending : error))
        }
    }
}

/// One call waiting for its replies, on the connection's event loop.
final class PendingCall {
    let expectation: VarlinkClient.Expectation
    /// Set once the call's bytes were handed to the socket: from then on the service may act on it.
    var written = false

    init(_ expectation: @escaping VarlinkClient.Expectation) { self.expectation = expectation }
}

/// The continuation of one ``VarlinkClient/call(_:parameters:)``, resumed exactly once: by the
/// reply, the connection's failure, or the caller's cancellation, whichever comes first.
final class ReplyWaiter: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<VarlinkClient.Parameters, any Error>)
        /// Resumed; before the continuation was installed, the result it must get.
        case finished(Result<VarlinkClient.Parameters, any Error>?)
    }
    private let state = Mutex(State.idle)

    /// Stores the continuation; false (after resuming it) when the call already ended (cancelled).
    func install(_ continuation: CheckedContinuation<VarlinkClient.Parameters, any Error>) -> Bool {
        let early: Result<VarlinkClient.Parameters, any Error>?? = state.withLock { s in
            if case .finished(let r) = s { return .some(r) }
            s = .waiting(continuation)
            return nil
        }
        guard let early else { return true }
        continuation.resume(with: early ?? .failure(CancellationError()))
        return false
    }

    func resume(_ result: Result<VarlinkClient.Parameters, any Error>) {
        let continuation: CheckedContinuation<VarlinkClient.Parameters, any Error>? = state.withLock { s in
            switch s {
            case .idle:
                s = .finished(result)
                return nil
            case .waiting(let c):
                s = .finished(nil)
                return c
            case .finished:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}

