import CurtainProtocol
import Foundation
import Subprocess
import Varlink

/// The curtain figures' peer: scripts/bench-curtain-bleak.py, bleak connecting to the simulated curtain the daemon
/// has left and writing the same bytes; it prints one JSON line of samples.
extension Bench {
    struct BleakCurtainSamples {
        let writeMs: [Double]
        /// The floors of `writeMs`: the same WriteValue by dbus-fast alone (no bleak), and by `busctl call`.
        let rawWriteMs: [Double]
        let busctlWriteMs: [Double]
        let notifyMs: [Double]
        /// Advertisement → BleakScanner detection callback (profiles that advertise their motion).
        let advertMs: [Double]
        /// Connect to the device found before + write → WriteValue, once the link is let go (on-demand profiles).
        let releasedWriteMs: [Double]
        /// Wall-switch press → the first notification or detection callback after it.
        let pullMs: [Double]
    }

    /// bleak's samples; nil when bleak is not installed.
    func bleakCurtainFigures(_ profile: CurtainProfile, sim: BlueZSimProcess, writes: [String], releasedWrites: [String],
                             pulls: Int) async throws -> BleakCurtainSamples? {
        // One client at a time. The daemon exits without Device1.Disconnect, and bluez-sim ends only the discovery
        // and notify sessions of a client that leaves the bus (adapter.c `discovery_disconnect()`, gatt-client.c
        // `notify_client_disconnect()`), not its link: drop the link (`ctl drop-link`, a link loss) so that bleak
        // finds the curtain advertising again.
        if try sim.ctl("status").contains("connected=true") { try sim.ctl("drop-link") }
        let deadline = monotonicSeconds() + 20  // a "does not hang" bound
        while try sim.ctl("status").contains("connected=true"), monotonicSeconds() < deadline { usleep(20_000) }
        progress("curtain \(profile.id): bleak")
        var prelude: [String] = []
        if case .pin(let pin) = profile.login {
            prelude = try profile.codec.frames(for: .login(pin: pin)).flatMap { ["--prelude", curtainHex($0)] }
        }
        let (status, stdout, stderr) = try await runPython(["scripts/bench-curtain-bleak.py",
            "--sim", URL(fileURLWithPath: bin).appendingPathComponent("bluez-sim").path, "--control", sim.control,
            "--address", BlueZSimProcess.deviceAddress, "--write-char", profile.writeCharacteristicUUID,
            "--notify-char", profile.notifyCharacteristicUUID, "--response", profile.writeType.rawValue]
            + prelude + (profile.motionFromAdvertisements ? ["--adverts"] : []) + writes.flatMap { ["--write", $0] }
            + releasedWrites.flatMap { ["--released", $0] } + ["--pulls", String(pulls)],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": sim.busAddress])
        if status == .exited(3) { return nil }  // the script's own check: bleak is missing
        guard status.isSuccess, let line = stdout.split(separator: "\n").last,
              let samples = try? JSONValue(parsing: String(line)) else {
            throw BenchError("scripts/bench-curtain-bleak.py failed for \(profile.id) (\(status)):\n\(stdout)\n\(stderr)")
        }
        func ms(_ key: String) -> [Double] { samples[key]?.arrayValue?.compactMap { (value: JSONValue) in value.doubleValue } ?? [] }
        // Connected, a pull is told by notifications: the first from which the profile's codec can tell a client
        // that the curtain moves (a status saying so, or a position other than the one before the pull; an AM43's
        // first push after a press still carries the old position).
        let pullMs = profile.motionFromAdvertisements ? ms("pullMs")
            : (samples["pullNotifications"]?.arrayValue ?? []).compactMap { (pull: JSONValue) -> Double? in
                let notes = (pull.arrayValue ?? []).compactMap { (n: JSONValue) -> (Double, String)? in
                    guard let pair = n.arrayValue, pair.count == 2, let t = pair[0].doubleValue,
                          let hex = pair[1].stringValue else { return nil }
                    return (t, hex)
                }
                return Self.firstTellingMotion(notes, profile: profile)
            }
        return BleakCurtainSamples(writeMs: ms("writeMs"), rawWriteMs: ms("rawWriteMs"), busctlWriteMs: ms("busctlWriteMs"),
                                   notifyMs: ms("notifyMs"), advertMs: ms("advertMs"),
                                   releasedWriteMs: ms("releasedWriteMs"), pullMs: pullMs)
    }

    /// The time of the first notification (ms after a press, hex) that tells a client the curtain moves.
    static func firstTellingMotion(_ notes: [(Double, String)], profile: CurtainProfile) -> Double? {
        var before: Int?
        for (t, hex) in notes {
            for event in (try? profile.codec.decode(notification: bytes(hex: hex), replyingTo: nil)) ?? [] {
                switch event {
                case .status(let s) where s.motion != .idle: return t
                case .status(let s): before = before ?? s.position
                case .position(let p) where before != nil && p != before: return t
                case .position(let p): before = before ?? p
                default: break
                }
            }
        }
        return nil
    }
}
