import ArgumentParser
import Foundation

/// Runs RoomBridge's benchmarks against the real binaries and writes `docs/benchmarks.md`.
///
/// Every figure sits next to a peer measured in the same run (a raw Unix-socket ping-pong for
/// the socket, …), so that the ratio, not the absolute number, carries the meaning.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roombridge-bench",
        abstract: "Measure RoomBridge (release build) and write docs/benchmarks.md.")

    @Option(help: "Directory with the release binaries.")
    var bin = ".build/release"

    @Option(help: "Markdown file to write.")
    var output = "docs/benchmarks.md"

    @Option(help: "GetState round trips (and ping-pongs) to time.")
    var roundTrips = 20000

    @Option(help: "Daemon starts to time.")
    var starts = 10

    @Option(help: "Seconds of idle to measure CPU over.")
    var idleSeconds = 10.0

    @Option(help: "Taps to time with realistic PN532 timing.")
    var taps = 30

    @Option(help: "PN532 unplug/replug cycles to time.")
    var replugs = 10

    @Option(help: "Watch subscribers for the fan-out figure.")
    var subscribers = 1000

    @Option(help: "Taps to fan out.")
    var fanOutTaps = 10

    @Option(help: "Curtain moves (MoveTo commands) to time, per profile; bleak does the same writes.")
    var moves = 20

    @Option(help: "Curtain reconnects to time, per profile.")
    var reconnects = 5

    @Option(help: "Pulls at the curtain (wall-switch presses) to time, per profile; bleak times the same.")
    var pulls = 6

    @Option(help: "Group commands to time on a group of four curtains, per profile.")
    var groupCommands = 10

    @Option(help: "Beacon appearances to time (beacon added → entered event).")
    var beaconAppearances = 20

    @Option(help: "Beacons around while measuring the scanner's CPU.")
    var scanBeacons = 50

    @Option(help: "Seconds of NDEF fuzzing (0 skips it).")
    var fuzzSeconds = 300

    @Option(help: "Devices in the store benchmark.")
    var devices = 100_000

    @Option(help: "Rentals in the store benchmark.")
    var rentals = 1_000_000

    @Option(help: "Devices in the PostgreSQL section (SQLite is run at the same size next to it).")
    var pgDevices = 100_000

    @Option(help: "Rentals in the PostgreSQL section.")
    var pgRentals = 1_000_000

    @Option(help: "Seconds of each pgbench run in the PostgreSQL section.")
    var pgbenchSeconds = 10

    @Option(help: "Operations per timed batch in the JSON section.")
    var jsonIterations = 2000

    @Option(help: "Kiosk page loads to time in Chromium (and as many from a plain static server).")
    var webLoads = 20

    @Option(help: "Device taps to time to the kiosk's screen.")
    var webTaps = 10

    @Option(help: ArgumentHelp("scripts/package-size.sh's output: its section, and the package's program started next to 0.1.0's.",
                               valueName: "DIR"))
    var package: String?

    @Option(help: "Sections to run, comma-separated: start (with socket), package, nfc, fanout, loops, curtain, presence, store, postgres, fuzz, json, web; default all.")
    var only: String?

    /// Whether `section` was asked for.
    func runs(_ section: String) -> Bool {
        guard let only else { return true }
        return only.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == section }
    }

    func run() async throws {
        let work = try TempDir()
        defer { try? FileManager.default.removeItem(at: work.path) }
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = min(limit.rlim_max, 65536)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        var report = Report(command: "swift run -c release roombridge-bench", machine: Machine.describe())

        // Start → READY=1, and idle RSS/CPU of the last started daemon.
        var readyTimes: [Double] = []
        for i in 0..<(runs("start") ? starts : 0) {
            let d = try DaemonProcess.start(bin: bin, dir: work.path.appendingPathComponent("start\(i)"))
            readyTimes.append(d.readySeconds * 1000)
            if i < starts - 1 { d.stop() } else {
                try await Task.sleep(for: .seconds(2))
                let memory = MemoryProfile(pid: d.pid)
                let cpu = d.cpuPercent(over: idleSeconds)
                let essentials = try await idlePeerMemory(bin: bin, name: "idle-peer-essentials", settle: 2)
                let foundation = try await idlePeerMemory(bin: bin, name: "idle-peer-foundation", settle: 2)
                report.add(section: "Start and idle", rows: [
                    Row("start → READY=1 (ms)", Stats(readyTimes), peer: nil),
                    Row.single("idle CPU, no hardware (% of a core, \(Int(idleSeconds)) s)", cpu),
                ] + Self.idleMemoryRows(memory, essentials: essentials, foundation: foundation))
                // GetState round trips on one connection, next to a raw ping-pong of the same bytes.
                let client = try BlockingClient(path: d.socketPath)
                let request = Array(#"{"method":"io.roombridge.State.GetState"}"#.utf8) + [0]
                let reply = try client.roundTrip(request)
                let rtt = try client.time(request, count: roundTrips)
                client.close()
                let echo = try EchoServer(path: work.path.appendingPathComponent("echo.sock").path, reply: reply)
                let raw = try BlockingClient(path: echo.path)
                let rawRTT = try raw.time(request, count: roundTrips)
                raw.close()
                echo.stop()
                report.add(section: "Socket: GetState round trips on one connection (\(reply.count)-byte reply)", rows: [
                    Row("GetState round trip (µs)", Stats(rtt.map { $0 * 1e6 }),
                        peer: ("raw Unix-socket ping-pong, same bytes", Stats(rawRTT.map { $0 * 1e6 }))),
                    Row.single("GetState round trips/s", Double(rtt.count) / rtt.reduce(0, +)),
                    Row.single("raw ping-pongs/s", Double(rawRTT.count) / rawRTT.reduce(0, +)),
                ])
                d.stop()
            }
        }
        if runs("package"), let package { try await packageFigures(&report, directory: package, work: work.path) }
        if runs("nfc") { try nfcFigures(&report, work: work.path) }
        if runs("fanout") { try fanOutFigures(&report, work: work.path) }
        if runs("loops") { try eventLoopFigures(&report, work: work.path) }
        if runs("curtain") {
            try await curtainFigures(&report, work: work.path)
            try await curtainGroupFigures(&report, work: work.path)
        }
        if runs("presence") { try presenceFigures(&report, work: work.path) }
        if runs("store") { try lendingFigures(&report, work: work.path) }
        if runs("stocktake") { try stocktakeFigures(&report, work: work.path) }
        if runs("postgres") { try await postgresFigures(&report, work: work.path) }
        if runs("fuzz") { try fuzzFigures(&report) }
        if runs("json") { try await jsonFigures(&report) }
        if runs("web") { try await webFigures(&report, work: work.path) }
        try report.write(to: output)
        print(report.markdown)
    }
}

extension Bench {
    /// The package's size (scripts/package-size.sh's section), then its program started as the
    /// installed `roombridged` next to 0.1.0's own `roombridged`, alternately, in this run: start
    /// to READY=1 and idle memory, both statically linked and stripped as packaged.
    func packageFigures(_ report: inout Report, directory: String, work: URL) async throws {
        let text = try String(contentsOfFile: directory + "/package-size.md", encoding: .utf8)
        var ready: [String: [Double]] = [:]
        var memory: [String: MemoryProfile] = [:]
        for i in 0..<starts {
            for layout in ["one", "three"] {
                let d = try DaemonProcess.start(bin: directory + "/" + layout,
                                                dir: work.appendingPathComponent("package-\(layout)\(i)"))
                ready[layout, default: []].append(d.readySeconds * 1000)
                if i == starts - 1 {
                    try await Task.sleep(for: .seconds(2))
                    memory[layout] = MemoryProfile(pid: d.pid)
                }
                d.stop()
            }
        }
        func mib(_ kB: Int?) -> Stats { Stats([Double(kB ?? 0) / 1024]) }
        let old = "0.1.0's roombridged, its own program"
        // The minimal programs, built and stripped as the package's program (package-size.sh), settled as long.
        let essentials = try await idlePeerMemory(bin: directory, name: "idle-peer-essentials", settle: 2)
        let foundation = try await idlePeerMemory(bin: directory, name: "idle-peer-foundation", settle: 2)
        let installed = memory["one"].map { Self.idleMemoryRows($0, essentials: essentials, foundation: foundation) } ?? []
        report.add(section: "Package size", text: text + """

            The installed daemon, started \(starts) times each, alternately: the package's one program
            (run as `roombridged`) next to 0.1.0's `roombridged`, both as packaged.

            \(Report.table([
                Row("start → READY=1 (ms)", Stats(ready["one"] ?? []), peer: (old, Stats(ready["three"] ?? []))),
                Row("idle RSS (MiB)", mib(memory["one"]?.rssKB), peer: (old, mib(memory["three"]?.rssKB))),
                Row("idle Pss (MiB)", mib(memory["one"]?.pssKB), peer: (old, mib(memory["three"]?.pssKB))),
            ]))

            The package's program idle, next to the minimal programs built, linked and stripped the same way
            (`idle-peer-essentials`, `idle-peer-foundation`; statically, by package-size.sh), each 2 s after it
            said it was ready, its file in the page cache (as after installing):

            \(Report.table(installed).dropLast())
            """)
    }
}
