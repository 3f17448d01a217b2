#if canImport(Glibc)
import Glibc
#endif

/// The systemd notification protocol (`sd_notify(3)`): datagrams to `$NOTIFY_SOCKET`.
///
/// Written here rather than linking libsystemd: it is one `sendto(2)`. Without `NOTIFY_SOCKET`
/// (not started by systemd) every call is a no-op.
///
/// The send never blocks (`MSG_DONTWAIT`): callers run on the cooperative pool, and a notify socket whose
/// reader falls behind holds only `net.unix.max_dgram_qlen` datagrams (10 by default). A message that does not
/// fit is dropped (`send` returns false); the next STATUS or WATCHDOG replaces it.
public struct SystemdNotifier: Sendable {
    /// The socket path (`@` prefix for the abstract namespace), or nil when not under systemd.
    public let socketPath: String?

    public init(environment: [String: String]) {
        let path = environment["NOTIFY_SOCKET"]
        socketPath = (path?.isEmpty ?? true) ? nil : path
    }

    /// Sends newline-separated `KEY=VALUE` assignments. Returns false when nothing was sent.
    @discardableResult
    public func send(_ assignments: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard pathBytes.count < capacity || (pathBytes.first == 0 && pathBytes.count <= capacity) else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        // Abstract addresses have no terminating NUL; paths include one.
        let length = pathOffset + pathBytes.count + (pathBytes.first == 0 ? 0 : 1)
        let message = Array(assignments.utf8)
        let sent = withUnsafePointer(to: &addr) { ptr in
            ptr.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                message.withUnsafeBytes { buf in
                    sendto(fd, buf.baseAddress, buf.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), sa, socklen_t(length))
                }
            }
        }
        return sent == message.count
    }

    /// `READY=1` with a status line.
    public func ready(status: String) { send("READY=1\nSTATUS=\(oneLine(status))") }
    /// `STATUS=` — one line shown by `systemctl status`.
    public func status(_ text: String) { send("STATUS=\(oneLine(text))") }
    /// `WATCHDOG=1`.
    public func watchdog() { send("WATCHDOG=1") }
    /// `STOPPING=1`.
    public func stopping() { send("STOPPING=1") }
    /// `RELOADING=1` with `MONOTONIC_USEC=` (CLOCK_MONOTONIC now, as sd_notify(3) asks for reloads), before a
    /// configuration reload starts; send ``ready(status:)`` when it is done. systemd 253's `Type=notify-reload`
    /// relies on the pair; older systemd ignores it.
    public func reloading() {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        send("RELOADING=1\nMONOTONIC_USEC=\(UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000)")
    }

    private func oneLine(_ s: String) -> String {
        s.replacing("\n", with: " ")
    }

    /// Half of `$WATCHDOG_USEC` when the watchdog is enabled for this process, else nil.
    public static func watchdogInterval(environment: [String: String], pid: Int32 = getpid()) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], Int32(owner) != pid { return nil }
        return .microseconds(Int64(usec / 2))
    }
}
