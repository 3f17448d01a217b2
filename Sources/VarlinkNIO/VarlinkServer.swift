#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Varlink

/// How and where a ``VarlinkServer`` listens, and its limits.
public struct VarlinkServerConfiguration: Sendable {
    /// Where to listen.
    public enum Listen: Sendable, Hashable {
        /// Bind a Unix socket at `path`. A stale socket file (nobody answers) is replaced; a
        /// live one or a path that is not a socket is refused. The file gets `mode` and, if
        /// given, group `group`; it is removed at shutdown.
        case path(String, mode: UInt32 = 0o660, group: UInt32? = nil)
        /// Adopt an inherited socket (e.g. fd 3 from systemd socket activation). It is made
        /// to listen if it does not yet; its file is never removed.
        case inheritedSocket(fileDescriptor: Int32)
    }

    public var listen: Listen
    /// Largest accepted message (bytes, without the NUL). A larger one gets an
    /// `InvalidParameter` error reply and the connection is closed.
    public var maxMessageSize: Int
    /// Connections beyond this are accepted and closed at once.
    public var maxConnections: Int
    /// Connections one unprivileged uid may hold at once, so that one user cannot take every
    /// slot; nil: half of `maxConnections`. Root and `isPrivileged` peers are not counted.
    public var maxConnectionsPerUser: Int?
    /// Slots only privileged peers (root, and those `isPrivileged` accepts) may take, so that an
    /// administrator can always connect while others hold every other slot; nil: a quarter of
    /// `maxConnections`, at most 8.
    public var reservedConnections: Int?
    /// A client that sent part of a message and then nothing for this long is disconnected, and so
    /// is one that reads none of its replies for this long once the socket and NIO buffers are full.
    public var stallTimeout: Duration
    /// A connection with no call in progress (a `Watch` is one) that sends nothing for this long
    /// is closed.
    public var idleTimeout: Duration
    /// Optional admission check on the peer's credentials; `false` closes the connection at once.
    public var acceptPeer: (@Sendable (PeerCredentials?) -> Bool)?
    /// Who may use the reserved slots besides root (e.g. members of the authorised group).
    public var isPrivileged: (@Sendable (PeerCredentials) -> Bool)?
    /// The answer to a call that arrives, or is still waiting its turn, once shutdown has begun
    /// (e.g. the service's `ShuttingDown` error); nil: such a call gets none and sees the
    /// connection close.
    public var shuttingDownReply: VarlinkError?

    public init(
        listen: Listen, maxMessageSize: Int = 65536, maxConnections: Int = 128,
        maxConnectionsPerUser: Int? = nil, reservedConnections: Int? = nil,
        stallTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(60),
        acceptPeer: (@Sendable (PeerCredentials?) -> Bool)? = nil,
        isPrivileged: (@Sendable (PeerCredentials) -> Bool)? = nil
    ) {
        self.listen = listen
        self.maxMessageSize = maxMessageSize
        self.maxConnections = maxConnections
        self.reservedConnections = reservedConnections
        self.maxConnectionsPerUser = maxConnectionsPerUser
        self.stallTimeout = stallTimeout
        self.idleTimeout = idleTimeout
        self.acceptPeer = acceptPeer
        self.isPrivileged = isPrivileged
    }

    /// The per-user cap in effect.
    var perUserLimit: Int { maxConnectionsPerUser ?? max(1, maxConnections / 2) }
    /// The reserve in effect.
    var reserve: Int { min(reservedConnections ?? min(8, maxConnections / 4), maxConnections) }
}

/// Why a ``VarlinkServer`` could not start.
public enum VarlinkServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A server already answers on the socket path.
    case socketInUse(path: String)
    /// The path exists and is not a socket; it is left alone.
    case notASocket(path: String)
    /// The path does not fit in `sockaddr_un` (107 bytes).
    case pathTooLong(path: String)
    /// Binding, probing or preparing the path failed.
    case bindFailed(path: String, reason: String)
    /// Setting the socket file's mode or group failed.
    case permissionSetupFailed(path: String, reason: String)
    /// The inherited file descriptor is not a usable stream socket.
    case invalidInheritedSocket(fileDescriptor: Int32, reason: String)

    public var description: String {
        switch self {
        case .socketInUse(let p): return "another server is already listening on \(p); stop it first (or choose another socket path)"
        case .notASocket(let p): return "\(p) exists and is not a socket; refusing to replace it (remove it or choose another socket path)"
        case .pathTooLong(let p): return "socket path \(p) is too long (at most 107 bytes)"
        case .bindFailed(let p, let r): return "cannot listen on \(p): \(r)"
        case .permissionSetupFailed(let p, let r): return "cannot set owner group/mode of \(p): \(r)"
        case .invalidInheritedSocket(let fd, let r): return "inherited file descriptor \(fd) is not a usable listening socket: \(r)"
        }
    }
}

/// A Varlink server on a Unix domain socket.
///
/// Use ``bind(service:configuration:eventLoopGroup:logger:)`` (the socket accepts connections
/// afterwards: signal readiness then), then ``run()`` until ``shutdown()`` or task
/// cancellation. Calls on one connection are processed strictly one after the other; a
/// `more` call keeps its connection busy until its last reply. Replies are written with
/// backpressure. A client hang-up cancels its running handler.
///
/// Connections are accepted on a dedicated thread (``UnixAcceptor``) that takes the peer's
/// credentials from the kernel and applies the connection limits before NIO sees the socket.
public final class VarlinkServer: Sendable {
    /// One admitted connection; `channel` is set once NIO has adopted the socket.
    private struct Slot {
        var channel: (any Channel)?
        /// The uid whose per-user count this connection is in (unprivileged peers only).
        let uid: UInt32?
        let privileged: Bool
    }

    private struct State {
        var shuttingDown = false
        var nextID: UInt64 = 0
        var slots: [UInt64: Slot] = [:]
        /// Connections in the middle of a call (a graceful shutdown lets that call answer).
        var busy: Set<UInt64> = []
        var perUser: [UInt32: Int] = [:]
        var unprivileged = 0
        /// Connections refused at accept since start, by reason (the case's name).
        var refusals: [String: UInt64] = [:]
    }

    /// Connections open now, and those refused at accept since start by reason (`full`, `unprivilegedFull`,
    /// `perUser`, `rejected`): for the daemon's metrics.
    public var statistics: (open: Int, refused: [String: UInt64]) {
        state.withLock { ($0.slots.count, $0.refusals) }
    }

    /// Why a connection was refused at accept.
    enum Refusal: String, Error {
        case full = "the connection limit is reached"
        case unprivilegedFull = "only the reserved slots for root and the authorised group are free"
        case perUser = "this user holds its maximum number of connections"
        case rejected = "refused by the admission policy"
    }

    public let service: VarlinkService
    public let configuration: VarlinkServerConfiguration
    private let logger: Logger
    private let eventLoopGroup: any EventLoopGroup
    private let acceptor: UnixAcceptor
    /// (path, dev, inode) of the socket file we created, to remove at shutdown.
    private let ownedSocketFile: (path: String, dev: UInt64, ino: UInt64)?
    private let state = Mutex(State())
    private let finished: EventLoopPromise<Void>
    private let runStarted = Atomic<Bool>(false)
    private let limiter = LogRateLimiter()
    /// The listen backlog asked for (the kernel caps it at `net.core.somaxconn`, 4096 by
    /// default): one local user looping connect/close must not keep it full, so that root's
    /// `roombridgectl status` gets in (its client also retries `EAGAIN`).
    static let backlog: Int32 = 4096
    /// One ``LoopQueue`` per event loop, made when a connection first lands on it.
    private let loopQueues = Mutex<[ObjectIdentifier: LoopQueue]>([:])

    private init(
        service: VarlinkService, configuration: VarlinkServerConfiguration, logger: Logger,
        eventLoopGroup: any EventLoopGroup, listeningSocket: Int32,
        ownedSocketFile: (path: String, dev: UInt64, ino: UInt64)?
    ) throws(VarlinkServerError) {
        self.service = service
        self.configuration = configuration
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
        self.acceptor = try UnixAcceptor(listeningSocket: listeningSocket, logger: logger)
        self.ownedSocketFile = ownedSocketFile
        self.finished = eventLoopGroup.next().makePromise(of: Void.self)
        // Connections are accepted (and queued) from now on; the thread holds no reference to
        // the server, so dropping it without shutdown() still stops the thread (deinit).
        acceptor.start { [weak self] peer in self?.admit(peer) }
    }

    deinit {
        // Completing twice is a no-op; this only keeps NIO's leak check quiet for a server
        // that is dropped without shutdown().
        finished.succeed(())
        acceptor.stop()
    }

    /// Creates the listening socket. Connections are accepted (and queued) from now on, but
    /// served only once ``run()`` is called.
    public static func bind(
        service: VarlinkService, configuration: VarlinkServerConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "varlink.server")
    ) async throws -> VarlinkServer {
        switch configuration.listen {
        case .path(let path, let mode, let group):
            guard path.utf8.count < 108, !path.isEmpty else { throw VarlinkServerError.pathTooLong(path: path) }
            switch probeSocketPath(path) {
            case .missing: break
            case .notASocket: throw VarlinkServerError.notASocket(path: path)
            case .live: throw VarlinkServerError.socketInUse(path: path)
            case .stale:
                logger.info("replacing stale socket file", metadata: ["path": "\(path)"])
                if unlink(path) != 0, errno != ENOENT {
                    throw VarlinkServerError.bindFailed(path: path, reason: "cannot remove stale socket: \(errnoDescription(errno))")
                }
            case .failed(let code):
                throw VarlinkServerError.bindFailed(path: path, reason: "cannot inspect existing path: \(errnoDescription(code))")
            }
            let fd = try listeningSocket(path: path)
            let identity = fileIdentity(path)
            func fail(_ reason: String) -> VarlinkServerError {
                close(fd)
                unlink(path)
                return .permissionSetupFailed(path: path, reason: reason)
            }
            if chmod(path, mode_t(mode)) != 0 { throw fail("chmod \(String(mode, radix: 8)): \(errnoDescription(errno))") }
            if let group, chown(path, uid_t.max, gid_t(group)) != 0 { throw fail("chown to gid \(group): \(errnoDescription(errno))") }
            let owned = identity.map { (path: path, dev: $0.0, ino: $0.1) }
            let server = try VarlinkServer(service: service, configuration: configuration, logger: logger,
                                           eventLoopGroup: eventLoopGroup, listeningSocket: fd, ownedSocketFile: owned)
            logger.info("listening", metadata: ["path": "\(path)", "mode": "\(String(mode, radix: 8))"])
            return server

        case .inheritedSocket(let fd):
            var st = stat()
            guard fstat(fd, &st) == 0 else {
                throw VarlinkServerError.invalidInheritedSocket(fileDescriptor: fd, reason: errnoDescription(errno))
            }
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw VarlinkServerError.invalidInheritedSocket(fileDescriptor: fd, reason: "not a socket")
            }
            var accepting: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) == 0, accepting == 0 {
                guard listen(fd, Self.backlog) == 0 else {
                    throw VarlinkServerError.invalidInheritedSocket(fileDescriptor: fd, reason: "listen: \(errnoDescription(errno))")
                }
            }
            let server = try VarlinkServer(service: service, configuration: configuration, logger: logger,
                                           eventLoopGroup: eventLoopGroup, listeningSocket: fd, ownedSocketFile: nil)
            logger.info("listening on inherited socket", metadata: ["fd": "\(fd)"])
            return server
        }
    }

    /// A listening Unix socket bound at `path`.
    private static func listeningSocket(path: String) throws(VarlinkServerError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .bindFailed(path: path, reason: "socket: \(errnoDescription(errno))") }
        let rc = bindUnixSocket(fd, path: path)
        guard rc == 0 else {
            close(fd)
            throw .bindFailed(path: path, reason: errnoDescription(rc))
        }
        guard listen(fd, Self.backlog) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw .bindFailed(path: path, reason: "listen: \(errnoDescription(code))")
        }
        return fd
    }

    /// Serves connections until ``shutdown()`` is called or the calling task is cancelled.
    /// Returns after every connection is closed and the socket file (if we created it) is removed.
    public func run() async throws {
        if runStarted.exchange(true, ordering: .acquiringAndReleasing) {
            // Already running or already shut down: just wait for the end.
            try? await finished.futureResult.get()
            return
        }
        defer {
            removeSocketFile()
            finished.succeed(())
        }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                // Ends once the acceptor has stopped (shutdown) and handed over what it accepted.
                for await accepted in acceptor.connections {
                    group.addTask { await self.adoptAndServe(accepted) }
                }
            }
        } onCancel: {
            self.initiateShutdown()
        }
    }

    /// Hands an accepted socket to NIO and serves it; closes it at once when shutting down.
    private func adoptAndServe(_ accepted: UnixAcceptor.Accepted) async {
        defer { release(accepted.token) }
        guard !state.withLock({ $0.shuttingDown }) else {
            close(accepted.fileDescriptor)
            return
        }
        let (messages, toTask) = AsyncStream<[UInt8]>.makeStream()
        let context = VarlinkCallContext(peer: accepted.peer)
        var connectionLogger = self.logger
        if let peer = accepted.peer { connectionLogger[metadataKey: "peer"] = "pid=\(peer.pid) uid=\(peer.uid)" }
        let logger = connectionLogger
        let limiter = self.limiter
        let channel: any Channel
        let handler: NIOLoopBound<VarlinkConnectionHandler>
        do {
            (channel, handler) = try await ClientBootstrap(group: eventLoopGroup)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .withConnectedSocket(accepted.fileDescriptor) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let h = VarlinkConnectionHandler(
                        service: self.service, callContext: context, maxMessageSize: self.configuration.maxMessageSize,
                        idleTimeout: self.configuration.idleTimeout, stallTimeout: self.configuration.stallTimeout, toTask: toTask,
                        logFrameError: { error in limiter.log(logger, .notice, key: "frame-error", "closing connection: \(error)") },
                        logTimeout: { reason in
                            logger.debug("\(reason)")
                        })
                    try channel.pipeline.syncOperations.addHandler(h)
                    return (channel, NIOLoopBound(h, eventLoop: channel.eventLoop))
                }
            }
        } catch {
            // NIO closes the socket when its channel could not be set up.
            logger.debug("could not adopt an accepted connection: \(error)")
            return
        }
        guard attach(accepted.token, channel) else {
            try? await channel.close()
            return
        }
        await serve(channel: channel, handler: handler, messages: messages, id: accepted.token, context: context, logger: logger)
    }

    private func loopQueue(for eventLoop: any EventLoop) -> LoopQueue {
        loopQueues.withLock { queues in
            if let queue = queues[ObjectIdentifier(eventLoop)] { return queue }
            let queue = LoopQueue(eventLoop: eventLoop)
            queues[ObjectIdentifier(eventLoop)] = queue
            return queue
        }
    }

    /// Stops accepting, closes every client connection (cancelling running handlers), closes
    /// the listener and removes the socket file if this server created it. Waits for
    /// ``run()`` to return if it is running.
    ///
    /// - Parameter gracePeriod: how long a call already running may take to send its final
    ///   reply (e.g. a stream its service has just ended with an error) before its connection
    ///   is closed anyway. Idle connections close at once; no new call starts.
    public func shutdown(gracePeriod: Duration = .zero) async {
        initiateShutdown(gracePeriod: gracePeriod)
        if runStarted.exchange(true, ordering: .acquiringAndReleasing) {
            try? await finished.futureResult.get()
        } else {
            // Never ran: close the connections accepted meanwhile.
            for await accepted in acceptor.connections {
                close(accepted.fileDescriptor)
                release(accepted.token)
            }
            removeSocketFile()
            finished.succeed(())
        }
    }

    /// Starts a graceful shutdown without waiting (e.g. from a synchronous
    /// graceful-shutdown handler); ``run()`` returns once it completes.
    public func beginShutdown(gracePeriod: Duration = .zero) {
        initiateShutdown(gracePeriod: gracePeriod)
    }

    /// Number of client connections admitted and not yet closed.
    public var connectionCount: Int { state.withLock { $0.slots.count } }

    private func initiateShutdown(gracePeriod: Duration = .zero) {
        let channels: [(channel: any Channel, busy: Bool)]? = state.withLock { s in
            if s.shuttingDown { return nil }
            s.shuttingDown = true
            return s.slots.compactMap { id, slot in slot.channel.map { ($0, s.busy.contains(id)) } }
        }
        guard let channels else { return }
        logger.info("shutting down")
        acceptor.stop()
        // Stop reading: a connection answers the calls it has already read (each gets
        // `shuttingDownReply` unless it is running), then closes (see `serve`). Without a grace
        // period everything closes at once.
        for c in channels { c.channel.close(mode: gracePeriod > .zero ? .input : .all, promise: nil) }
        // Busy connections close themselves once their call has answered (see `connectionLoop`);
        // whatever is still open when the grace period ends is closed here.
        if gracePeriod > .zero, channels.contains(where: \.busy) {
            eventLoopGroup.next().scheduleTask(in: .nanoseconds(gracePeriod.nanoseconds)) { [weak self] in
                guard let self else { return }
                for c in self.state.withLock({ $0.slots.values.compactMap(\.channel) }) { c.close(promise: nil) }
            }
        }
    }

    /// Marks a connection as running a call; false when the server is shutting down (no new calls).
    private func beginCall(_ id: UInt64) -> Bool {
        state.withLock { s in
            if s.shuttingDown { return false }
            s.busy.insert(id)
            return true
        }
    }

    /// Marks the call finished.
    private func endCall(_ id: UInt64) {
        state.withLock { s in _ = s.busy.remove(id) }
    }

    /// Runs on the accept thread for every new connection: applies the admission policy and the
    /// limits (global, per user, reserve), and returns the new connection's id, or nil to close it.
    private func admit(_ peer: PeerCredentials?) -> UInt64? {
        if let acceptPeer = configuration.acceptPeer, !acceptPeer(peer) {
            refused(.rejected, peer)
            return nil
        }
        let privileged = peer.map { $0.uid == 0 || configuration.isPrivileged?($0) == true } ?? false
        let outcome: Result<UInt64, Refusal>? = state.withLock { s in
            if s.shuttingDown { return nil }
            if s.slots.count >= configuration.maxConnections { return .failure(.full) }
            if !privileged, s.unprivileged >= configuration.maxConnections - configuration.reserve {
                return .failure(.unprivilegedFull)
            }
            if !privileged, let uid = peer?.uid, s.perUser[uid, default: 0] >= configuration.perUserLimit {
                return .failure(.perUser)
            }
            s.nextID += 1
            // Only unprivileged connections count towards their uid's cap.
            let counted = privileged ? nil : peer?.uid
            s.slots[s.nextID] = Slot(channel: nil, uid: counted, privileged: privileged)
            if let uid = counted { s.perUser[uid, default: 0] += 1 }
            if !privileged { s.unprivileged += 1 }
            return .success(s.nextID)
        }
        switch outcome {
        case .success(let id)?: return id
        case .failure(let why)?: refused(why, peer); return nil
        case nil: return nil
        }
    }

    private func refused(_ why: Refusal, _ peer: PeerCredentials?) {
        state.withLock { $0.refusals["\(why)", default: 0] += 1 }
        limiter.log(logger, .warning, key: "refused-\(why)", "closing new connection: \(why.rawValue)",
                    metadata: ["uid": "\(peer.map { String($0.uid) } ?? "unknown")",
                               "maxConnections": "\(configuration.maxConnections)",
                               "maxConnectionsPerUser": "\(configuration.perUserLimit)"])
    }

    /// Records the NIO channel of an admitted connection; false when shutting down.
    private func attach(_ id: UInt64, _ channel: any Channel) -> Bool {
        state.withLock { s in
            if s.shuttingDown { return false }
            s.slots[id]?.channel = channel
            return true
        }
    }

    private func release(_ id: UInt64) {
        state.withLock { s in
            s.busy.remove(id)
            guard let slot = s.slots.removeValue(forKey: id) else { return }
            if let uid = slot.uid {
                s.perUser[uid, default: 1] -= 1
                if s.perUser[uid] == 0 { s.perUser.removeValue(forKey: uid) }
            }
            if !slot.privileged { s.unprivileged -= 1 }
        }
    }

    private func removeSocketFile() {
        guard let owned = ownedSocketFile, let now = fileIdentity(owned.path), now == (owned.dev, owned.ino) else { return }
        unlink(owned.path)
    }

    private func serve(channel: any Channel, handler: NIOLoopBound<VarlinkConnectionHandler>, messages: AsyncStream<[UInt8]>,
                       id: UInt64, context: VarlinkCallContext, logger: Logger) async {
        // Anyone who may open the socket can loop connect/close: their lines are rate-limited
        // per user at every level; root's and the authorised group's are all kept.
        let trusted = context.peer.map { $0.uid == 0 || configuration.isPrivileged?($0) == true } ?? false
        let limiter = self.limiter
        let key = "connection-\(context.peer.map { String($0.uid) } ?? "?")"
        func note(_ text: String) {
            if trusted { logger.debug("\(text)") } else { limiter.log(logger, .debug, key: key, text) }
        }
        note("connection opened")
        await withTaskGroup(of: Void.self) { group in
            // Ends when the channel closes (hang-up, stall timeout, shutdown) ...
            group.addTask { try? await channel.closeFuture.get() }
            // ... or when the calls end (the client stopped sending, or shutdown).
            group.addTask {
                await self.callLoop(channel: channel, handler: handler, messages: messages, id: id, context: context)
            }
            _ = await group.next()
            // Whichever finished first: the other must stop too (a hang-up cancels the handler).
            // Through the loop's queue, after the replies already submitted, so that a final
            // reply (ShuttingDown) is written before the end of the connection.
            loopQueue(for: channel.eventLoop).submit(.run { channel.close(promise: nil) })
            group.cancelAll()
        }
        note("connection closed")
    }

    /// Answers, in order, the messages the connection's handler could not answer at once.
    private func callLoop(channel: any Channel, handler: NIOLoopBound<VarlinkConnectionHandler>, messages: AsyncStream<[UInt8]>,
                          id: UInt64, context: VarlinkCallContext) async {
        // Every write and action for the channel goes through its loop's queue, in order.
        let queue = loopQueue(for: channel.eventLoop)
        let poster = ChannelReplyPoster(channel: channel, queue: queue)
        let send: @Sendable (VarlinkReply) async throws -> Void = { reply in
            // The client has gone: stop the call (a `more` call would otherwise run to its end for nobody).
            guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            queue.submit(.write(channel, reply.framedBytes(), promise))
            let written = promise.futureResult
            // Replies queue in NIO while the socket accepts them. Once it does not (the client is
            // not reading), wait for this one; the connection's handler closes the connection if
            // it stays unwritable for the stall timeout, so a client that stops reading holds no
            // more than the socket's buffers and NIO's high-water mark.
            guard !channel.isWritable else { return }
            try await written.get()
        }
        for await message in messages {
            guard beginCall(id) else {
                // Shutting down: every call already read gets an answer, not an end of file.
                if let refusal = configuration.shuttingDownReply, let call = try? VarlinkCall(bytes: message), !call.oneway {
                    try? await send(VarlinkReply(refusal))
                }
                continue
            }
            await service.handle(message: message, context: context, poster: poster, send: send)
            // Shutting down: the calls already read get their answer next (the connection no
            // longer reads, so the loop ends when they are answered, and the connection closes).
            endCall(id)
            // After the call's replies were submitted, so a reply the handler writes at once follows them.
            queue.submit(.run { handler.value.callFinished() })
            if Task.isCancelled { return }
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (for NIO's `TimeAmount`).
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
