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
    /// A client that sent part of a message and then nothing for this long is disconnected.
    public var stallTimeout: Duration
    /// Optional admission check on the peer's credentials; `false` closes the connection at once.
    public var acceptPeer: (@Sendable (PeerCredentials?) -> Bool)?

    public init(
        listen: Listen, maxMessageSize: Int = 65536, maxConnections: Int = 128,
        stallTimeout: Duration = .seconds(30), acceptPeer: (@Sendable (PeerCredentials?) -> Bool)? = nil
    ) {
        self.listen = listen
        self.maxMessageSize = maxMessageSize
        self.maxConnections = maxConnections
        self.stallTimeout = stallTimeout
        self.acceptPeer = acceptPeer
    }
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
public final class VarlinkServer: Sendable {
    struct Connection: Sendable {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        let peer: PeerCredentials?
    }

    private struct State {
        var shuttingDown = false
        var connections: [ObjectIdentifier: any Channel] = [:]
        /// Connections in the middle of a call (a graceful shutdown lets that call answer).
        var busy: Set<ObjectIdentifier> = []
    }

    public let service: VarlinkService
    public let configuration: VarlinkServerConfiguration
    private let logger: Logger
    private let serverChannel: NIOAsyncChannel<Connection, Never>
    /// (path, dev, inode) of the socket file we created, to remove at shutdown.
    private let ownedSocketFile: (path: String, dev: UInt64, ino: UInt64)?
    private let state = Mutex(State())
    private let finished: EventLoopPromise<Void>
    private let runStarted = Atomic<Bool>(false)

    private init(
        service: VarlinkService, configuration: VarlinkServerConfiguration, logger: Logger,
        serverChannel: NIOAsyncChannel<Connection, Never>, ownedSocketFile: (path: String, dev: UInt64, ino: UInt64)?
    ) {
        self.service = service
        self.configuration = configuration
        self.logger = logger
        self.serverChannel = serverChannel
        self.ownedSocketFile = ownedSocketFile
        self.finished = serverChannel.channel.eventLoop.makePromise(of: Void.self)
    }

    deinit {
        // Completing twice is a no-op; this only keeps NIO's leak check quiet for a server
        // that is dropped without shutdown().
        finished.succeed(())
        serverChannel.channel.close(promise: nil)
    }

    /// Creates the listening socket. Connections are accepted (and queued) from now on, but
    /// served only once ``run()`` is called.
    public static func bind(
        service: VarlinkService, configuration: VarlinkServerConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "varlink.server")
    ) async throws -> VarlinkServer {
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 128)
        let acceptPeer = configuration.acceptPeer
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Connection> = { channel in
            // NIO does not close an accepted socket whose initializer fails (the fd would leak
            // and the client hang), so every failure path closes the child itself.
            peerCredentials(of: channel).flatMapThrowing { peer -> Connection in
                if let acceptPeer, !acceptPeer(peer) {
                    throw ConnectionRejected()
                }
                let async = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                return Connection(channel: async, peer: peer)
            }.flatMapError { error in
                channel.close(promise: nil)
                return channel.eventLoop.makeFailedFuture(error)
            }
        }

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
            let channel: NIOAsyncChannel<Connection, Never>
            do {
                channel = try await bootstrap.bind(
                    unixDomainSocketPath: path, cleanupExistingSocketFile: false, childChannelInitializer: initializer)
            } catch let error as IOError {
                throw VarlinkServerError.bindFailed(path: path, reason: errnoDescription(error.errnoCode))
            } catch {
                throw VarlinkServerError.bindFailed(path: path, reason: "\(error)")
            }
            let identity = fileIdentity(path)
            func fail(_ reason: String) async -> VarlinkServerError {
                try? await channel.channel.close()
                unlink(path)
                return .permissionSetupFailed(path: path, reason: reason)
            }
            if chmod(path, mode_t(mode)) != 0 { throw await fail("chmod \(String(mode, radix: 8)): \(errnoDescription(errno))") }
            if let group, chown(path, uid_t.max, gid_t(group)) != 0 { throw await fail("chown to gid \(group): \(errnoDescription(errno))") }
            let owned = identity.map { (path: path, dev: $0.0, ino: $0.1) }
            logger.info("listening", metadata: ["path": "\(path)", "mode": "\(String(mode, radix: 8))"])
            return VarlinkServer(service: service, configuration: configuration, logger: logger, serverChannel: channel, ownedSocketFile: owned)

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
                guard listen(fd, 128) == 0 else {
                    throw VarlinkServerError.invalidInheritedSocket(fileDescriptor: fd, reason: "listen: \(errnoDescription(errno))")
                }
            }
            let channel: NIOAsyncChannel<Connection, Never>
            do {
                channel = try await bootstrap.bind(fd, childChannelInitializer: initializer)
            } catch {
                throw VarlinkServerError.invalidInheritedSocket(fileDescriptor: fd, reason: "\(error)")
            }
            logger.info("listening on inherited socket", metadata: ["fd": "\(fd)"])
            return VarlinkServer(service: service, configuration: configuration, logger: logger, serverChannel: channel, ownedSocketFile: nil)
        }
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
        try await withTaskCancellationHandler {
            try await serverChannel.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        let channel = connection.channel.channel
                        guard admit(channel) else {
                            // Closes at once; executeThenClose also finishes the NIOAsyncChannel's
                            // writer, which NIO requires before it is released.
                            try? await connection.channel.executeThenClose { _, _ in }
                            continue
                        }
                        group.addTask {
                            await self.serve(connection)
                            self.release(channel)
                        }
                    }
                }
            }
        } onCancel: {
            self.initiateShutdown()
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
            // Never ran: close connections accepted meanwhile (NIO requires every wrapped
            // channel to be closed through executeThenClose).
            try? await serverChannel.executeThenClose { inbound in
                for try await connection in inbound {
                    try? await connection.channel.executeThenClose { _, _ in }
                }
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

    /// Number of client connections being served.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    private func initiateShutdown(gracePeriod: Duration = .zero) {
        let channels: [(channel: any Channel, busy: Bool)]? = state.withLock { s in
            if s.shuttingDown { return nil }
            s.shuttingDown = true
            return s.connections.map { ($0.value, s.busy.contains($0.key)) }
        }
        guard let channels else { return }
        logger.info("shutting down")
        serverChannel.channel.close(promise: nil)
        for c in channels where !c.busy || gracePeriod <= .zero { c.channel.close(promise: nil) }
        // Busy connections close themselves once their call has answered (see `connectionLoop`);
        // whatever is still open when the grace period ends is closed here.
        if gracePeriod > .zero, channels.contains(where: \.busy) {
            let nanoseconds = gracePeriod.components.seconds * 1_000_000_000 + gracePeriod.components.attoseconds / 1_000_000_000
            serverChannel.channel.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [weak self] in
                guard let self else { return }
                for c in self.state.withLock({ Array($0.connections.values) }) { c.close(promise: nil) }
            }
        }
    }

    /// Marks a connection as running a call; false when the server is shutting down (no new calls).
    private func beginCall(_ id: ObjectIdentifier) -> Bool {
        state.withLock { s in
            if s.shuttingDown { return false }
            s.busy.insert(id)
            return true
        }
    }

    /// Marks the call finished; true when the connection should now close (shutting down).
    private func endCall(_ id: ObjectIdentifier) -> Bool {
        state.withLock { s in
            s.busy.remove(id)
            return s.shuttingDown
        }
    }

    private func admit(_ channel: any Channel) -> Bool {
        let result: Bool? = state.withLock { s in
            if s.shuttingDown { return nil }
            if s.connections.count >= configuration.maxConnections { return false }
            s.connections[ObjectIdentifier(channel)] = channel
            return true
        }
        if result == false {
            logger.warning("connection limit reached; closing new connection", metadata: ["maxConnections": "\(configuration.maxConnections)"])
        }
        return result == true
    }

    private func release(_ channel: any Channel) {
        state.withLock {
            $0.connections.removeValue(forKey: ObjectIdentifier(channel))
            $0.busy.remove(ObjectIdentifier(channel))
        }
    }

    private func removeSocketFile() {
        guard let owned = ownedSocketFile, let now = fileIdentity(owned.path), now == (owned.dev, owned.ino) else { return }
        unlink(owned.path)
    }

    private func serve(_ connection: Connection) async {
        let channel = connection.channel.channel
        var connectionLogger = self.logger
        if let peer = connection.peer { connectionLogger[metadataKey: "peer"] = "pid=\(peer.pid) uid=\(peer.uid)" }
        let logger = connectionLogger
        logger.debug("connection opened")
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Ends when the channel closes (hang-up, stall timeout, shutdown) ...
                    group.addTask { try await channel.closeFuture.get() }
                    // ... or when the client stops sending; that loop closes the channel on exit.
                    group.addTask {
                        try await self.connectionLoop(inbound: inbound, outbound: outbound, channel: channel,
                                                      context: VarlinkCallContext(peer: connection.peer), logger: logger)
                    }
                    defer { group.cancelAll() }
                    _ = try await group.next()
                    // Whichever finished first: the other must stop too (a hang-up cancels the handler).
                    channel.close(promise: nil)
                }
            }
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
        logger.debug("connection closed")
    }

    private func connectionLoop(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        channel: any Channel, context: VarlinkCallContext, logger: Logger
    ) async throws {
        var decoder = VarlinkFrameDecoder(maxMessageSize: configuration.maxMessageSize)
        var stallTimer: Scheduled<Void>?
        defer {
            stallTimer?.cancel()
            channel.close(promise: nil)
        }
        let send: @Sendable (VarlinkReply) async throws -> Void = { reply in
            try await outbound.write(ByteBuffer(bytes: reply.framedBytes()))
        }
        let stallNanoseconds = Int64(configuration.stallTimeout.components.seconds) * 1_000_000_000
            + configuration.stallTimeout.components.attoseconds / 1_000_000_000
        for try await chunk in inbound {
            decoder.append(chunk.readableBytesView)
            while true {
                let message: [UInt8]?
                do {
                    message = try decoder.nextMessage()
                } catch {
                    logger.notice("closing connection: \(error)")
                    try? await send(VarlinkReply(VarlinkError.invalidParameter("")))
                    return
                }
                guard let message else { break }
                stallTimer?.cancel()
                stallTimer = nil
                let id = ObjectIdentifier(channel)
                guard beginCall(id) else { return }
                await service.handle(message: message, context: context, send: send)
                if endCall(id) { return }  // shutting down: the call has answered, now close
                try Task.checkCancellation()
            }
            if decoder.hasPartialMessage, stallTimer == nil {
                stallTimer = channel.eventLoop.scheduleTask(in: .nanoseconds(stallNanoseconds)) {
                    logger.notice("closing connection: incomplete message stalled")
                    channel.close(promise: nil)
                }
            }
        }
    }
}

struct ConnectionRejected: Error, CustomStringConvertible {
    var description: String { "connection rejected by the acceptPeer policy" }
}
