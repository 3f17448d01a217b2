import CurtainProtocol
import DBus
import Foundation
import Testing
@testable import BlueZSimulator

@Suite struct ControlProtocolTests {
    @Test(arguments: [
        ("press open", BlueZSimulator.Control.press(.open)),
        ("press  stop", .press(.stop)),
        ("drop-link", .dropLink),
        ("advertise-while-connected off", .advertiseWhileConnected(false)),
        ("advertise-while-connected on", .advertiseWhileConnected(true)),
        ("end-notify", .endNotify),
        ("vanish", .vanish),
        ("reappear", .reappear),
        ("restart-bluetoothd", .restartBluetoothd(downtime: .milliseconds(200))),
        ("restart-bluetoothd 50", .restartBluetoothd(downtime: .milliseconds(50))),
        ("power off", .power(false)),
        ("power on", .power(true)),
        ("fail-writes 2", .failWrites(count: 2, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")),
        ("fail-writes 1 org.bluez.Error.InProgress In Progress", .failWrites(count: 1, name: "org.bluez.Error.InProgress", message: "In Progress")),
        ("fail-connects 3", .failConnects(count: 3, name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")),
        ("advance 90.5", .advance(seconds: 90.5)),
        ("status", .status),
    ])
    func parses(line: String, expected: BlueZSimulator.Control) throws {
        #expect(try ControlProtocol.parse(line) == expected)
    }

    @Test func parsesSchedules() throws {
        let c = try ControlProtocol.parse("schedule 07:00 22:15/off")
        #expect(c == .setSchedule(CurtainSchedule(openTime: try CurtainTime(hour: 7, minute: 0), openEnabled: true,
                                                   closeTime: try CurtainTime(hour: 22, minute: 15), closeEnabled: false)))
        #expect(try ControlProtocol.parse("schedule off off") == .setSchedule(.disabled))
    }

    @Test(arguments: ["", "press", "press sideways", "power maybe", "fail-writes x", "advance -1", "schedule 25:00 off",
                      "schedule 07:00", "jump", "advertise-while-connected", "advertise-while-connected maybe"])
    func refuses(line: String) {
        #expect(throws: ControlProtocol.ParseError.self) { try ControlProtocol.parse(line) }
    }
}

@Suite(.serialized) struct ControlSocketTests {
    @Test func roundTripThroughTheSocket() async throws {
        try await SimRig.with { rig in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("bsim-\(UInt32.random(in: 0...UInt32.max)).sock").path
            let server = try ControlServer(path: path, simulator: rig.sim)
            defer { server.stop() }
            let answers = try await Task.detached {
                [try ControlServer.send("press close", to: path), try ControlServer.send("nonsense", to: path)]
            }.value
            #expect(answers[0].hasPrefix("ok "))
            #expect(answers[1].hasPrefix("error unknown command"))
            #expect(await rig.sim.deviceStatus.manual)
        }
    }
}
