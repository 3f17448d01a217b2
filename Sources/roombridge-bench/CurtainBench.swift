import CurtainProtocol
import Foundation

/// bluez-sim started for a measurement, with its private bus.
final class BlueZSimProcess {
    let process: Process
    let control: String
    let busAddress: String
    /// The simulated curtain's address.
    static let deviceAddress = "C4:7C:8D:6A:3E:21"

    init(bin: String, dir: URL, profile: CurtainProfile.ID = .roombridge, extraArguments: [String] = []) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        control = dir.appendingPathComponent("bluez.ctl").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: bin).appendingPathComponent("bluez-sim")
        process.arguments = ["run", "--control", control, "--speed", "50", "--profile", profile.rawValue,
                             "--device-address", Self.deviceAddress] + extraArguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = monotonicSeconds() + 20
        while !text.contains("\n"), monotonicSeconds() < deadline {
            text += String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("DBUS_SYSTEM_BUS_ADDRESS=") }) else {
            throw BenchError("bluez-sim did not start: \(text)")
        }
        busAddress = String(line.dropFirst("DBUS_SYSTEM_BUS_ADDRESS=".count))
        while !FileManager.default.fileExists(atPath: control), monotonicSeconds() < deadline { usleep(10_000) }
    }

    @discardableResult
    func ctl(_ args: String...) throws -> String {
        let p = Process()
        p.executableURL = process.executableURL
        p.arguments = ["ctl", "--control", control] + args
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError("bluez-sim ctl \(args): \(text)") }
        return text
    }

    /// One control line sent on the control socket itself, without starting `bluez-sim ctl` (for timing: a
    /// process start costs tens of milliseconds); the answer line.
    @discardableResult
    func send(_ line: String) throws -> String {
        let client = try BlockingClient(path: control, terminator: 0x0A)
        defer { client.close() }
        let answer = String(decoding: try client.roundTrip(Array((line + "\n").utf8)), as: UTF8.self)
        guard answer.hasPrefix("ok") else { throw BenchError("bluez-sim \(line): \(answer)") }
        return answer
    }

    /// Times (CLOCK_MONOTONIC) and bytes (hex) of the command writes, notifications and advertisements (the
    /// position they carry, one byte) since the last call.
    /// `device`: a further curtain's address (`--curtain`); nil: the first curtain.
    func timing(device: String? = nil) throws -> (writes: [(Double, String)], notifications: [(Double, String)], adverts: [(Double, String)]) {
        let line = try device.map { try ctl("device", $0, "timing") } ?? ctl("timing")
        func parse(_ key: String) -> [(Double, String)] {
            guard let part = line.split(separator: " ").first(where: { $0.hasPrefix(key + "=") }) else { return [] }
            return part.dropFirst(key.count + 1).split(separator: ",").compactMap { e in
                let kv = e.split(separator: ":")
                guard kv.count == 2, let t = Double(kv[0]) else { return nil }
                return (t, String(kv[1]))
            }
        }
        return (parse("writes"), parse("notifications"), parse("adverts"))
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// What the daemon did with one profile's curtain.
struct CurtainDaemonSamples {
    var commandMs: [Double] = []
    var signalMs: [Double] = []
    var reconnectMs: [Double] = []
    /// A pull at the curtain → the Watch event that marks it manual (from then on remote commands are refused).
    var pullMs: [Double] = []
    /// The command each MoveTo wrote first, as `HEX@TARGET`: bleak writes the same.
    var writes: [String] = []
    /// The same for the commands after the link's release (on-demand profiles).
    var releasedWrites: [String] = []
}

extension Bench {
    /// The curtain, for each profile with bluez-sim simulating that device: socket command → WriteValue at the
    /// simulator; notification (SwitchBot: advertisement) → Watch event; reconnect time after the device returns.
    /// The peer, in the same run on the same simulated device once the daemon has gone: bleak doing the same
    /// writes (scripts/bench-curtain-bleak.py).
    func curtainFigures(_ report: inout Report, work: URL) async throws {
        for profile in CurtainProfile.all {
            let dir = work.appendingPathComponent("curtain-\(profile.id)")
            let sim = try BlueZSimProcess(bin: bin, dir: dir.appendingPathComponent("bluez"), profile: profile.id)
            defer { sim.stop() }
            let daemon = try daemonCurtainFigures(profile, sim: sim, dir: dir)
            let peer = try await bleakCurtainFigures(profile, sim: sim, writes: daemon.writes,
                                                     releasedWrites: daemon.releasedWrites, pulls: pulls)
            let name = profile.id.rawValue
            let signal = profile.motionFromAdvertisements
                ? "\(name): advertisement (motion, position) → Watch event (ms)"
                : "\(name): notification → Watch event (ms)"
            let peerSignal = profile.motionFromAdvertisements
                ? "bleak: BleakScanner detection callback, same advertisements" : "bleak notification callback"
            report.add(section: "Curtain, \(name) profile: BlueZ simulator on a private D-Bus bus", rows: [
                Row("\(name): command (MoveTo) → WriteValue at the simulator (ms)", Stats(daemon.commandMs),
                    peer: peer.map { ("bleak, same write (\(profile.writeType.rawValue)) → WriteValue", Stats($0.writeMs)) }
                        ?? Self.bleakSkipped),
                // The floors of the bleak figure: one raw method call on the bus (the issue's busctl, and the same
                // call from a process already connected, as bleak and the daemon are).
                Row("\(name): command (MoveTo) → WriteValue at the simulator (ms)", Stats(daemon.commandMs),
                    peer: peer.map { ("floor: the same WriteValue sent by dbus-fast alone (bleak's D-Bus library, no bleak)",
                                      Stats($0.rawWriteMs)) } ?? Self.bleakSkipped),
                Row("\(name): command (MoveTo) → WriteValue at the simulator (ms)", Stats(daemon.commandMs),
                    peer: peer.map { ("busctl call, the same WriteValue (a new process per call)", Stats($0.busctlWriteMs)) }
                        ?? Self.bleakSkipped),
                Row(signal, Stats(daemon.signalMs),
                    peer: peer.map { (peerSignal, Stats(profile.motionFromAdvertisements ? $0.advertMs : $0.notifyMs)) }
                        ?? Self.bleakSkipped),
                profile.connection.hold == nil
                    ? Row("\(name): device returns → connected again (ms)", Stats(daemon.reconnectMs), peer: nil)
                    : Row("\(name): command after the link's release → WriteValue, reconnect included (ms)",
                          Stats(daemon.reconnectMs),
                          peer: peer.map { ("bleak: connect to the device found before + same write → WriteValue",
                                            Stats($0.releasedWriteMs)) } ?? Self.bleakSkipped),
                Row("\(name): pull at the curtain\(profile.connection.hold == nil ? "" : " (link released)") → "
                        + "Watch event marking it manual, remote commands refused from then (ms)",
                    Stats(daemon.pullMs),
                    peer: peer.map { (profile.motionFromAdvertisements
                                        ? "bleak: first detection callback after the pull (not connected)"
                                        : "bleak: first notification after the pull that tells motion (decoded by the profile's codec)", Stats($0.pullMs)) }
                        ?? Self.bleakSkipped),
            ])
        }
    }

    static let bleakSkipped = ("skipped: bleak not installed", Stats([]))

    /// The daemon with `profile`: `moves` MoveTo commands between 30 % and 70 %, then `reconnects` returns.
    func daemonCurtainFigures(_ profile: CurtainProfile, sim: BlueZSimProcess, dir: URL) throws -> CurtainDaemonSamples {
        let d = try DaemonProcess.start(bin: bin, dir: dir.appendingPathComponent("daemon"),
                                        // A short hold, so that the on-demand figures do not wait 8.5 s for each release.
                                        extraArguments: ["--curtain-enabled", "--curtain-profile", profile.id.rawValue,
                                                         "--curtain-hold", "3"],
                                        environment: ["DBUS_SYSTEM_BUS_ADDRESS": sim.busAddress])
        defer { d.stop() }
        let watch = try WatchConnection(path: d.socketPath)
        let client = try BlockingClient(path: d.socketPath)
        defer { client.close() }
        func ready(_ text: String) -> Bool {
            text.contains(#""connection":"connected""#) && text.contains(#""position":"#) && !text.contains(#""position":null"#)
        }
        if !ready(watch.initialState) { _ = try watch.wait(for: "curtain", where: { ready($0.text) }) }

        var samples = CurtainDaemonSamples()
        progress("curtain \(profile.id): \(moves) moves")
        for i in 0..<moves {
            let target = i % 2 == 0 ? 70 : 30
            _ = try sim.timing()
            var received: [(Double, JSONValueLite)] = []
            let t0 = monotonicSeconds()
            _ = try client.roundTrip(Array(#"{"method":"io.roombridge.Curtain.MoveTo","parameters":{"position":\#(target)}}"#.utf8) + [0])
            while true {
                let (_, e) = try watch.nextEvent()
                received.append((monotonicSeconds(), e))
                if e.contains(#""motion":"idle""#) && e.curtainPosition == target { break }
            }
            let timing = try sim.timing()
            if let write = Self.moveWrite(timing.writes, target: target, profile: profile) {
                samples.commandMs.append((write.0 - t0) * 1000)
                samples.writes.append("\(write.1)@\(target)")
            }
            // Each position the device signals becomes a curtain event carrying it.
            let signals: [(Double, Int)] = profile.motionFromAdvertisements
                ? timing.adverts.compactMap { sent, hex in Int(hex, radix: 16).map { (sent, $0) } }
                : timing.notifications.flatMap { sent, hex in Self.positions(notified: hex, by: profile).map { (sent, $0) } }
            for (sent, position) in signals {
                if let hit = received.first(where: { $0.0 >= sent && $0.1.curtainPosition == position }) {
                    samples.signalMs.append((hit.0 - sent) * 1000)
                }
            }
        }

        progress("curtain \(profile.id): \(reconnects) reconnects")
        if profile.connection.hold != nil {
            // On demand: a command once the hold has passed and the link is released (standby).
            for i in 0..<reconnects {
                let target = i % 2 == 0 ? 40 : 60
                try waitUntilReleased(client)
                _ = try sim.timing()
                let t0 = monotonicSeconds()
                _ = try client.roundTrip(Array(#"{"method":"io.roombridge.Curtain.MoveTo","parameters":{"position":\#(target)}}"#.utf8) + [0])
                if let write = Self.moveWrite(try sim.timing().writes, target: target, profile: profile) {
                    samples.reconnectMs.append((write.0 - t0) * 1000)
                    samples.releasedWrites.append("\(write.1)@\(target)")
                }
                _ = try watch.wait(for: "curtain", where: { $0.contains(#""motion":"idle""#) && $0.curtainPosition == target })
            }
        } else {
            for _ in 0..<reconnects {
                try sim.ctl("vanish")
                _ = try watch.wait(for: "curtain", where: { !$0.contains(#""connection":"connected""#) })
                let t0 = monotonicSeconds()
                try sim.ctl("reappear")
                _ = try watch.wait(for: "curtain", where: { $0.contains(#""connection":"connected""#) })
                samples.reconnectMs.append((monotonicSeconds() - t0) * 1000)
            }
        }

        // Pulls at the curtain (the wall switch, a SwitchBot's touch-and-go): press → the event that marks the
        // motion manual. Each time, a remote command sent right after it must be refused as manual.
        progress("curtain \(profile.id): \(pulls) pulls")
        for i in 0..<pulls {
            let (direction, end) = i % 2 == 0 ? ("open", 100) : ("close", 0)
            if profile.connection.hold != nil { try waitUntilReleased(client) }
            let t0 = monotonicSeconds()
            try sim.send("press \(direction)")
            // The state keeps `manual` after a pull stops (until the next command): wait for the manual motion.
            _ = try watch.wait(for: "curtain", where: {
                $0.contains(#""manual":true"#) && $0.contains(#""motion":"\#(direction == "open" ? "opening" : "closing")""#)
            })
            samples.pullMs.append((monotonicSeconds() - t0) * 1000)
            let refusal = String(decoding: try client.roundTrip(Array(#"{"method":"io.roombridge.Curtain.Stop"}"#.utf8) + [0]),
                                 as: UTF8.self)
            guard refusal.contains("ManualOperationActive") else {
                throw BenchError("a Stop during the pull was not refused as manual: \(refusal)")
            }
            _ = try watch.wait(for: "curtain", where: {
                $0.contains(#""motion":"idle""#) && $0.curtainPosition == end
            })
        }
        return samples
    }

    /// Waits until the daemon has released an on-demand curtain's link (connection `standby`).
    func waitUntilReleased(_ client: BlockingClient) throws {
        let start = monotonicSeconds()
        while !String(decoding: try client.roundTrip(Array(#"{"method":"io.roombridge.Curtain.GetState"}"#.utf8) + [0]),
                      as: UTF8.self).contains(#""connection":"standby""#) {
            guard monotonicSeconds() - start < 30 else { throw BenchError("the curtain was never released") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// The write that carried the MoveTo to `target` (an on-demand profile also writes status polls).
    static func moveWrite(_ writes: [(Double, String)], target: Int, profile: CurtainProfile) -> (Double, String)? {
        guard let frame = (try? profile.codec.frames(for: .command(.moveTo(target))))?.first else { return writes.first }
        let hex = frame.map { String(format: "%02x", $0) }.joined()
        return writes.first { $0.1 == hex }
    }

    /// The positions (percent open) a notification of `profile` reports, decoded by the profile's codec.
    static func positions(notified hex: String, by profile: CurtainProfile) -> [Int] {
        let events = (try? profile.codec.decode(notification: bytes(hex: hex), replyingTo: nil)) ?? []
        return events.compactMap {
            switch $0 {
            case .status(let s): s.position
            case .position(let p): p
            default: nil
            }
        }
    }

    static func bytes(hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count - 1, by: 2).compactMap { i in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)
        }
    }
}
