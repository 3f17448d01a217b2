#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CShims
import Logging
import Synchronization
import Varlink

/// Accepts connections on a listening Unix socket on a dedicated thread, and takes each peer's
/// credentials from the kernel at accept time: `SO_PEERCRED` (pid, uid, gid) and
/// `SO_PEERGROUPS` (supplementary groups), read from the accepted socket itself.
///
/// Both answers describe the process that called `connect(2)`, as the kernel recorded them then
/// (the socket's peer credentials, `sk_peer_cred`), so they stay right even if that process
/// exits and its pid is reused by a process in the authorised group. Nothing is read from `/proc`, and `accept(2)` never runs on an event loop.
///
/// Each accepted socket is offered to `admit`; refused ones are closed on this thread at once,
/// so a flood of connections never reaches NIO.
final class UnixAcceptor: Sendable {
    struct Accepted: Sendable {
        let fileDescriptor: Int32
        let peer: PeerCredentials?
        /// What `admit` returned for it.
        let token: UInt64
    }

    /// Admitted connections; finishes once the acceptor has stopped and closed the listener.
    let connections: AsyncStream<Accepted>
    private let continuation: AsyncStream<Accepted>.Continuation
    private let listenFD: Int32
    private let wakeFD: Int32
    private let started = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let logger: Logger

    /// Takes ownership of `listeningSocket` (it is closed when the acceptor stops).
    init(listeningSocket: Int32, logger: Logger) throws(VarlinkServerError) {
        let wake = rb_wakeup_eventfd()
        guard wake >= 0 else {
            throw .bindFailed(path: "fd \(listeningSocket)", reason: "eventfd: \(errnoDescription(-wake))")
        }
        // Non-blocking, so that a connection that goes away between poll and accept never blocks.
        _ = fcntl(listeningSocket, F_SETFL, fcntl(listeningSocket, F_GETFL) | O_NONBLOCK)
        self.listenFD = listeningSocket
        self.wakeFD = wake
        self.logger = logger
        (connections, continuation) = AsyncStream.makeStream(of: Accepted.self)
    }

    deinit {
        if !started.load(ordering: .acquiring) {
            close(listenFD)
            close(wakeFD)
        }
    }

    /// Starts the accept thread. `admit` runs on it for every connection and returns a token
    /// for an admitted one, or nil to close it at once.
    func start(admit: @escaping @Sendable (PeerCredentials?) -> UInt64?) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let loop = AcceptLoop(listenFD: listenFD, wakeFD: wakeFD, continuation: continuation, admit: admit, logger: logger)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(loop).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let loop = Unmanaged<AcceptLoop>.fromOpaque(raw!).takeRetainedValue()
            _ = rb_set_thread_name("varlink-accept")
            loop.run()
            return nil
        }, box)
        if rc == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<AcceptLoop>.fromOpaque(box).release()
            logger.critical("cannot start the accept thread: \(errnoDescription(rc))")
            close(listenFD)
            close(wakeFD)
            continuation.finish()
        }
    }

    /// Stops accepting: the thread closes the listener and finishes ``connections``. Idempotent.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if started.load(ordering: .acquiring) {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
        } else {
            continuation.finish()
        }
    }
}

/// The accept thread's state (owned by that thread).
private final class AcceptLoop: Sendable {
    let listenFD: Int32
    let wakeFD: Int32
    let continuation: AsyncStream<UnixAcceptor.Accepted>.Continuation
    let admit: @Sendable (PeerCredentials?) -> UInt64?
    let logger: Logger
    let limiter = LogRateLimiter()

    init(listenFD: Int32, wakeFD: Int32, continuation: AsyncStream<UnixAcceptor.Accepted>.Continuation,
         admit: @escaping @Sendable (PeerCredentials?) -> UInt64?, logger: Logger) {
        self.listenFD = listenFD
        self.wakeFD = wakeFD
        self.continuation = continuation
        self.admit = admit
        self.logger = logger
    }

    func run() {
        defer {
            close(listenFD)
            close(wakeFD)
            continuation.finish()
        }
        var backoff: Int32 = -1  // poll timeout in ms; > 0 after a resource shortage
        while true {
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, backoff > 0 ? 1 : 2, backoff)
            if ready < 0, errno != EINTR {
                logger.critical("accepting connections failed: poll: \(errnoDescription(errno))")
                return
            }
            if fds[0].revents != 0 { return }  // stop()
            backoff = -1
            guard ready > 0 else { continue }
            let fd = rb_accept_nonblocking(listenFD)
            if fd < 0 {
                let code = -fd
                switch code {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: retry shortly rather than spin on a readable listener.
                    limiter.log(logger, .warning, key: "accept-resources",
                                "cannot accept a connection: \(errnoDescription(code)); retrying")
                    backoff = 100
                    continue
                default:
                    logger.critical("accepting connections failed: \(errnoDescription(code))")
                    return
                }
            }
            let peer = kernelPeerCredentials(fd)
            guard let token = admit(peer) else {
                close(fd)
                continue
            }
            if case .terminated = continuation.yield(UnixAcceptor.Accepted(fileDescriptor: fd, peer: peer, token: token)) {
                close(fd)
            }
        }
    }
}

/// The peer's credentials as the kernel recorded them at `connect(2)`; nil if unavailable.
/// The supplementary groups come from `SO_PEERGROUPS` (Linux 4.13 and later); without it the
/// peer is taken to have none (so only its uid and primary group can authorise it).
func kernelPeerCredentials(_ fd: Int32) -> PeerCredentials? {
    var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
    guard rb_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
    var groups = [gid_t](repeating: 0, count: 64)
    var count = Int32(groups.count)
    var rc = rb_peer_groups(fd, &groups, &count)
    if rc == -ERANGE, count > groups.count {
        groups = [gid_t](repeating: 0, count: Int(count))
        rc = rb_peer_groups(fd, &groups, &count)
    }
    let supplementary = rc == 0 ? Array(groups.prefix(Int(count))).map { UInt32($0) } : []
    return PeerCredentials(pid: pid, uid: uid, gid: gid, groups: supplementary)
}
