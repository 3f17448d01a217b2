#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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

/// The errno of a failed system call.
struct Errno: Error { let code: Int32 }

/// Connects a blocking Unix stream socket to `path`, waiting up to `timeout` (`SO_SNDTIMEO`)
/// for room in a full listen backlog; the connected descriptor, or the `errno` it failed with.
/// Blocks the calling thread: call it on a thread of its own.
func blockingUnixConnect(_ path: String, timeout: Duration) -> Result<Int32, Errno> {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return .failure(Errno(code: errno)) }
    let (seconds, attoseconds) = timeout.components
    var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    var rc: Int32
    repeat {
        rc = withUnixAddress(path) { connect(fd, $0, $1) } ?? -2
    } while rc == -1 && errno == EINTR
    guard rc == 0 else {
        let code = rc == -2 ? ENAMETOOLONG : errno
        close(fd)
        return .failure(Errno(code: code))
    }
    return .success(fd)
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

/// Binds `fd` to the Unix socket path `path`; returns 0 or an errno.
func bindUnixSocket(_ fd: Int32, path: String) -> Int32 {
    withUnixAddress(path) { addr, len in bind(fd, addr, len) == 0 ? 0 : errno } ?? ENAMETOOLONG
}
