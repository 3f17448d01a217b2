import Foundation
import Subprocess
import SystemPackage
import Varlink

/// The web front in a real browser: scripts/bench-web.py drives Debian's chromium (through
/// chromium-driver and selenium) against roombridge-web, which it starts next to the daemon and
/// pn532-sim started here, and prints one JSON line of samples.
extension Bench {
    static let webSection = "Web front (roombridge-web in Chromium)"

    func webFigures(_ report: inout Report, work: URL) async throws {
        guard Self.executableOnPath("chromedriver") != nil, Self.executableOnPath("chromium") != nil else {
            report.add(section: Self.webSection, rows: [Row.single("skipped: chromium-driver not installed", .nan)])
            return
        }
        let sim = try SimulatorProcess(bin: bin, dir: work.appendingPathComponent("web"), realistic: true)
        defer { sim.stop() }
        // Lent, then returned by the next tap of the same tag: no repeat window. The script adds
        // the user, badge and device: this process's own group may change things.
        let d = try DaemonProcess.start(bin: bin, dir: work.appendingPathComponent("web-daemon"), extraArguments: [
            "--nfc-enabled", "--nfc-readers", "front=pn532_uart:\(sim.link)", "--nfc-modulations", "iso14443a",
            "--lending-repeat-window", "0", "--auth-group", Self.ownGroupName()])
        defer { d.stop() }
        let watch = try WatchConnection(path: d.socketPath)
        try watch.waitForReaderConnected()
        watch.client.close()

        let uid = "04A1B2C3D4E5F6"
        let (status, stdout, stderr) = try await runPython(["scripts/bench-web.py", "--bin", bin, "--socket", d.socketPath,
            "--sim-control", sim.control, "--device-tag", try Self.deviceTagSpec(uid: uid), "--tag-uid", uid,
            "--loads", String(webLoads), "--taps", String(webTaps)])
        if status == .exited(3) {
            // The script's own check: selenium (or the browser) is missing.
            report.add(section: Self.webSection, rows: [Row.single("skipped: \(stderr.trimmingCharacters(in: .whitespacesAndNewlines))", .nan)])
            return
        }
        guard status.isSuccess, let line = stdout.split(separator: "\n").last,
              let samples = try? JSONValue(parsing: String(line)) else {
            throw BenchError("scripts/bench-web.py failed (\(status)):\n\(stdout)\n\(stderr)")
        }
        func ms(_ key: String) -> [Double] { samples[key]?.arrayValue?.compactMap { (value: JSONValue) in value.doubleValue } ?? [] }
        let screen = ms("screenMs"), watched = ms("watchMs")
        let bytes = (samples["bytes"]?.objectValue?.values.compactMap(\.intValue) ?? []).reduce(0, +)
        report.add(section: "\(Self.webSection): PN532 simulator with realistic timing, headless; cold loads with the cache disabled", rows: [
            Row("/kiosk load, navigation start → load event (ms; page, CSS and script, \(bytes) bytes)", Stats(ms("pageLoadMs")),
                peer: ("the same bytes from python3 -m http.server", Stats(ms("staticLoadMs")))),
            // Cache on: the assets' versioned names are cacheable for a year, so only the page travels.
            Row("/kiosk warm load, browser cache on (ms)", Stats(ms("warmPageLoadMs")),
                peer: ("a cold load of the same bytes from python3 -m http.server", Stats(ms("staticLoadMs")))),
            Row("/kiosk warm load, browser cache on (ms), against the static server warm", Stats(ms("warmPageLoadMs")),
                peer: ("the same bytes from python3 -m http.server, cache on", Stats(ms("warmStaticLoadMs")))),
            Row("device tap → kiosk shows \"Lent …\" (ms)", Stats(screen),
                peer: ("the same taps → lending event at a Varlink Watch subscriber", Stats(watched))),
            Row("web path alone: kiosk shows it − Watch event, same tap (ms)", Stats(zip(screen, watched).map { $0 - $1 }), peer: nil),
        ])
        report.add(section: "\(Self.webSection): the HTTP API, one kept-alive connection each, from Python", rows: [
            Row("GET /api/v1/devices/D-0001 with a read token (ms)", Stats(ms("apiLookupMs")),
                peer: ("io.roombridge.Inventory.GetDevice on one Varlink connection (ms)", Stats(ms("varlinkLookupMs")))),
        ])
    }

    /// The name of this process's primary group.
    static func ownGroupName() -> String {
        guard let group = getgrgid(getgid()), let name = group.pointee.gr_name else { return "root" }
        return String(cString: name)
    }

    /// The first executable `name` on PATH.
    static func executableOnPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// Runs a Python script to its end with the python3 on PATH (the one selenium is installed for);
/// its exit status, standard output and standard error. `environment` is added to this process's.
/// Through swift-subprocess, which resets the child's signal mask (see idlePeerMemory): the
/// script's own children (roombridge-web, http.server, chromium) must end on SIGTERM.
func runPython(_ arguments: [String], environment: [String: String] = [:]) async throws -> (TerminationStatus, String, String) {
    let extra = Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0.key), Optional($0.value)) })
    let result = try await run(.name("python3"), arguments: Arguments(arguments), environment: .inherit.updating(extra),
                               output: .string(limit: 1 << 20), error: .string(limit: 1 << 20))
    return (result.terminationStatus, result.standardOutput, result.standardError)
}
