import CShims
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A PN532 breakout board in HSU (UART) mode on a pseudo-terminal, as libnfc's `pn532_uart`
/// driver sees it. The host connects to `linkPath` (a symlink to the current `/dev/pts/N`),
/// e.g. `LIBNFC_DEVICE=pn532_uart:<linkPath>`.
///
/// All chip state lives on one dedicated I/O thread; the public methods hand work to it and
/// wait for the result, so they may be called from any thread (not from the I/O thread).
/// Unchecked Sendable: the chip state is confined to that thread (the compiler cannot see a thread);
/// what other threads touch is in `shared`.
public final class PN532Simulator: @unchecked Sendable {
    /// Configuration of a simulator instance.
    public struct Options: Sendable {
        /// Stable path of the serial device (a symlink replaced on replug).
        public var linkPath: String
        /// Unix socket for the control protocol (nil: none).
        public var controlSocketPath: String?
        /// Add 115200-baud byte times and RF exchange times to every response.
        public var realisticTiming: Bool
        /// Log sink for traffic (debug) and events; nil: silent.
        public var log: (@Sendable (String) -> Void)?

        public init(linkPath: String, controlSocketPath: String? = nil, realisticTiming: Bool = false,
                    log: (@Sendable (String) -> Void)? = nil) {
            self.linkPath = linkPath; self.controlSocketPath = controlSocketPath
            self.realisticTiming = realisticTiming; self.log = log
        }
    }

    public let options: Options
    private let chip = PN532Chip()
    private var parser = PN532FrameParser()
    private var masterFD: Int32 = -1
    private var slaveKeepAliveFD: Int32 = -1
    private var wakeRead: Int32 = -1
    private var wakeWrite: Int32 = -1
    private var pending: PendingCommand?
    private var lastResponse: [UInt8] = []
    /// UART bytes received from and sent to the host since the last `counters reset` (I/O thread).
    private var bytesReceived = 0
    private var bytesSent = 0
    private var removeAt: Double?
    /// Work for the I/O thread, queued by other threads.
    private struct Shared {
        var running = false
        var jobs: [@Sendable () -> Void] = []
    }
    private let shared = Mutex(Shared())
    private var running: Bool {
        get { shared.withLock { $0.running } }
        set { shared.withLock { $0.running = newValue } }
    }
    private var thread: Thread?
    private var control: ControlServer?
    private var currentPty = ""
    /// Signalled when the I/O thread has finished. A semaphore, not a lock: `stop()` is synchronous
    /// and blocks its caller (a test or pn532-sim's main thread) until the thread is gone.
    private let stopped = DispatchSemaphore(value: 0)

    public init(options: Options) {
        self.options = options
        chip.realisticTiming = options.realisticTiming
        let log = options.log
        chip.log = { log?("pn532-sim: \($0)") }
    }

    deinit {
        if masterFD >= 0 { close(masterFD) }
        if slaveKeepAliveFD >= 0 { close(slaveKeepAliveFD) }
        if wakeRead >= 0 { close(wakeRead); close(wakeWrite) }
    }

    /// The current pty slave path (`/dev/pts/N`), empty while unplugged.
    public var ptyPath: String { sync { self.currentPty } }

    /// Opens the pty, creates the symlink and the control socket, and starts the I/O thread.
    public func start() throws(SimulatorError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .system("pipe failed: \(String(cString: strerror(errno)))") }
        wakeRead = fds[0]; wakeWrite = fds[1]
        _ = fcntl(wakeRead, F_SETFL, O_NONBLOCK); _ = fcntl(wakeWrite, F_SETFL, O_NONBLOCK)
        _ = fcntl(wakeRead, F_SETFD, FD_CLOEXEC); _ = fcntl(wakeWrite, F_SETFD, FD_CLOEXEC)
        try openPty()
        running = true
        let t = Thread { [self] in self.ioLoop() }
        t.name = "pn532-sim-io"
        thread = t
        t.start()
        if let path = options.controlSocketPath {
            let server = ControlServer(path: path, simulator: self)
            try server.start()
            control = server
        }
    }

    /// Stops the I/O thread and the control socket, closes the pty and removes the symlink.
    public func stop() {
        control?.stop()
        control = nil
        guard running else { return }
        sync { self.running = false }
        stopped.wait()
        closePty()
    }

    // MARK: - Field and device control

    /// Places a card on the reader; it stays until `remove()` (replacing any previous card).
    public func place(_ card: SimulatedCard) {
        sync { self.removeAt = nil; self.chip.card = card; self.log("field: placed \(card.summary)") }
    }

    /// Places a card and removes it after `milliseconds`.
    public func tap(_ card: SimulatedCard, milliseconds: Int) {
        sync {
            self.chip.card = card
            self.removeAt = Self.now() + Double(milliseconds) / 1000
            self.log("field: tap \(card.summary) for \(milliseconds) ms")
        }
    }

    /// Removes the card from the field.
    public func remove() {
        sync { self.removeAt = nil; self.chip.card = nil; self.log("field: removed") }
    }

    /// The card currently in the field (with its current memory).
    public var card: SimulatedCard? { sync { self.chip.card } }

    /// Memory image of the Type 2 tag in the field (to verify writes), nil otherwise.
    public func dumpMemory() -> [UInt8]? {
        sync { if case .type2(let t) = self.chip.card { return t.memory } else { return nil } }
    }

    /// Simulates unplugging the reader: closes the pty and removes the symlink.
    public func unplug() {
        sync {
            self.closePty()
            self.pending = nil
            self.parser = PN532FrameParser()
            self.log("device: unplugged")
        }
    }

    /// Simulates plugging the reader back: a new pty behind the same symlink path.
    public func replug() throws(SimulatorError) {
        let result: SimulatorError? = sync {
            guard self.masterFD < 0 else { return nil }
            do throws(SimulatorError) { try self.openPty() } catch { return error }
            self.log("device: replugged at \(self.currentPty)")
            return nil
        }
        if let result { throw result }
    }

    /// Whether the device is plugged in.
    public var isPlugged: Bool { sync { self.masterFD >= 0 } }

    // MARK: - Control protocol

    /// Executes one control-protocol line and returns the one-line answer (`ok …` / `error …`).
    ///
    /// Commands: `place <spec>`, `tap <ms> <spec>`, `remove`, `list`, `dump`, `unplug`,
    /// `replug`, `path`, `status`. `<spec>` is a `TagSpec` (shorthand, JSON or `@file`).
    public func execute(_ line: String) -> String {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: " ", maxSplits: 1).map(String.init)
        guard let cmd = parts.first?.lowercased() else { return "error empty command" }
        let rest = parts.count > 1 ? parts[1] : ""
        do throws(SimulatorError) {
            switch cmd {
            case "place":
                let card = try TagSpec.parse(rest).makeCard()
                place(card)
                return "ok \(card.summary)"
            case "tap":
                let p = rest.split(separator: " ", maxSplits: 1).map(String.init)
                guard p.count == 2, let ms = Int(p[0]), ms >= 0 else { return "error usage: tap <ms> <spec>" }
                let card = try TagSpec.parse(p[1]).makeCard()
                tap(card, milliseconds: ms)
                return "ok \(card.summary)"
            case "remove":
                remove(); return "ok"
            case "list":
                return "ok " + (card.map { $0.summary } ?? "none")
            case "dump":
                guard let m = dumpMemory() else { return "error no Type 2 tag in the field" }
                return "ok \(hex(m))"
            case "unplug":
                unplug(); return "ok"
            case "replug":
                try replug(); return "ok \(ptyPath)"
            case "path":
                return "ok \(options.linkPath) \(ptyPath)"
            case "status":
                return "ok plugged=\(isPlugged) card=\(card.map { $0.summary } ?? "none")"
            case "counters":
                // `counters` reports UART bytes both ways; `counters reset` zeroes them. The
                // benchmark turns them into the wire-time minimum of a tap at 115200 baud.
                return sync {
                    let line = "ok rx=\(self.bytesReceived) tx=\(self.bytesSent)"
                    if rest == "reset" { self.bytesReceived = 0; self.bytesSent = 0 }
                    return line
                }
            default:
                return "error unknown command '\(cmd)' (place, tap, remove, list, dump, unplug, replug, path, status, counters [reset])"
            }
        } catch {
            return "error \(error.description)"
        }
    }

    // MARK: - I/O thread

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    private func log(_ s: String) { options.log?("pn532-sim: \(s)") }

    /// Runs `body` on the I/O thread and returns its result. The caller blocks on a semaphore until
    /// the I/O thread has run it: this API is synchronous by design (tests and the control thread call it).
    private func sync<T>(_ body: @escaping () -> T) -> T {
        if Thread.current === thread { return body() }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: T?
        nonisolated(unsafe) let body = body
        let queued = shared.withLock { s in
            guard s.running else { return false }
            s.jobs.append { result = body(); done.signal() }
            return true
        }
        guard queued else { return body() }
        var b: UInt8 = 1
        _ = write(wakeWrite, &b, 1)
        done.wait()
        return result!
    }

    private func openPty() throws(SimulatorError) {
        var buf = [CChar](repeating: 0, count: 128)
        let fd = rb_open_pty(&buf, buf.count)
        guard fd >= 0 else { throw .system("cannot open a pseudo-terminal: \(String(cString: strerror(-fd)))") }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let path = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // Keep a slave descriptor open so the master never sees a hang-up while no host is connected.
        let keep = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        let tmp = options.linkPath + ".tmp\(getpid())"
        unlink(tmp)
        guard symlink(path, tmp) == 0, rename(tmp, options.linkPath) == 0 else {
            let e = String(cString: strerror(errno))
            close(fd); if keep >= 0 { close(keep) }
            throw .system("cannot create symlink \(options.linkPath) -> \(path): \(e)")
        }
        masterFD = fd
        slaveKeepAliveFD = keep
        currentPty = path
        log("device: \(options.linkPath) -> \(path)")
    }

    private func closePty() {
        if masterFD >= 0 {
            unlink(options.linkPath)
            close(masterFD); masterFD = -1
        }
        if slaveKeepAliveFD >= 0 { close(slaveKeepAliveFD); slaveKeepAliveFD = -1 }
        currentPty = ""
    }

    private func ioLoop() {
        _ = rb_set_thread_name("pn532-sim-io")
        var buf = [UInt8](repeating: 0, count: 4096)
        while running {
            // Run queued control jobs.
            let work = shared.withLock { s in
                defer { s.jobs.removeAll() }
                return s.jobs
            }
            for j in work { j() }
            if !running { break }
            var drain = [UInt8](repeating: 0, count: 64)
            _ = read(wakeRead, &drain, drain.count)

            let now = Self.now()
            if let r = removeAt, now >= r { chip.card = nil; removeAt = nil; log("field: tap ended, card removed") }
            resolvePending(now: now)

            var deadlines: [Double] = []
            if let r = removeAt { deadlines.append(r) }
            if let d = pending?.deadline { deadlines.append(d) }
            let timeoutMs: Int32 = deadlines.min().map { Int32(max(0, min(1000, ($0 - now) * 1000 + 1))) } ?? 1000

            var pfds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            if masterFD >= 0 { pfds.append(pollfd(fd: masterFD, events: Int16(POLLIN), revents: 0)) }
            let n = poll(&pfds, nfds_t(pfds.count), timeoutMs)
            if n <= 0 { continue }
            if pfds.count > 1, pfds[1].revents & Int16(POLLIN) != 0 {
                let got = read(masterFD, &buf, buf.count)
                if got > 0 { receive(Array(buf[0 ..< got])) }
            }
        }
        // Jobs queued just before the stop still run (their callers are waiting).
        let late = shared.withLock { s in
            defer { s.jobs.removeAll() }
            return s.jobs
        }
        for j in late { j() }
        stopped.signal()
    }

    private func receive(_ bytes: [UInt8]) {
        bytesReceived += bytes.count
        log("<< \(hex(bytes))")
        for frame in parser.feed(bytes) {
            switch frame {
            case .ack:
                if pending != nil { log("host abort (ACK): command 0x\(hex([pending!.command[0]])) cancelled") }
                pending = nil
            case .nack:
                send(lastResponse)
            case .command(let cmd):
                if let p = pending { log("new command while 0x\(hex([p.command[0]])) pending: cancelled") }
                pending = nil
                send(PN532Frames.ack)
                switch chip.handle(cmd, now: Self.now()) {
                case .response(let r, let delay):
                    // On a real 115200-baud link the command frame, the ACK and the response
                    // frame each take their byte times; the pty delivers instantly, so charge them.
                    let total = delay + uartTime(cmd.count + 7) + uartTime(PN532Frames.ack.count) + uartTime(r.count + 7)
                    if total <= 0 { sendResponse(r) } else {
                        pending = PendingCommand(command: cmd, deadline: Self.now() + total, response: r)
                    }
                case .syntaxError:
                    send(PN532Frames.error)
                case .hold(let deadline):
                    pending = PendingCommand(command: cmd, deadline: deadline, response: nil)
                }
            }
        }
    }

    private func uartTime(_ bytes: Int) -> Double { options.realisticTiming ? Double(bytes) * 10 / 115200 : 0 }

    private func resolvePending(now: Double) {
        guard let p = pending, let r = chip.resolvePending(p, now: now) else { return }
        pending = nil
        sendResponse(r)
    }

    private func sendResponse(_ data: [UInt8]) {
        let frame = PN532Frames.response(data)
        lastResponse = frame
        send(frame)
    }

    private func send(_ bytes: [UInt8]) {
        guard masterFD >= 0 else { return }
        bytesSent += bytes.count
        log(">> \(hex(bytes))")
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { write(masterFD, $0.baseAddress, $0.count) }
            if n <= 0 { if errno == EINTR { continue }; log("write to pty failed: \(String(cString: strerror(errno)))"); return }
            off += n
        }
    }
}
