import CurtainProtocol
import Foundation
import Subprocess
import Varlink

/// The curtain figures' peer: scripts/bench-curtain-bleak.py, bleak connecting to the simulated curtain the daemon
/// has left and writing the same bytes; it prints one JSON line of samples.
extension Bench {
    struct BleakCurtainSamples {
        let writeMs: [Double]
        let notifyMs: [Double]
        /// Advertisement → BleakScanner detection callback (profiles that advertise their motion).
        let advertMs: [Double]
    }

    /// bleak's samples; nil when bleak is not installed.
    func bleakCurtainFigures(_ profile: CurtainProfile, sim: BlueZSimProcess, writes: [String]) async throws -> BleakCurtainSamples? {
        // One client at a time. The daemon exits without Device1.Disconnect, and bluez-sim ends only the discovery
        // and notify sessions of a client that leaves the bus (adapter.c `discovery_disconnect()`, gatt-client.c
        // `notify_client_disconnect()`), not its link: drop the link (`ctl drop-link`, a link loss) so that bleak
        // finds the curtain advertising again.
        if try sim.ctl("status").contains("connected=true") { try sim.ctl("drop-link") }
        let deadline = monotonicSeconds() + 20  // a "does not hang" bound
        while try sim.ctl("status").contains("connected=true"), monotonicSeconds() < deadline { usleep(20_000) }
        var prelude: [String] = []
        if case .pin(let pin) = profile.login {
            prelude = try profile.codec.frames(for: .login(pin: pin)).flatMap { ["--prelude", curtainHex($0)] }
        }
        let (status, stdout, stderr) = try await runPython(["scripts/bench-curtain-bleak.py",
            "--sim", URL(fileURLWithPath: bin).appendingPathComponent("bluez-sim").path, "--control", sim.control,
            "--address", BlueZSimProcess.deviceAddress, "--write-char", profile.writeCharacteristicUUID,
            "--notify-char", profile.notifyCharacteristicUUID, "--response", profile.writeType.rawValue]
            + prelude + (profile.motionFromAdvertisements ? ["--adverts"] : []) + writes.flatMap { ["--write", $0] },
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": sim.busAddress])
        if status == .exited(3) { return nil }  // the script's own check: bleak is missing
        guard status.isSuccess, let line = stdout.split(separator: "\n").last,
              let samples = try? JSONValue(parsing: String(line)) else {
            throw BenchError("scripts/bench-curtain-bleak.py failed for \(profile.id) (\(status)):\n\(stdout)\n\(stderr)")
        }
        func ms(_ key: String) -> [Double] { samples[key]?.arrayValue?.compactMap { (value: JSONValue) in value.doubleValue } ?? [] }
        return BleakCurtainSamples(writeMs: ms("writeMs"), notifyMs: ms("notifyMs"), advertMs: ms("advertMs"))
    }
}
