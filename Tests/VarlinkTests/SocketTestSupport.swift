#if canImport(Glibc)
import Glibc
#endif
import Logging
import Testing
import TestSupport
import Varlink
import VarlinkNIO

struct SocketTestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A fresh directory under /tmp, removed (with its content) by `remove()`.
struct TempDir {
    let path: String

    init() throws {
        var template = Array("/tmp/varlink-test-XXXXXX".utf8CString)
        guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SocketTestError("mkdtemp failed")
        }
        path = String(cString: p)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func remove() {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
                if name != "." && name != ".." { unlink(file(name)) }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}

func makeUnixAddress(_ path: String) -> sockaddr_un {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return addr
}

/// Creates a Unix stream socket bound to `path`, listening if `listen` is set. Returns the fd.
func makeBoundSocket(_ path: String, listen shouldListen: Bool) throws -> Int32 {
    // Close-on-exec: tests in the same process spawn children (dbus-daemon, nfc-list, python);
    // one inheriting this socket would keep it listening after the server closed it.
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw SocketTestError("socket: \(errno)") }
    var addr = makeUnixAddress(path)
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard r == 0 else { close(fd); throw SocketTestError("bind: \(errno)") }
    if shouldListen, listen(fd, 16) != 0 { close(fd); throw SocketTestError("listen: \(errno)") }
    return fd
}

/// A deliberately primitive, non-blocking client that sends exactly the bytes it is given.
/// Waits with `eventually`, never blocking a cooperative thread.
final class RawClient {
    let fd: Int32
    private var decoder = VarlinkFrameDecoder(maxMessageSize: 1 << 24)
    private(set) var sawEOF = false

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketTestError("socket: \(errno)") }
        var addr = makeUnixAddress(path)
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            let e = errno
            close(fd)
            throw SocketTestError("connect: \(e)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(fd) }

    /// Sends all bytes (waiting while the socket is full); returns false if the peer closed.
    @discardableResult
    func send(_ bytes: [UInt8]) async throws -> Bool {
        var offset = 0
        var peerClosed = false
        try await eventually("the server takes \(bytes.count) bytes") {
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 { offset += n; continue }
                if errno == EAGAIN || errno == EINTR { return false }
                peerClosed = true
                return true
            }
            return true
        }
        return !peerClosed
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    func send(_ call: VarlinkCall) async throws { try await send(call.framedBytes()) }

    /// Reads available bytes into the decoder; false on EOF/error.
    private func pump() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { decoder.append(buffer[0..<n]); continue }
            if n == 0 { sawEOF = true; return false }
            if errno == EAGAIN || errno == EINTR { return true }
            sawEOF = true
            return false
        }
    }

    /// The next message, or nil at EOF. Throws after `timeout`.
    func readMessage(timeout: Duration = .seconds(20)) async throws -> [UInt8]? {
        var message: [UInt8]?
        try await eventually("a message (or the end of the stream) from the server", timeout: timeout) {
            if let m = try decoder.nextMessage() { message = m; return true }
            let open = !sawEOF && pump()
            message = try decoder.nextMessage()
            return message != nil || !open
        }
        return message
    }

    func readReply(timeout: Duration = .seconds(20)) async throws -> VarlinkReply {
        guard let m = try await readMessage(timeout: timeout) else { throw SocketTestError("connection closed, expected a reply") }
        return try VarlinkReply(bytes: m)
    }

    /// Waits until the server closes the connection (discarding data); throws on timeout.
    func waitForClose(timeout: Duration = .seconds(20)) async throws {
        try await eventually("the server closes the connection", timeout: timeout) {
            let open = pump()
            while (try? decoder.nextMessage()) != nil {}
            return !open
        }
    }
}

/// Number of sockets in the kernel's table bound to `path` (the listener plus accepted
/// connections): a server-side fd leak keeps them alive. Unaffected by other tests.
func serverSocketCount(path: String) -> Int {
    let fd = open("/proc/net/unix", O_RDONLY)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    var data: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        data += chunk[0..<n]
    }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").filter { $0.hasSuffix(" " + path) }.count
}

func testLogger() -> Logger {
    var l = Logger(label: "varlink.test")
    l.logLevel = .critical
    return l
}

/// Binds a server at a fresh path, runs it while `body` executes, then shuts it down.
func withServer(
    probe: Probe = Probe(),
    configure: (inout VarlinkServerConfiguration) -> Void = { _ in },
    _ body: (String, VarlinkServer) async throws -> Void
) async throws {
    let dir = try TempDir()
    defer { dir.remove() }
    let path = dir.file("test.sock")
    var config = VarlinkServerConfiguration(listen: .path(path))
    configure(&config)
    let server = try await VarlinkServer.bind(service: makeService(probe), configuration: config, logger: testLogger())
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        do {
            try await body(path, server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        try await group.waitForAll()
    }
}
