import CurtainProtocol
import DBus
import Foundation
import Testing
import TestSupport
@testable import BlueZSimulator

/// Runs Debian's `bluetoothctl` (an independent BlueZ client) against the simulator on a private bus.
struct Bluetoothctl {
    static let path = "/usr/bin/bluetoothctl"
    static var installed: Bool { FileManager.default.isExecutableFile(atPath: path) }

    let busAddress: String

    private func process(_ args: [String], output: URL) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.path)
        p.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress
        env["TERM"] = "dumb"
        p.environment = env
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        p.standardOutput = handle
        p.standardError = handle
        return p
    }

    private static func waitForExit(_ p: Process) async {
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            p.terminationHandler = { _ in cont.resume() }
            if !p.isRunning { p.terminationHandler = nil; cont.resume() }
        }
    }

    /// Runs a non-interactive command, returns its output.
    func run(_ args: [String]) async throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("btctl-\(UInt32.random(in: 0...UInt32.max)).out")
        defer { try? FileManager.default.removeItem(at: out) }
        let p = try process(args, output: out)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        await Self.waitForExit(p)
        return (try? String(contentsOf: out, encoding: .utf8)) ?? ""
    }

    /// Runs an interactive session: each line is sent once `ready` text appears in the output so far.
    func interactive(_ steps: [(waitFor: String, send: String)]) async throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("btctl-\(UInt32.random(in: 0...UInt32.max)).out")
        defer { try? FileManager.default.removeItem(at: out) }
        let p = try process([], output: out)
        let input = Pipe()
        p.standardInput = input
        try p.run()
        for step in steps {
            try await eventually("bluetoothctl printing \"\(step.waitFor)\"", timeout: .seconds(10)) {
                ((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains(step.waitFor)
            }
            input.fileHandleForWriting.write(Data((step.send + "\n").utf8))
        }
        input.fileHandleForWriting.write(Data("quit\n".utf8))
        try? input.fileHandleForWriting.close()
        await Self.waitForExit(p)
        return (try? String(contentsOf: out, encoding: .utf8)) ?? ""
    }
}

@Suite(.serialized, .enabled(if: Bluetoothctl.installed, "needs Debian's bluez package (bluetoothctl)"))
struct BluetoothctlTests {
    @Test func listsControllerAndCurtain() async throws {
        try await SimRig.with { rig in
            let ctl = Bluetoothctl(busAddress: rig.daemon.address)
            #expect(try await ctl.run(["list"]).contains("Controller 00:1A:7D:DA:71:13 roombridge-sim [default]"))
            let show = try await ctl.run(["show"])
            #expect(show.contains("Powered: yes"))
            #expect(try await ctl.run(["devices"]).contains("Device C4:7C:8D:6A:3E:21 Curtain-Living"))
            let info = try await ctl.run(["info", "C4:7C:8D:6A:3E:21"])
            #expect(info.contains("Name: Curtain-Living"))
            #expect(info.contains("Connected: no"))
            #expect(info.contains("(\(CurtainUUID.service))"))
        }
    }

    @Test func connectsAndListsGattAttributes() async throws {
        try await SimRig.with { rig in
            let ctl = Bluetoothctl(busAddress: rig.daemon.address)
            let connect = try await ctl.run(["--timeout", "2", "connect", "C4:7C:8D:6A:3E:21"])
            #expect(connect.contains("Connection successful"))
            #expect(await rig.sim.isConnected)
            let session = try await ctl.interactive([
                (waitFor: "Curtain-Living", send: "menu gatt"),
                (waitFor: "Menu gatt", send: "list-attributes C4:7C:8D:6A:3E:21"),
                (waitFor: "desc000f", send: "select-attribute \(CurtainUUID.status)"),
                (waitFor: "char000d]", send: "read"),
                (waitFor: "81 00 00 00 00", send: "select-attribute \(CurtainUUID.command)"),
                (waitFor: "char000b]", send: "write 0x01"),
                (waitFor: "Attempting to write", send: "back"),
            ])
            #expect(session.contains("/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21/service000a/char000b"))
            #expect(session.contains(CurtainUUID.command))
            #expect(session.contains("/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21/service000a/char000d/desc000f"))
            #expect(session.contains("Client Characteristic Configuration"))
            #expect(session.contains("81 00 00 00 00"))
            #expect(await rig.sim.deviceStatus.motion == .opening)
        }
    }
}
