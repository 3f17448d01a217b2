import Foundation

extension Bench {
    /// Presence: a beacon appearing at the simulator → the `entered` event on Watch, and the daemon's CPU while
    /// scanning with `scanBeacons` beacons around (each advertising every 100 ms, DuplicateData: every
    /// advertisement is a PropertiesChanged the scanner reads).
    func presenceFigures(_ report: inout Report, work: URL) throws {
        let sim = try BlueZSimProcess(bin: bin, dir: work.appendingPathComponent("bluez-presence"))
        defer { sim.stop() }
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let d = try DaemonProcess.start(bin: bin, dir: work.appendingPathComponent("presence-daemon"),
                                        extraArguments: ["--presence-regions", "bench=\(uuid)", "--presence-exit-after", "1"],
                                        environment: ["DBUS_SYSTEM_BUS_ADDRESS": sim.busAddress])
        defer { d.stop() }
        let watch = try WatchConnection(path: d.socketPath)
        // Scanning may have started before Watch answered: then the first state says so.
        if !watch.initialState.contains(#""status":"scanning""#) {
            _ = try watch.wait(for: "presence", where: { $0.contains(#""status":"scanning""#) })
        }

        var enterMs: [Double] = []
        for i in 0..<beaconAppearances {
            let address = String(format: "F0:00:00:00:%02X:%02X", i >> 8, i & 0xFF)
            let t0 = monotonicSeconds()
            try sim.ctl("beacon", "add", uuid, "1", "\(i)", "interval=100", "address=\(address)")
            _ = try watch.wait(for: "presence", where: { $0.contains(#""kind":"entered""#) })
            enterMs.append((monotonicSeconds() - t0) * 1000)
            try sim.ctl("beacon", "remove", address)
            _ = try watch.wait(for: "presence", where: { $0.contains(#""kind":"exited""#) })
        }

        let idle = d.cpuPercent(over: 5)
        for i in 0..<scanBeacons {
            try sim.ctl("beacon", "add", uuid, "2", "\(i)", "rssi=-70", "noise=3", "interval=100",
                        "address=" + String(format: "F0:00:00:01:%02X:%02X", i >> 8, i & 0xFF))
        }
        var entered = 0
        while entered < scanBeacons {
            _ = try watch.wait(for: "presence", where: { $0.contains(#""kind":"entered""#) })
            entered += 1
        }
        let scanning = d.cpuPercent(over: idleSeconds)
        report.add(section: "Presence: iBeacons from the BlueZ simulator (100 ms advertising interval)", rows: [
            Row("beacon appears at the simulator → entered event (ms)", Stats(enterMs), peer: nil),
            Row.single("daemon CPU scanning, no beacon (% of a core, 5 s)", idle),
            Row.single("daemon CPU scanning \(scanBeacons) beacons (% of a core, \(Int(idleSeconds)) s)", scanning),
        ])
    }
}
