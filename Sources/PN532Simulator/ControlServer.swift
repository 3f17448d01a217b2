import CShims
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Line-oriented control socket: each line is a command for `PN532Simulator.execute(_:)`,
/// each answer one line. Connections are served one after the other on a dedicated thread.
/// Unchecked Sendable: `listenFD` and `thread` are set in `start()`, before the thread that reads them.
final class ControlServer: @unchecked Sendable {
    private let path: String
    private unowned let simulator: PN532Simulator
    private var listenFD: Int32 = -1
    private var thread: Thread?
    private let stopping = Mutex(false)

    init(path: String, simulator: PN532Simulator) {
        self.path = path
        self.simulator = simulator
    }

    func start() throws(SimulatorError) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket: \(String(cString: strerror(errno)))") }
        unlink(path)
        guard withUnixAddress(path, { bind(fd, $0, $1) }) == 0, listen(fd, 8) == 0 else {
            let e = String(cString: strerror(errno)); close(fd)
            throw .system("cannot listen on control socket \(path): \(e)")
        }
        listenFD = fd
        let t = Thread { [self] in self.serve() }
        t.name = "pn532-sim-ctl"
        thread = t
        t.start()
    }

    func stop() {
        stopping.withLock { $0 = true }
        if listenFD >= 0 { shutdown(listenFD, Int32(SHUT_RDWR)) }
        // Wake accept() by connecting once.
        _ = try? ControlClient.send("status", socketPath: path, timeout: 0.2)
        unlink(path)
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    private func serve() {
        _ = rb_set_thread_name("pn532-sim-ctl")
        while !isStopping {
            let c = accept(listenFD, nil, nil)
            if c < 0 { if errno == EINTR { continue }; break }
            if isStopping { close(c); break }
            handle(c)
            close(c)
        }
        close(listenFD)
    }

    private func handle(_ fd: Int32) {
        var pending: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { return }
            pending += buf[0 ..< n]
            while let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                let answer = Array((simulator.execute(line) + "\n").utf8)
                _ = answer.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            }
        }
    }
}

func withUnixAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8.prefix(107))
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
        for (i, b) in bytes.enumerated() { raw[i] = b }
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// Client side of the control protocol (used by `pn532-sim ctl` and tests).
public enum ControlClient {
    /// Sends one command line and returns the answer line.
    public static func send(_ command: String, socketPath: String, timeout: Double = 5) throws(SimulatorError) -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .control("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        guard withUnixAddress(socketPath, { connect(fd, $0, $1) }) == 0 else {
            throw .control("cannot connect to \(socketPath): \(String(cString: strerror(errno))) — is pn532-sim running?")
        }
        let line = Array((command + "\n").utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var answer: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while !answer.contains(0x0A) {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { break }
            answer += buf[0 ..< n]
        }
        guard let nl = answer.firstIndex(of: 0x0A) else { throw .control("no answer from \(socketPath)") }
        return String(decoding: answer[..<nl], as: UTF8.self)
    }
}
