import Foundation
import Testing
@testable import Diagnostics
@testable import RoomBridgeConfig

@Suite struct DoctorTests {
    func tree(_ files: [String: String]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rb-doctor-\(UUID().uuidString)").path
        for (path, content) in files {
            let full = root + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try content.write(toFile: full, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return root
    }

    func config(_ readers: [String]) throws -> DaemonConfig {
        var c = DaemonConfig()
        try c.apply(toml: "[nfc]\nreaders = [" + readers.map { "\"\($0)\"" }.joined(separator: ", ") + "]\n", file: "t")
        return c
    }

    @Test func badConfigIsAFailureWithAFix() async throws {
        let root = try tree(["/bad.toml": "[socket]\nmax_connections = \"x\"\n"])
        let findings = await Doctor(configPath: root + "/bad.toml", socketPath: root + "/none.sock").run()
        let c = try #require(findings.first { $0.area == "config" })
        #expect(c.status == .failed)
        #expect(c.detail.contains(":2: socket.max_connections"))
        #expect(c.fix != nil)
    }

    @Test func missingDaemonSaysHowToStartIt() async throws {
        let root = try tree(["/ok.toml": ""])
        let findings = await Doctor(configPath: root + "/ok.toml", socketPath: root + "/none.sock").run()
        let s = try #require(findings.first { $0.area == "socket" })
        #expect(s.status == .failed)
        #expect(s.fix?.contains("systemctl start roombridged") == true)
    }

    @Test func missingReaderDevice() throws {
        let findings = ReaderChecks(host: HostFacts()).run(config: try config(["front=pn532_uart:/dev/nfc/does-not-exist"]))
        let f = try #require(findings.first { $0.check.hasPrefix("front:") })
        #expect(f.status == .failed)
        #expect(f.fix?.contains("udev") == true)
    }

    @Test func usableCharacterDevice() throws {
        // /dev/null: a character device everybody may read and write.
        let findings = ReaderChecks(host: HostFacts(serviceUser: "nobody")).run(config: try config(["front=pn532_uart:/dev/null"]))
        let access = try #require(findings.first { $0.check.contains("can use the device") })
        #expect(access.status == .ok)
        #expect(findings.contains { $0.check.contains("ModemManager") })
    }

    @Test func regularFileIsNotADevice() throws {
        let root = try tree(["/dev/ttyFAKE": "x"])
        let findings = ReaderChecks(host: HostFacts(root: root)).run(config: try config(["pn532_uart:/dev/ttyFAKE"]))
        #expect(findings.contains { $0.status == .failed && $0.detail.contains("not a character device") })
    }

    @Test func kernelDriverBoundToAReader() throws {
        let root = try tree(["/sys/bus/usb/drivers/pn533_usb/1-1:1.0/x": "", "/sys/module/pn533_usb/x": ""])
        let f = ReaderChecks(host: HostFacts(root: root)).kernelDriverChecks()
        #expect(f.first?.status == .failed)
        #expect(f.first?.fix?.contains("modprobe -r pn533_usb") == true)
        let clean = ReaderChecks(host: HostFacts(root: try tree([:]))).kernelDriverChecks()
        #expect(clean.first?.status == .ok)
    }

    @Test func dbusPolicy() throws {
        let with = BluetoothChecks(host: HostFacts(root: try tree(["/etc/dbus-1/system.d/roombridge.conf": "<busconfig/>"]))).run()
        #expect(with.first?.status == .ok)
        let without = BluetoothChecks(host: HostFacts(root: try tree([:]))).run()
        #expect(without.first?.status == .failed)
        // Issue 32: with no curtain and no presence regions the daemon never talks to bluetoothd.
        var quiet = DaemonConfig()
        try quiet.set(.curtainEnabled, to: false)
        let skipped = BluetoothChecks(host: HostFacts(root: try tree([:]))).run(config: quiet)
        #expect(skipped.first?.status == .skipped && skipped.first?.detail.contains("not needed") == true)
        var presence = quiet
        try presence.set(.presenceRegions, to: ["aiko=F7826DA6-4FA2-4E98-8024-BC5B71E0893E/1"])
        #expect(BluetoothChecks(host: HostFacts(root: try tree([:]))).run(config: presence).first?.status == .failed)
    }

    @Test func readerEntriesSplit() {
        #expect(ReaderEntry(parsing: "front=pn532_uart:/dev/ttyUSB0") == ReaderEntry(name: "front", connstring: "pn532_uart:/dev/ttyUSB0"))
        #expect(ReaderEntry(parsing: "pn53x_usb:") == ReaderEntry(name: "pn53x_usb", connstring: "pn53x_usb:"))
        #expect(ReaderEntry.all(in: DaemonConfig()) == [ReaderEntry(name: "reader", connstring: nil)])
    }

    @Test func renderShowsFixes() {
        let text = Doctor.render([Finding("reader", "x", .failed, "broken", fix: "do this"), Finding("socket", "y", .ok, "fine")])
        #expect(text.contains("FAIL  x — broken"))
        #expect(text.contains("fix: do this"))
        #expect(text.hasSuffix("1 problem(s), 0 warning(s)."))
    }
}
