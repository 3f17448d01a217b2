#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Reads notifications from an AcquireNotify socket (SOCK_SEQPACKET, one notification per packet) on a
/// dedicated thread, so that waiting never blocks the Swift cooperative pool or an actor.
///
/// It works whatever the descriptor's flags are. bluetoothd makes the pair with
/// `socketpair(AF_LOCAL, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds)` (bluez `src/gatt-client.c`
/// `create_sock()`), and O_NONBLOCK belongs to the open file description, so it arrives with the fd over
/// D-Bus: a plain blocking-style `recv` gets EAGAIN at once. The thread therefore waits in `poll(2)` and reads
/// with `MSG_DONTWAIT`, treating EAGAIN/EINTR as "wait again". We deliberately do not clear O_NONBLOCK with
/// `fcntl`: poll works for blocking and non-blocking descriptors alike, leaves the description as BlueZ made
/// it, and gives the thread one place to sleep that `stop()` (shutdown) wakes.
final class NotifySocketReader: Sendable {
    /// What the reader delivers: packets in arrival order, then exactly one `ended`.
    enum Item: Sendable, Equatable {
        case packet([UInt8])
        /// The stream is over: the peer closed or hung up (bluetoothd ended the session), a read failed,
        /// or ``stop()`` was called (`stopped` is true then).
        case ended(reason: String, stopped: Bool)
    }

    let items: AsyncStream<Item>
    private let fd: Int32
    private let state = Mutex((closed: false, stopRequested: false))

    /// Takes ownership of `fd`.
    init(fd: Int32) {
        let (stream, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .unbounded)
        items = stream
        self.fd = fd
        let thread = Thread { [self] in self.readLoop(fd, continuation) }
        thread.name = "curtain-notify"
        thread.start()
    }

    private func readLoop(_ fd: Int32, _ continuation: AsyncStream<Item>.Continuation) {
        var buffer = [UInt8](repeating: 0, count: 517) // max ATT MTU
        var reason = ""
        loop: while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                reason = "poll failed: " + String(cString: strerror(errno))
                break
            }
            if p.revents & Int16(POLLNVAL) != 0 {
                reason = "the notify socket is no longer open"
                break
            }
            // POLLIN, POLLHUP or POLLERR: read; queued packets come before the end of the stream.
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                continuation.yield(.packet(Array(buffer[0..<n])))
            } else if n == 0 {
                // An empty notification is an empty SEQPACKET packet, also read as 0: only a hang-up ends the stream
                // (bleak's `_register_notify_fd_reader` tells them apart the same way).
                var hup = pollfd(fd: fd, events: 0, revents: 0)
                if poll(&hup, 1, 0) > 0, hup.revents & Int16(POLLHUP) != 0 {
                    reason = "bluetoothd closed the notify socket"
                    break
                }
                continuation.yield(.packet([]))
            } else {
                switch errno {
                case EINTR, EAGAIN, EWOULDBLOCK: continue loop
                default:
                    reason = "reading the notify socket failed: " + String(cString: strerror(errno))
                    break loop
                }
            }
        }
        let stopped = state.withLock { s in
            s.closed = true
            close(fd)
            return s.stopRequested
        }
        continuation.yield(.ended(reason: stopped ? "stopped" : reason, stopped: stopped))
        continuation.finish()
    }

    /// Wakes the reader (it then closes the socket). Idempotent.
    func stop() {
        state.withLock { s in
            s.stopRequested = true
            if !s.closed { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
