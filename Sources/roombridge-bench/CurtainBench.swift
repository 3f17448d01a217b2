import Foundation

/// bluez-sim started for a measurement, with its private bus.
final class BlueZSimProcess {
    let process: Process
    let control: String
    let busAddress: String

    init(bin: String, dir: URL) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        control = dir.appendingPathComponent("bluez.ctl").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: bin).appendingPathComponent("bluez-sim")
        process.arguments = ["run", "--control", control, "--speed", "50"]
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

    /// Times (CLOCK_MONOTONIC) and bytes of the command writes and notifications since the last call.
    func timing() throws -> (writes: [(Double, String)], notifications: [(Double, String)]) {
        let line = try ctl("timing")
        func parse(_ key: String) -> [(Double, String)] {
            guard let part = line.split(separator: " ").first(where: { $0.hasPrefix(key + "=") }) else { return [] }
            return part.dropFirst(key.count + 1).split(separator: ",").compactMap { e in
                let kv = e.split(separator: ":")
                guard kv.count == 2, let t = Double(kv[0]) else { return nil }
                return (t, String(kv[1]))
            }
        }
        return (parse("writes"), parse("notifications"))
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

extension Bench {
    /// The curtain: socket command → WriteValue at the simulator; notification → Watch event;
    /// reconnect time after the device returns.
    func curtainFigures(_ report: inout Report, work: URL) throws {
        let sim = try BlueZSimProcess(bin: bin, dir: work.appendingPathComponent("bluez"))
        defer { sim.stop() }
        let d = try DaemonProcess.start(bin: bin, dir: work.appendingPathComponent("curtain-daemon"),
                                        extraArguments: ["--curtain-enabled"],
                                        environment: ["DBUS_SYSTEM_BUS_ADDRESS": sim.busAddress])
        defer { d.stop() }
        let watch = try WatchConnection(path: d.socketPath)
        _ = try watch.wait(for: "curtain", where: { $0.contains(#""connection":"connected""#) })
        let client = try BlockingClient(path: d.socketPath)
        defer { client.close() }

        // Command → WriteValue arriving at the simulator.
        var commandMs: [Double] = []
        _ = try sim.timing()
        for _ in 0..<commands {
            let t0 = monotonicSeconds()
            _ = try client.roundTrip(Array(#"{"method":"io.roombridge.Curtain.Sync"}"#.utf8) + [0])
            if let write = try sim.timing().writes.first { commandMs.append((write.0 - t0) * 1000) }
        }

        // Notification → Watch event: moves between 30 % and 70 %; each STATUS frame changes the
        // position, so each becomes one curtain event.
        var notifyMs: [Double] = []
        for i in 0..<moves {
            let target = i % 2 == 0 ? 70 : 30
            _ = try sim.timing()
            var received: [(Double, String)] = []
            _ = try client.roundTrip(Array(#"{"method":"io.roombridge.Curtain.MoveTo","parameters":{"position":\#(target)}}"#.utf8) + [0])
            while true {
                let (_, e) = try watch.nextEvent()
                received.append((monotonicSeconds(), e.text))
                if e.contains(#""motion":"idle""#) && e.contains(#""position":\#(target)"#) { break }
            }
            for (sent, hex) in try sim.timing().notifications where hex.hasPrefix("81") && hex.count == 10 {
                let position = Int(hex.dropFirst(4).prefix(2), radix: 16) ?? -1
                if let hit = received.first(where: { $0.0 >= sent && $0.1.contains(#""position":\#(position),"#) }) {
                    notifyMs.append((hit.0 - sent) * 1000)
                }
            }
        }

        // Reconnect after the device returns.
        var reconnectMs: [Double] = []
        for _ in 0..<reconnects {
            try sim.ctl("vanish")
            _ = try watch.wait(for: "curtain", where: { !$0.contains(#""connection":"connected""#) })
            let t0 = monotonicSeconds()
            try sim.ctl("reappear")
            _ = try watch.wait(for: "curtain", where: { $0.contains(#""connection":"connected""#) })
            reconnectMs.append((monotonicSeconds() - t0) * 1000)
        }
        report.add(section: "Curtain: BlueZ simulator on a private D-Bus bus", rows: [
            Row("socket command → WriteValue at the simulator (ms)", Stats(commandMs), peer: nil),
            Row("notification (PropertiesChanged) → Watch event (ms)", Stats(notifyMs), peer: nil),
            Row("device returns → connected again (ms)", Stats(reconnectMs), peer: nil),
        ])
    }
}
