#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import Varlink

/// The current `errno` as a message, e.g. "Permission denied (errno 13)".
func errnoDescription(_ code: Int32) -> String {
    "\(String(cString: strerror(code))) (errno \(code))"
}

/// Builds a `sockaddr_un` for `path` and calls `body` with it; `nil` if the path is too long.
func withUnixAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R? {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: addr.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity else { return nil }
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// Result of probing an existing socket file.
enum SocketProbe {
    case missing
    case notASocket
    case live
    case stale
    case failed(Int32)
}

/// Looks at `path`: absent, not a socket, a socket a server answers on (connect succeeds or
/// its backlog is full), or a stale socket (ECONNREFUSED: nobody listens).
func probeSocketPath(_ path: String) -> SocketProbe {
    var st = stat()
    if lstat(path, &st) != 0 {
        return errno == ENOENT ? .missing : .failed(errno)
    }
    guard (st.st_mode & S_IFMT) == S_IFSOCK else { return .notASocket }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { return .failed(errno) }
    defer { close(fd) }
    let result = withUnixAddress(path) { addr, len in connect(fd, addr, len) == 0 ? 0 : errno }
    switch result {
    case nil: return .failed(ENAMETOOLONG)
    case 0?: return .live
    case EAGAIN?, EINPROGRESS?: return .live  // backlog full: someone is listening
    case ECONNREFUSED?: return .stale
    case let code?: return .failed(code)
    }
}

/// (device, inode) of a path, to recognise our own socket file at shutdown.
func fileIdentity(_ path: String) -> (UInt64, UInt64)? {
    var st = stat()
    guard lstat(path, &st) == 0 else { return nil }
    return (UInt64(st.st_dev), UInt64(st.st_ino))
}

/// Layout of Linux `struct ucred` (SO_PEERCRED).
struct UCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

let soPeerCred: Int32 = 17  // SO_PEERCRED (asm-generic/socket.h); Glibc hides it without _GNU_SOURCE

/// Reads the peer's credentials (SO_PEERCRED) and supplementary groups (`/proc/<pid>/status`).
/// Must be called on the channel's event loop; completes immediately there.
func peerCredentials(of channel: Channel) -> EventLoopFuture<PeerCredentials?> {
    guard let provider = channel as? SocketOptionProvider else {
        return channel.eventLoop.makeSucceededFuture(nil)
    }
    let future: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
        level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(soPeerCred))
    return future.map { cred in
        PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: supplementaryGroups(pid: cred.pid))
    }.recover { _ in nil }
}

/// Supplementary groups from the `Groups:` line of `/proc/<pid>/status` (empty if unreadable).
/// SO_PEERGROUPS would be race-free but NIO does not expose the fd and its fixed-size
/// `unsafeGetSocketOption` cannot return the variable-length list.
func supplementaryGroups(pid: Int32) -> [UInt32] {
    guard pid > 0 else { return [] }
    let fd = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var data: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while data.count < 1 << 16 {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        data.append(contentsOf: chunk[0..<n])
    }
    let text = String(decoding: data, as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix("Groups:") {
        return line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
    }
    return []
}
