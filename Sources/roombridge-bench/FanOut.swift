import Foundation

/// Reads many sockets at once through one `poll` set and records when each first holds a whole
/// message containing a marker. One reusable buffer and a byte search per message: the reader
/// costs far less per socket than the daemon's write does, so the arrival times measure the
/// sender, and the same reader times the plain write loop that is the fan-out's peer.
final class FanOutReader {
    private let fds: [Int32]
    private var polled: [pollfd]
    private var pending: [[UInt8]]
    private var chunk = [UInt8](repeating: 0, count: 65536)
    /// The last message that held the marker (the fan-out's peer writes the same bytes).
    private(set) var lastMatch: [UInt8] = []

    /// `fds` must hold no partial message; they are switched to non-blocking.
    init(fds: [Int32]) throws {
        self.fds = fds
        pending = Array(repeating: [], count: fds.count)
        polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    }

    /// Milliseconds from `t0` (monotonic seconds) until each socket held a message containing
    /// `marker`, in arrival order; messages without it are skipped.
    func arrivals(of marker: String, since t0: Double, timeout: Double = 30) throws -> [Double] {
        let needle = Array(marker.utf8)
        var arrived = [Bool](repeating: false, count: fds.count)
        var times: [Double] = []
        let deadline = monotonicSeconds() + timeout
        while times.count < fds.count {
            guard monotonicSeconds() < deadline else {
                throw BenchError("\(fds.count - times.count) of \(fds.count) sockets never received \(marker)")
            }
            let n = poll(&polled, nfds_t(polled.count), 1000)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw BenchError("poll: \(String(cString: strerror(errno)))") }
            for i in polled.indices where polled[i].revents != 0 {
                polled[i].revents = 0
                while true {
                    let got = chunk.withUnsafeMutableBytes { read(fds[i], $0.baseAddress, $0.count) }
                    if got <= 0 { break }
                    pending[i] += chunk[..<got]
                }
                while let end = pending[i].firstIndex(of: 0) {
                    if !arrived[i], Self.contains(pending[i][..<end], needle) {
                        arrived[i] = true
                        times.append((monotonicSeconds() - t0) * 1000)
                        if times.count == 1 { lastMatch = Array(pending[i][..<end]) }
                    }
                    pending[i].removeSubrange(...end)
                }
            }
        }
        return times
    }

    private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        var i = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while i <= last {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}

/// The fan-out's peer: the same message written to `count` connected Unix sockets by a plain
/// loop of `write` on one thread, read by the same ``FanOutReader``.
func plainWriteLoopArrivals(message: [UInt8], count: Int, rounds: Int) throws -> [Double] {
    var writers: [Int32] = []
    var readers: [Int32] = []
    defer { for fd in writers + readers { close(fd) } }
    for _ in 0..<count {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw BenchError("socketpair: \(String(cString: strerror(errno)))")
        }
        writers.append(pair[0])
        readers.append(pair[1])
    }
    let reader = try FanOutReader(fds: readers)
    let framed = message + [0]
    var out: [Double] = []
    for _ in 0..<rounds {
        let t0 = monotonicSeconds()
        let targets = writers
        let thread = Thread {
            for fd in targets { _ = framed.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        }
        thread.start()
        out += try reader.arrivals(of: "", since: t0)
    }
    return out
}
