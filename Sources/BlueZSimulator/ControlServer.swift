#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// The simulator's control socket (Unix stream socket, line protocol of ``ControlProtocol``).
/// Accepting and reading block, so they run on a dedicated thread, never on the Swift pool.
public final class ControlServer: Sendable {
    private let fd: Int32
    public let path: String
    private let stopped = Atomic<Bool>(false)

    /// Binds `path` (replacing a stale socket file) and starts serving `simulator`.
    public init(path: String, simulator: BlueZSimulator) throws {
        let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw ControlSocketError("socket(AF_UNIX) failed: \(String(cString: strerror(errno)))") }
        unlink(path)
        var addr = try Self.address(path)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0, listen(s, 8) == 0 else {
            let e = String(cString: strerror(errno))
            close(s)
            throw ControlSocketError("cannot listen on \(path): \(e)")
        }
        fd = s
        self.path = path
        let thread = Thread { [self] in self.acceptLoop(simulator) }
        thread.name = "bluez-sim-control"
        thread.start()
    }

    /// Stops accepting and removes the socket file.
    public func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }

    private func acceptLoop(_ simulator: BlueZSimulator) {
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            serve(client, simulator)
            close(client)
        }
    }

    private func serve(_ client: Int32, _ simulator: BlueZSimulator) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { return }
            buffer += chunk[0..<n]
            while let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                let answer = Self.run(line, simulator) + "\n"
                guard Self.writeAll(client, Array(answer.utf8)) else { return }
            }
        }
    }

    /// Runs one command line; blocks this (dedicated) thread until the simulator answered.
    private static func run(_ line: String, _ simulator: BlueZSimulator) -> String {
        // `device ADDRESS COMMAND…` sends COMMAND to that curtain (CompanionCurtains.swift).
        var line = Substring(line)
        var device: String? = nil
        let words = line.split(separator: " ", maxSplits: 2)
        if words.first == "device" {
            guard words.count == 3 else { return "error usage: device ADDRESS COMMAND…" }
            device = String(words[1])
            line = words[2]
        }
        let control: BlueZSimulator.Control
        do { control = try ControlProtocol.parse(String(line)) } catch { return "error \(error)" }
        let result = Mutex<String>("")
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let status = try await simulator.handle(control, device: device)
                result.withLock { $0 = "ok \(status)" }
            } catch {
                result.withLock { $0 = "error \(error)" }
            }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let w = write(fd, raw.baseAddress! + off, raw.count - off)
                if w < 0, errno == EINTR { continue }
                if w <= 0 { return false }
                off += w
            }
            return true
        }
    }

    static func address(_ path: String) throws -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            throw ControlSocketError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return addr
    }

    /// Sends one command line to a running simulator and returns its answer line (used by `bluez-sim ctl`).
    /// Blocking: call it from a command-line tool or a dedicated thread.
    public static func send(_ line: String, to path: String) throws -> String {
        let s = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw ControlSocketError("socket(AF_UNIX) failed") }
        defer { close(s) }
        var addr = try address(path)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            throw ControlSocketError("cannot connect to \(path): \(String(cString: strerror(errno))) — is bluez-sim running?")
        }
        guard writeAll(s, Array((line + "\n").utf8)) else { throw ControlSocketError("write failed") }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while !answer.contains(0x0A) {
            let n = read(s, &chunk, chunk.count)
            if n <= 0 { break }
            answer += chunk[0..<n]
        }
        return String(decoding: answer.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}

/// A control-socket failure.
public struct ControlSocketError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ d: String) { description = d }
}
