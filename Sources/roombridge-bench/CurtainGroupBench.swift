import CurtainProtocol
import Foundation
import Subprocess
import Varlink

/// A whole window at once (issue 27 §4): four curtains on one simulated adapter driven by one group command
/// (`Curtain.MoveTo` of the built-in group `all`); figures are the spread of the four motors' start times (first
/// WriteValue of the move at each simulated curtain) and command → the last start. The peer, on the same simulated
/// curtains once the daemon has gone: bleak writing the same bytes to the four at once (asyncio.gather,
/// scripts/bench-curtain-group-bleak.py).
extension Bench {
    static let groupAddresses = [BlueZSimProcess.deviceAddress, "C4:7C:8D:6A:3E:22", "C4:7C:8D:6A:3E:23", "C4:7C:8D:6A:3E:24"]

    func curtainGroupFigures(_ report: inout Report, work: URL) async throws {
        var rows: [Row] = []
        for profile in [CurtainProfile.roombridge, CurtainProfile.switchbot] {
            let name = profile.id.rawValue
            let onDemand = profile.connection.hold != nil
            let dir = work.appendingPathComponent("curtain-group-\(name)")
            let sim = try BlueZSimProcess(bin: bin, dir: dir.appendingPathComponent("bluez"), profile: profile.id,
                                          extraArguments: Self.groupAddresses.dropFirst().flatMap { ["--curtain", "\(name)@\($0)"] })
            defer { sim.stop() }
            // Four links for the like-for-like figure; on demand also the default budget of three, where the fourth
            // curtain waits until a link is down (bluetoothd's Disconnect takes DISCONNECT_TIMER, 2 s, to drop it).
            var runs: [(budget: Int?, samples: GroupSamples)] = []
            for budget in onDemand ? [4, nil] : [4] {
                try dropLinks(sim)
                progress("curtain group of four \(name), budget \(budget.map(String.init) ?? "default"): \(groupCommands) group commands")
                runs.append((budget, try daemonGroupFigures(profile, sim: sim, budget: budget,
                                                            dir: dir.appendingPathComponent("budget-\(budget ?? 0)"))))
            }
            progress("curtain group of four \(name): bleak")
            let peer = try await bleakGroupFigures(profile, sim: sim, writes: runs[0].samples.writes, released: onDemand)
            let peerWhat = onDemand ? "bleak: connect + write to the four at once (no budget)" : "bleak: the same write to the four at once"
            for (budget, daemon) in runs {
                let what = "\(name) ×4, " + (onDemand ? "links released, " : "connected, ")
                    + (budget.map { "curtain.connections = \($0)" } ?? "default curtain.connections = 3 (the fourth waits for a slot)")
                rows += [
                    Row("\(what): spread of the four start times (ms)", Stats(daemon.spreadMs),
                        peer: peer.map { (peerWhat, Stats($0.spreadMs)) } ?? Self.bleakSkipped),
                    Row("\(what): group command → the last curtain starts (ms)", Stats(daemon.lastMs),
                        peer: peer.map { (peerWhat, Stats($0.lastMs)) } ?? Self.bleakSkipped),
                ]
            }
        }
        report.add(section: "Curtain groups: four curtains on one simulated adapter, one group command (MoveTo)", rows: rows)
    }

    struct GroupSamples {
        var spreadMs: [Double] = []
        var lastMs: [Double] = []
        /// The bytes each round wrote, as `HEX@TARGET`: bleak writes the same.
        var writes: [String] = []
    }

    /// The daemon with the four curtains of `profile` and `budget` links (nil: the default): `groupCommands` MoveTo of
    /// the group `all`, alternately to 70 % and 30 %; an on-demand profile's links are released before each.
    func daemonGroupFigures(_ profile: CurtainProfile, sim: BlueZSimProcess, budget: Int?, dir: URL) throws -> GroupSamples {
        let onDemand = profile.connection.hold != nil
        let config = "[curtain]\n" + (onDemand ? "hold = 3\n" : "") + (budget.map { "connections = \($0)\n" } ?? "")
            + Self.groupAddresses.enumerated().map { i, a in "[curtains.c\(i + 1)]\naddress = \"\(a)\"\nprofile = \"\(profile.id.rawValue)\"\n" }
                .joined()
        let d = try DaemonProcess.start(bin: bin, dir: dir.appendingPathComponent("daemon"), config: config,
                                        extraArguments: ["--curtain-enabled"],
                                        environment: ["DBUS_SYSTEM_BUS_ADDRESS": sim.busAddress])
        defer { d.stop() }
        let client = try BlockingClient(path: d.socketPath)
        defer { client.close() }
        /// Each curtain's connection and position.
        func curtains() throws -> [(connection: String, position: Int?)] {
            let reply = try JSONValue(parsing: try client.roundTrip(Array(#"{"method":"io.roombridge.Curtain.GetState"}"#.utf8) + [0]))
            return (reply["parameters"]?["curtains"]?.arrayValue ?? []).map { c in
                (c["connection"]?.stringValue ?? "", c["position"]?.doubleValue.map { Int($0) })
            }
        }
        func waitFor(_ what: String, _ condition: ([(connection: String, position: Int?)]) -> Bool) throws {
            let start = monotonicSeconds()
            while !condition(try curtains()) {
                guard monotonicSeconds() - start < 60 else { throw BenchError("the four curtains: never \(what): \(try curtains())") }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }
        try waitFor("connected with a position") { cs in
            cs.count == 4 && cs.allSatisfy { ["connected", "standby"].contains($0.connection) && $0.position != nil }
        }
        var samples = GroupSamples()
        for i in 0..<groupCommands {
            let target = i % 2 == 0 ? 70 : 30
            if onDemand { try waitFor("released") { cs in cs.allSatisfy { $0.connection == "standby" } } }
            for a in Self.groupAddresses { _ = try sim.timing(device: a) }
            let t0 = monotonicSeconds()
            let reply = String(decoding: try client.roundTrip(Array(
                #"{"method":"io.roombridge.Curtain.MoveTo","parameters":{"name":"all","position":\#(target)}}"#.utf8) + [0]),
                as: UTF8.self)
            guard count(#""outcome":"moving""#, in: reply) == 4 else { throw BenchError("the group command: \(reply)") }
            for a in Self.groupAddresses { try waitIdle(sim, device: a, at: target) }
            var starts: [Double] = []
            for a in Self.groupAddresses {
                guard let write = Self.moveWrite(try sim.timing(device: a).writes, target: target, profile: profile) else {
                    throw BenchError("no move written to \(a)")
                }
                starts.append(write.0)
                if a == Self.groupAddresses[0] { samples.writes.append("\(write.1)@\(target)") }
            }
            samples.spreadMs.append((starts.max()! - starts.min()!) * 1000)
            samples.lastMs.append((starts.max()! - t0) * 1000)
        }
        return samples
    }

    /// A daemon leaves without Device1.Disconnect: drop its links (a link loss), as for the single-curtain peer, so
    /// that the next client finds the curtains advertising.
    func dropLinks(_ sim: BlueZSimProcess) throws {
        for a in Self.groupAddresses where try sim.ctl("device", a, "status").contains("connected=true") {
            try sim.ctl("device", a, "drop-link")
        }
    }

    func waitIdle(_ sim: BlueZSimProcess, device: String, at target: Int) throws {
        let start = monotonicSeconds()
        while !(try sim.ctl("device", device, "status").contains("idle at \(target)%")) {
            guard monotonicSeconds() - start < 30 else { throw BenchError("\(device) never reached \(target)%") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// bleak's samples on the same four curtains; nil when bleak is not installed.
    func bleakGroupFigures(_ profile: CurtainProfile, sim: BlueZSimProcess, writes: [String], released: Bool) async throws -> GroupSamples? {
        try dropLinks(sim)
        let (status, stdout, stderr) = try await runPython(["scripts/bench-curtain-group-bleak.py",
            "--sim", URL(fileURLWithPath: bin).appendingPathComponent("bluez-sim").path, "--control", sim.control,
            "--write-char", profile.writeCharacteristicUUID, "--response", profile.writeType.rawValue]
            + Self.groupAddresses.flatMap { ["--address", $0] } + (released ? ["--released"] : [])
            + writes.flatMap { ["--write", $0] },
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": sim.busAddress])
        if status == .exited(3) { return nil }
        guard status.isSuccess, let line = stdout.split(separator: "\n").last,
              let samples = try? JSONValue(parsing: String(line)) else {
            throw BenchError("scripts/bench-curtain-group-bleak.py failed for \(profile.id) (\(status)):\n\(stdout)\n\(stderr)")
        }
        func ms(_ key: String) -> [Double] { samples[key]?.arrayValue?.compactMap { (value: JSONValue) in value.doubleValue } ?? [] }
        return GroupSamples(spreadMs: ms("spreadMs"), lastMs: ms("lastMs"), writes: writes)
    }
}
