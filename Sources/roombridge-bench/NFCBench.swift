import Foundation
import NDEF
import PN532Simulator
import SeededRandom
import Varlink

/// pn532-sim started for a measurement.
final class SimulatorProcess {
    let process: Process
    let link: String
    let control: String

    init(bin: String, dir: URL, realistic: Bool) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        link = dir.appendingPathComponent("pn532.tty").path
        control = dir.appendingPathComponent("pn532.ctl").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: bin).appendingPathComponent("pn532-sim")
        process.arguments = ["run", "--link", link, "--control", control] + (realistic ? ["--realistic-timing"] : [])
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard line.contains("ready") else { throw BenchError("pn532-sim did not start: \(line)") }
    }

    @discardableResult
    func ctl(_ command: String) throws -> String {
        let answer = try ControlClient.send(command, socketPath: control)
        guard answer.hasPrefix("ok") else { throw BenchError("pn532-sim \(command): \(answer)") }
        return answer
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// A Watch subscription on a blocking socket.
final class WatchConnection {
    let client: BlockingClient
    /// The state Watch answered with first (events before it are already in it).
    let initialState: String

    init(path: String) throws {
        client = try BlockingClient(path: path)
        try client.send(Array(#"{"method":"io.roombridge.State.Watch","more":true}"#.utf8) + [0])
        initialState = String(decoding: try client.receive(), as: UTF8.self)
    }

    /// Waits until the reader is connected: already, in the first state, or by a later event.
    func waitForReaderConnected() throws {
        let connected = #""state":"connected""#
        if initialState.contains(connected) { return }
        _ = try wait(for: "reader", where: { $0.contains(connected) })
    }

    /// The next event's kind and the whole event object.
    func nextEvent() throws -> (kind: String, event: JSONValueLite) {
        let bytes = try client.receive()
        let text = String(decoding: bytes, as: UTF8.self)
        // Parse it: nested objects (a curtain's lastRequest, a lending outcome) have "kind" keys too.
        guard let event = (try? JSONValue(parsing: bytes))?["parameters"]?["event"],
              let kind = event["kind"]?.stringValue else { throw BenchError("not an event: \(text.prefix(200))") }
        return (kind, JSONValueLite(text: text, curtainPosition: event["curtain"]?["position"]?.intValue.map { Int($0) }))
    }

    /// Reads events until one of `kind` (and matching `filter`) arrives.
    func wait(for kind: String, where filter: (JSONValueLite) -> Bool = { _ in true }) throws -> JSONValueLite {
        while true {
            let (k, e) = try nextEvent()
            if k == kind && filter(e) { return e }
        }
    }
}

/// Just enough of an event's text to look for substrings, and a curtain event's position (the curtain's own: its
/// `lastRequest` carries a position too).
struct JSONValueLite {
    let text: String
    var curtainPosition: Int? = nil
    func contains(_ s: String) -> Bool { text.contains(s) }
}

extension Bench {
    /// The device tag used for the tap figures: an NTAG216 with a URI record and the device record.
    static func deviceTagSpec(uid: String) throws -> String {
        let message = try DeviceTagRecord(deviceId: "D-0001", model: "Pixel 7", serial: "SN123456789")
            .message(uri: "https://roombridge.example/devices/D-0001").encoded()
        let hex = message.map { String(format: "%02X", $0) }.joined()
        return #"{"type":"ntag216","uid":"\#(uid)","ndef":"\#(hex)"}"#
    }

    func nfcFigures(_ report: inout Report, work: URL) throws {
        let sim = try SimulatorProcess(bin: bin, dir: work.appendingPathComponent("nfc"), realistic: true)
        defer { sim.stop() }
        let d = try DaemonProcess.start(bin: bin, dir: work.appendingPathComponent("nfc-daemon"), extraArguments: [
            "--nfc-enabled", "--nfc-readers", "front=pn532_uart:\(sim.link)", "--nfc-modulations", "iso14443a"])
        let watch = try WatchConnection(path: d.socketPath)
        try watch.waitForReaderConnected()
        let cpu = d.cpuPercent(over: idleSeconds)
        var restingCPU = Double.nan

        let spec = try Self.deviceTagSpec(uid: "04A1B2C3D4E5F6")
        var tapMs: [Double] = [], wireMs: [Double] = [], removalMs: [Double] = []
        // A hand lifts the tag at no particular moment of the reader's presence-check cycle:
        // hold it a random 20–220 ms after the arrival event (seeded, the same every run).
        var random = SplitMix64(seed: 13)
        for i in 0..<taps {
            try sim.ctl("counters reset")
            let t0 = monotonicSeconds()
            try sim.ctl("place \(spec)")
            _ = try watch.wait(for: "tagArrived")
            tapMs.append((monotonicSeconds() - t0) * 1000)
            let counters = try sim.ctl("counters")
            let bytes = counters.split(separator: " ").dropFirst().compactMap { Int($0.split(separator: "=").last ?? "") }.reduce(0, +)
            wireMs.append(Double(bytes) * 10 / 115200 * 1000)
            if i == 0 { restingCPU = d.cpuPercent(over: idleSeconds) }
            Thread.sleep(forTimeInterval: Double.random(in: 0.020..<0.220, using: &random))
            let t1 = monotonicSeconds()
            try sim.ctl("remove")
            _ = try watch.wait(for: "tagRemoved")
            removalMs.append((monotonicSeconds() - t1) * 1000)
        }
        // Unplugged and plugged in again: the reader comes back by itself.
        var replugMs: [Double] = []
        for _ in 0..<replugs {
            try sim.ctl("unplug")
            _ = try watch.wait(for: "reader", where: { $0.contains(#""state":"disconnected""#) })
            let t0 = monotonicSeconds()
            try sim.ctl("replug")
            _ = try watch.wait(for: "reader", where: { $0.contains(#""state":"connected""#) })
            replugMs.append((monotonicSeconds() - t0) * 1000)
        }
        watch.client.close()
        // SIGTERM while libnfc polls: the poll is aborted, not waited out.
        let t2 = monotonicSeconds()
        d.stop()
        let stopMs = (monotonicSeconds() - t2) * 1000

        // libnfc's own reader on the same simulated tag: nfc-mfultralight reads the whole memory.
        try sim.ctl("place \(spec)")
        var mfulMs: [Double] = []
        for i in 0..<3 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/nfc-mfultralight")
            p.arguments = ["r", work.appendingPathComponent("dump\(i).mfd").path]
            p.environment = ["LIBNFC_DEVICE": "pn532_uart:\(sim.link)", "LIBNFC_AUTO_SCAN": "false", "LIBNFC_LOG_LEVEL": "0"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            let t0 = monotonicSeconds()
            try p.run()
            p.waitUntilExit()
            if p.terminationStatus == 0 { mfulMs.append((monotonicSeconds() - t0) * 1000) }
        }
        // A fresh simulator (the daemon shortened the chip's RF timeout on this one).
        let pollSim = try SimulatorProcess(bin: bin, dir: work.appendingPathComponent("nfc-poll"), realistic: true)
        defer { pollSim.stop() }
        let pollMs = try Self.nfcPollRemovals(sim: pollSim, spec: spec, count: 10, random: &random)
        report.add(section: "NFC: PN532 simulator with realistic timing (115200-baud UART byte times + RF time)", rows: [
            Row("tap → Watch event, NTAG216 device tag (ms)", Stats(tapMs), peer: ("wire-time minimum of the bytes exchanged", Stats(wireMs))),
            Row("tap → Watch event (ms)", Stats(tapMs), peer: ("nfc-mfultralight r, same tag (whole memory)", Stats(mfulMs))),
            Row("lift → removal event (ms)", Stats(removalMs),
                peer: ("nfc-poll: libnfc's presence check back to back, chip timeout left at 51.2 ms", Stats(pollMs))),
            Row.single("lift → removal event, p95 (ms)", Stats(removalMs).p95),
            Row("replug → reader connected event (ms)", Stats(replugMs), peer: nil),
            Row.single("SIGTERM while polling → daemon exited (ms)", stopMs),
            Row.single("CPU while polling with no tag (% of a core, \(Int(idleSeconds)) s)", cpu),
            Row.single("CPU while a tag rests, presence checks (% of a core, \(Int(idleSeconds)) s)", restingCPU),
        ])
    }

    /// The peer for lift → removal: libnfc's example nfc-poll (package libnfc-examples) selects
    /// the tag, then calls `nfc_initiator_target_is_present` back to back until it fails and
    /// prints "done." (libnfc examples/nfc-poll.c). The tag is lifted after the same kind of
    /// random hold as for the daemon; stdout is unbuffered (stdbuf) so lines arrive as printed.
    static func nfcPollRemovals(sim: SimulatorProcess, spec: String, count: Int,
                                random: inout SplitMix64) throws -> [Double] {
        var out: [Double] = []
        for _ in 0..<count {
            try sim.ctl("place \(spec)")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
            p.arguments = ["-o0", "/usr/bin/nfc-poll"]
            p.environment = ["LIBNFC_DEVICE": "pn532_uart:\(sim.link)", "LIBNFC_AUTO_SCAN": "false", "LIBNFC_LOG_LEVEL": "0"]
            let pipe = Pipe()
            p.standardOutput = pipe
            p.standardError = FileHandle.nullDevice
            try p.run()
            var text = ""
            func read(until marker: String) -> Bool {
                while !text.contains(marker) {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { return false }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                return true
            }
            guard read(until: "Waiting for card removing") else {
                p.waitUntilExit()
                throw BenchError("nfc-poll found no tag: \(text)")
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0.020..<0.220, using: &random))
            let t0 = monotonicSeconds()
            try sim.ctl("remove")
            let done = read(until: "done.")
            let ms = (monotonicSeconds() - t0) * 1000
            p.waitUntilExit()
            if done { out.append(ms) }
        }
        return out
    }

    /// Watch fan-out: one tap, delivered to 10, 100 and 1,000 subscribers, next to the same with one subscriber.
    func fanOutFigures(_ report: inout Report, work: URL) throws {
        let run = try fanOutSamples(counts: [10, 100, subscribers], work: work.appendingPathComponent("fan"))
        guard let all = run.counts.last else { return }
        let plain = try plainWriteLoopArrivals(message: all.event, count: all.count, rounds: fanOutTaps)
        report.add(section: "Watch fan-out (PN532 simulator without timing; \(all.event.count)-byte event)", rows: run.counts.map {
            Row("tap → Watch event at each of \($0.count) subscribers (ms)", Stats($0.arrivals),
                peer: ("the same with 1 subscriber", Stats(run.one)))
        } + [
            Row("fan-out alone at \(all.count): each arrival after the tap's first (ms)", Stats(all.spread),
                peer: ("the same event written to \(all.count) Unix sockets by a plain write loop", Stats(plain))),
        ])
    }

    /// The socket's event loops (issue 30 §2): the daemon with one NIO event loop (`NIO_SINGLETON_GROUP_LOOP_COUNT=1`)
    /// next to the default, one per core, one after the other in this run: GetState round trips and the fan-out at 100 and
    /// at `subscribers`.
    func eventLoopFigures(_ report: inout Report, work: URL) throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var runs: [Int: FanOutRun] = [:]
        for loops in [1, cores] {
            runs[loops] = try fanOutSamples(counts: [100, subscribers], work: work.appendingPathComponent("loops\(loops)"),
                                            environment: ["NIO_SINGLETON_GROUP_LOOP_COUNT": "\(loops)"], roundTrips: roundTrips / 4)
        }
        guard let one = runs[1], let many = runs[cores] else { return }
        let peer = "the same with \(cores) event loops (one per core, the default)"
        report.add(section: "Socket event loops: one against one per core (\(cores))", rows: [
            Row("1 event loop: GetState round trip (µs)", Stats(one.getState.map { $0 * 1e6 }),
                peer: (peer, Stats(many.getState.map { $0 * 1e6 }))),
        ] + zip(one.counts, many.counts).map { a, b in
            Row("1 event loop: tap → Watch event at each of \(a.count) subscribers (ms)", Stats(a.arrivals),
                peer: (peer, Stats(b.arrivals)))
        })
    }

    struct FanOutCount {
        let count: Int
        let arrivals: [Double]
        let spread: [Double]
        let event: [UInt8]
    }

    struct FanOutRun {
        /// Tap → event with one subscriber (ms).
        let one: [Double]
        let counts: [FanOutCount]
        /// GetState round trips on one connection (s), when asked for.
        let getState: [Double]
    }

    /// One daemon on the PN532 simulator: `fanOutTaps` taps to one subscriber, then to each of `counts` (the
    /// connections of the smaller counts stay, drained before each count is measured); first `roundTrips`
    /// GetState round trips when asked for.
    func fanOutSamples(counts: [Int], work: URL, environment: [String: String] = [:], roundTrips: Int = 0) throws -> FanOutRun {
        let most = counts.max() ?? 1
        let sim = try SimulatorProcess(bin: bin, dir: work, realistic: false)
        defer { sim.stop() }
        let d = try DaemonProcess.start(bin: bin, dir: work.appendingPathComponent("daemon"), extraArguments: [
            "--nfc-enabled", "--nfc-readers", "front=pn532_uart:\(sim.link)", "--nfc-modulations", "iso14443a",
            "--socket-max-connections", "\(most + 16)"], environment: environment)
        defer { d.stop() }
        let first = try WatchConnection(path: d.socketPath)
        try first.waitForReaderConnected()
        var getState: [Double] = []
        if roundTrips > 0 {
            let client = try BlockingClient(path: d.socketPath)
            getState = try client.time(Array(#"{"method":"io.roombridge.State.GetState"}"#.utf8) + [0], count: roundTrips)
            client.close()
        }
        let spec = try Self.deviceTagSpec(uid: "04A1B2C3D4E5F6")

        // Arrival at each subscriber, measured by one epoll reader (FanOutReader); `spread` is
        // each arrival minus the tap's first, the part that fan-out adds.
        func measure(_ watchers: [WatchConnection]) throws -> FanOutCount {
            let reader = try FanOutReader(fds: watchers.map(\.client.fd))
            var arrivals: [Double] = []
            var spread: [Double] = []
            for _ in 0..<fanOutTaps {
                let t0 = monotonicSeconds()
                try sim.ctl("place \(spec)")
                let times = try reader.arrivals(of: #""kind":"tagArrived""#, since: t0)
                arrivals += times
                spread += times.map { $0 - times[0] }
                try sim.ctl("remove")
                _ = try reader.arrivals(of: #""kind":"tagRemoved""#, since: monotonicSeconds())
            }
            return FanOutCount(count: watchers.count, arrivals: arrivals, spread: spread, event: reader.lastMatch)
        }
        let one = try measure([first])
        var many = [first]
        var measured: [FanOutCount] = []
        for count in counts.sorted() where count > many.count {
            while many.count < count { many.append(try WatchConnection(path: d.socketPath)) }
            Self.drain(many.map(\.client.fd))
            measured.append(try measure(many))
        }
        for w in many { w.client.close() }
        return FanOutRun(one: one.arrivals, counts: measured, getState: getState)
    }

    /// Reads and drops whatever `fds` hold until none has received anything for 200 ms (events sent to
    /// connections that were not being measured).
    static func drain(_ fds: [Int32]) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while poll(&polled, nfds_t(polled.count), 200) > 0 {
            for i in polled.indices where polled[i].revents != 0 {
                polled[i].revents = 0
                _ = chunk.withUnsafeMutableBytes { recv(fds[i], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            }
        }
    }
}

extension Bench {
    /// A stocktake's close on SQLite (lending-bench --stocktake), next to a plain SELECT of the rows it writes.
    func stocktakeFigures(_ report: inout Report, work: URL) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: bin).appendingPathComponent("lending-bench")
        p.arguments = ["--stocktake", "1000", work.appendingPathComponent("stocktake").path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError("lending-bench --stocktake failed:\n\(text)") }
        func samples(_ prefix: String) -> [Double] {
            text.split(separator: "\n").first { $0.hasPrefix(prefix) }
                .map { $0.dropFirst(prefix.count).split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) } } ?? []
        }
        let title = text.split(separator: "\n").first { $0.hasPrefix("stocktake of") }.map(String.init) ?? "stocktake"
        report.add(section: "Stocktake close (SQLite, WAL, synchronous=FULL): \(title)", rows: [
            Row("close: the four lists written by value (ms)", Stats(samples("stocktake-close-ms: ")),
                peer: ("a plain SELECT of the same rows (ms)", Stats(samples("plain-select-ms: ")))),
        ])
    }
}

extension Bench {
    /// The store at scale: lending-bench fills 100 k devices and 1 M rentals, then times durable
    /// lend+return pairs and the three lookups; its `… ops/s … µs/op` lines become rows.
    func lendingFigures(_ report: inout Report, work: URL) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: bin).appendingPathComponent("lending-bench")
        p.arguments = [String(devices), String(rentals), work.appendingPathComponent("lending").path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError("lending-bench failed:\n\(text)") }
        var rows: [Row] = []
        var micros: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.contains("ops/s") {
            // "<name padded to 44> <count> ops <secs> s <rate> ops/s <micros> µs/op"
            let name = line.prefix(44).trimmingCharacters(in: .whitespaces)
            let fields = line.dropFirst(44).split(separator: " ")
            if let i = fields.firstIndex(of: "ops/s"), i > 0, let rate = Double(fields[i - 1]) {
                rows.append(Row.single("\(name) (ops/s)", rate))
            }
            if let j = fields.firstIndex(of: "µs/op"), j > 0, let value = Double(fields[j - 1]) {
                rows.append(Row.single("\(name) (µs each)", value))
                micros[name] = value
            }
        }
        // The point lookup next to each of its peers (lending-bench's breakdown of where the time goes).
        let lookup = "who has device X (device + active rental)"
        if let ours = micros[lookup] {
            for peer in ["same, raw synchronous SQL", "same, one synchronous read each", "same, one async pool read each"] {
                guard let value = micros[peer] else { continue }
                let label = peer.replacingOccurrences(of: "same, ", with: "the user-id query: ")
                rows.append(Row("\(lookup), through the store (µs each)", Stats([ours]), peer: (label, Stats([value]))))
            }
        }
        if let ours = micros["dashboard, last 30 days"], let peer = micros["peer: monthly report of the same month"] {
            rows.append(Row("dashboard, last 30 days (GetDashboard's store work, µs each)", Stats([ours]),
                            peer: ("the monthly report of the month it ends in", Stats([peer]))))
        }
        for line in text.split(separator: "\n") where line.hasPrefix("open with") || line.hasPrefix("fill:") {
            rows.append(Row.single(String(line), .nan))
        }
        if let raw = micros["same, raw synchronous SQL"] {
            rows.append(try getDeviceFigure(database: work.appendingPathComponent("lending/bench.sqlite"), rawSQLMicros: raw,
                                            work: work.appendingPathComponent("lending-daemon")))
        }
        report.add(section: "Store at scale: \(devices) devices, \(rentals) rentals (SQLite, WAL, synchronous=FULL)", rows: rows)
    }

    /// "Who has device X" as a client waits for it (issue 30 §3): `Inventory.GetDevice` over the socket, roombridged
    /// on lending-bench's database, next to the sum of a raw Unix-socket ping-pong of the same reply bytes and the
    /// raw synchronous SQL lookup lending-bench timed in this run.
    func getDeviceFigure(database: URL, rawSQLMicros: Double, work: URL) throws -> Row {
        let d = try DaemonProcess.start(bin: bin, dir: work, extraArguments: ["--database-path", database.path])
        defer { d.stop() }
        let client = try BlockingClient(path: d.socketPath)
        let ids = (0..<1000).map { String(format: "D-%06d", ($0 * 7_919) % devices) }
        func request(_ id: String) -> [UInt8] {
            Array(#"{"method":"io.roombridge.Inventory.GetDevice","parameters":{"id":"\#(id)"}}"#.utf8) + [0]
        }
        let reply = try client.roundTrip(request(ids[0]))
        guard String(decoding: reply, as: UTF8.self).contains(#""device""#) else {
            throw BenchError("GetDevice: \(String(decoding: reply, as: UTF8.self))")
        }
        for id in ids { _ = try client.roundTrip(request(id)) }  // warm-up
        var ours: [Double] = []
        for i in 0..<roundTrips / 4 {
            let bytes = request(ids[i % ids.count])
            let t = monotonicSeconds()
            _ = try client.roundTrip(bytes)
            ours.append((monotonicSeconds() - t) * 1e6)
        }
        client.close()
        let echo = try EchoServer(path: work.appendingPathComponent("echo.sock").path, reply: reply)
        let raw = try BlockingClient(path: echo.path)
        let pingPong = try raw.time(request(ids[0]), count: roundTrips / 4).map { $0 * 1e6 + rawSQLMicros }
        raw.close()
        echo.stop()
        return Row("GetDevice over the socket, \(reply.count)-byte reply (µs)", Stats(ours),
                   peer: ("raw Unix-socket ping-pong of the same bytes + the raw synchronous SQL lookup (\(fmt(rawSQLMicros)) µs)",
                          Stats(pingPong)))
    }
}

extension Bench {
    /// The NDEF decoders under libFuzzer with AddressSanitizer (scripts/fuzz-ndef.sh), for the
    /// execution count of a longer run.
    func fuzzFigures(_ report: inout Report) throws {
        guard fuzzSeconds > 0 else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "scripts/fuzz-ndef.sh")
        p.arguments = [String(fuzzSeconds)]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let line = text.split(separator: "\n").first { $0.hasPrefix("executions:") } ?? "executions: unknown"
        let execs = Double(line.split(separator: " ").dropFirst().first ?? "") ?? .nan
        report.add(section: "NDEF decoders under libFuzzer + AddressSanitizer (`scripts/fuzz-ndef.sh \(fuzzSeconds)`)", rows: [
            Row.single("executions in \(fuzzSeconds) s (crashes: \(p.terminationStatus == 0 ? "none" : "FOUND, see .build-fuzz/"))", execs),
            Row.single("executions per second", execs / Double(fuzzSeconds)),
        ])
    }
}
