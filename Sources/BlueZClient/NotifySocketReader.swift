#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Reads notifications from an AcquireNotify socket (SOCK_SEQPACKET, one notification per packet) on a
/// dedicated thread — `recv` blocks, so it must not run on the Swift cooperative pool.
/// (`NSLock` rather than `Mutex`: it is built on pthread mutexes, which ThreadSanitizer understands.)
final class NotifySocketReader: @unchecked Sendable {
    /// Packets in arrival order; finishes when the socket closes (BlueZ closes it on disconnect).
    let packets: AsyncStream<[UInt8]>
    private let lock = NSLock()
    private let fd: Int32
    private var closed = false // guarded by lock

    /// Takes ownership of `fd`.
    init(fd: Int32) {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        packets = stream
        self.fd = fd
        let thread = Thread { [self] in self.readLoop(fd, continuation) }
        thread.name = "curtain-notify"
        thread.start()
    }

    private func readLoop(_ fd: Int32, _ continuation: AsyncStream<[UInt8]>.Continuation) {
        var buffer = [UInt8](repeating: 0, count: 517) // max ATT MTU
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                continuation.yield(Array(buffer[0..<n]))
            } else if n < 0, errno == EINTR {
                continue
            } else {
                break
            }
        }
        continuation.finish()
        lock.withLock {
            closed = true
            close(fd)
        }
    }

    /// Wakes the reader (it then closes the socket). Idempotent.
    func stop() {
        lock.withLock {
            if !closed { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
