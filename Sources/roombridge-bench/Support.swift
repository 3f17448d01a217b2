import Foundation

/// Distribution of a sample.
struct Stats {
    let count: Int
    let p50: Double
    let p95: Double
    let p99: Double
    let mean: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        count = sorted.count
        func pct(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }
        p50 = pct(0.5)
        p95 = pct(0.95)
        p99 = pct(0.99)
        mean = sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count)
    }
}

struct Row {
    let name: String
    let stats: Stats?
    let value: Double?
    let peer: (String, Stats)?

    init(_ name: String, _ stats: Stats, peer: (String, Stats)?) {
        self.name = name
        self.stats = stats
        self.value = nil
        self.peer = peer
    }

    private init(name: String, value: Double) {
        self.name = name
        self.stats = nil
        self.value = value
        self.peer = nil
    }

    static func single(_ name: String, _ value: Double) -> Row { Row(name: name, value: value) }
}

func fmt(_ v: Double) -> String {
    if v.isNaN { return "–" }
    if v >= 1000 { return String(format: "%.0f", v) }
    if v >= 10 { return String(format: "%.1f", v) }
    return String(format: "%.2f", v)
}

/// The markdown report.
struct Report {
    let command: String
    let machine: String
    /// A section's body: figures in the common table, or text written elsewhere in the run
    /// (the package size, by scripts/package-size.sh).
    enum Body {
        case rows([Row])
        case text(String)
    }

    private(set) var sections: [(String, Body)] = []

    init(command: String, machine: String) {
        self.command = command
        self.machine = machine
    }

    mutating func add(section: String, rows: [Row]) { sections.append((section, .rows(rows))) }
    mutating func add(section: String, text: String) { sections.append((section, .text(text))) }

    var markdown: String {
        var out = """
            # Benchmarks

            Written by `\(command)` (`make bench`; release build); do not edit by hand — run it again.
            Timings are measured here, never asserted in tests. Each figure stands next to a peer
            measured in the same run where one exists; the ratio carries the meaning more than the
            absolute number on a shared 2-core machine.

            Machine: \(machine)

            """
        for (title, body) in sections {
            guard case .rows(let rows) = body else {
                if case .text(let text) = body { out += "\n## \(title)\n\n\(text)\n" }
                continue
            }
            out += "\n## \(title)\n\n" + Self.table(rows)
        }
        return out
    }

    /// Rows as the common table (header, then a line each).
    static func table(_ rows: [Row]) -> String {
        var out = "| figure | n | median | p99 | peer (same run) | peer median | peer p99 | ratio |\n|---|---|---|---|---|---|---|---|\n"
        for r in rows {
            if let s = r.stats {
                var line = "| \(r.name) | \(s.count) | \(fmt(s.p50)) | \(fmt(s.p99)) |"
                if let (peerName, p) = r.peer {
                    line += " \(peerName) | \(fmt(p.p50)) | \(fmt(p.p99)) | \(p.count == 0 ? "" : fmt(s.p50 / p.p50) + "×") |"
                } else {
                    line += " | | | |"
                }
                out += line + "\n"
            } else if let v = r.value {
                out += v.isNaN ? "| \(r.name) | | | | | | | |\n" : "| \(r.name) | 1 | \(fmt(v)) | | | | | |\n"
            }
        }
        return out
    }

    func write(to path: String) throws {
        try markdown.write(toFile: path, atomically: true, encoding: .utf8)
    }
}

enum Machine {
    static func describe() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        var uts = utsname()
        uname(&uts)
        let kernel = withUnsafeBytes(of: &uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let mem = ProcessInfo.processInfo.physicalMemory / (1 << 30)
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores (\(cpu)), \(mem) GiB, Linux \(kernel)"
    }
}

struct TempDir {
    let path: URL
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("rb-bench-\(getpid())")
        try? FileManager.default.removeItem(at: path)
        try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func unixAddress(_ path: String) -> (sockaddr_un, socklen_t) {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8).prefix(107)) }
    return (addr, socklen_t(MemoryLayout<sockaddr_un>.size))
}

/// A blocking Unix-socket client speaking NUL-terminated messages (Varlink), or newline-terminated ones.
final class BlockingClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// The byte that ends each message.
    let terminator: UInt8

    init(path: String, terminator: UInt8 = 0) throws {
        self.terminator = terminator
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var (addr, len) = unixAddress(path)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, len) } }
        guard rc == 0 else { throw BenchError("connect \(path): \(String(cString: strerror(errno)))") }
        // A figure that never comes fails the run with a message instead of hanging it.
        var limit = timeval(tv_sec: Self.receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    static let receiveTimeout = 120

    func send(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            guard n > 0 else { throw BenchError("write failed") }
            off += n
        }
    }

    /// Reads one message (without its terminator).
    func receive() throws -> [UInt8] {
        while true {
            if let i = buffer.firstIndex(of: terminator) {
                let msg = Array(buffer[..<i])
                buffer.removeSubrange(...i)
                return msg
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                throw BenchError("nothing arrived within \(Self.receiveTimeout) s")
            }
            guard n > 0 else { throw BenchError("connection closed") }
            buffer += chunk[..<n]
        }
    }

    func roundTrip(_ request: [UInt8]) throws -> [UInt8] {
        try send(request)
        return try receive()
    }

    /// Times `count` sequential round trips (after a short warm-up); returns seconds each.
    func time(_ request: [UInt8], count: Int) throws -> [Double] {
        for _ in 0..<min(1000, count) { _ = try roundTrip(request) }
        var out: [Double] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let t = monotonicSeconds()
            _ = try roundTrip(request)
            out.append(monotonicSeconds() - t)
        }
        return out
    }

    func close() { Glibc.close(fd) }
}

/// The peer for socket figures: a thread that answers each NUL-terminated message with fixed bytes.
final class EchoServer: Sendable {
    let path: String
    private let listener: Int32

    init(path: String, reply: [UInt8]) throws {
        self.path = path
        unlink(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var (addr, len) = unixAddress(path)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) } }
        guard rc == 0, listen(listener, 8) == 0 else { throw BenchError("echo bind failed") }
        let fd = listener
        let answer = reply + [0]
        let t = Thread {
            let conn = accept(fd, nil, nil)
            guard conn >= 0 else { return }
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(conn, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                // One request per read in a ping-pong; answer each NUL seen.
                for b in chunk[..<n] where b == 0 {
                    var off = 0
                    while off < answer.count {
                        let w = answer.withUnsafeBytes { write(conn, $0.baseAddress! + off, $0.count - off) }
                        if w <= 0 { break }
                        off += w
                    }
                }
            }
            Glibc.close(conn)
        }
        t.start()
    }

    func stop() {
        Glibc.close(listener)
        unlink(path)
    }
}

/// roombridged started for a measurement, with its notify socket.
final class DaemonProcess {
    let process: Process
    let socketPath: String
    let readySeconds: Double

    private init(process: Process, socketPath: String, readySeconds: Double) {
        self.process = process
        self.socketPath = socketPath
        self.readySeconds = readySeconds
    }

    /// `config`: the configuration file's text (none by default).
    static func start(bin: String, dir: URL, config: String = "", extraArguments: [String] = [],
                      environment: [String: String] = [:]) throws -> DaemonProcess {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let notifyPath = dir.appendingPathComponent("notify.sock").path
        let notify = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(notify) }
        var (addr, len) = unixAddress(notifyPath)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notify, $0, len) } }
        let socketPath = dir.appendingPathComponent("roombridge.sock").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: bin).appendingPathComponent("roombridged")
        p.arguments = ["--config", dir.appendingPathComponent("roombridged.toml").path,
                       "--socket-path", socketPath, "--socket-group", "",
                       "--database-path", dir.appendingPathComponent("db.sqlite").path,
                       "--no-nfc-enabled", "--no-curtain-enabled", "--log-level", "warning"] + extraArguments
        try config.write(to: dir.appendingPathComponent("roombridged.toml"), atomically: true, encoding: .utf8)
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notifyPath
        env["LIBNFC_LOG_LEVEL"] = "0"
        env.merge(environment) { _, new in new }
        p.environment = env
        let t0 = monotonicSeconds()
        try p.run()
        var pfd = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            guard poll(&pfd, 1, 20000) > 0 else { p.terminate(); throw BenchError("roombridged sent no READY=1 within 20 s") }
            let n = buf.withUnsafeMutableBytes { recv(notify, $0.baseAddress, $0.count, 0) }
            if n > 0, String(decoding: buf[..<n], as: UTF8.self).contains("READY=1") { break }
        }
        return DaemonProcess(process: p, socketPath: socketPath, readySeconds: monotonicSeconds() - t0)
    }

    var pid: Int32 { process.processIdentifier }

    /// utime+stime in clock ticks.
    func cpuTicks() -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": state(0) ppid(1) … utime(11) stime(12)
        guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
        return u + s
    }

    func cpuPercent(over seconds: Double) -> Double {
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        let a = cpuTicks()
        Thread.sleep(forTimeInterval: seconds)
        return (cpuTicks() - a) / hz / seconds * 100
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// A progress line on stderr (the report goes to stdout and the output file).
func progress(_ line: String) {
    FileHandle.standardError.write(Data("roombridge-bench: \(line)\n".utf8))
}
