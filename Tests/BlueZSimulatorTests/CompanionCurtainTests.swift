import CurtainProtocol
import DBus
import Foundation
import Testing
import TestSupport
@testable import BlueZSimulator

/// Two curtains on one simulated adapter, as bluetoothd serves several devices: one `Device1` per address, each
/// with its own link and GATT objects, discovery and power shared by the adapter (CompanionCurtains.swift).
@Suite(.serialized) struct CompanionCurtainTests {
    static let second: DBusObjectPath = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_22"
    static let secondCommand: DBusObjectPath = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_22/service000a/char000b"

    /// A rig whose simulator has a second roombridge curtain at C4:7C:8D:6A:3E:22, 50% open.
    static func withPair(known: Bool = true, _ body: (SimRig, BlueZSimulator) async throws -> Void) async throws {
        try await SimRig.with({ $0.deviceKnownAtStart = known }, prepare: { sim in
            var more = await sim.configuration
            more.deviceAddress = "C4:7C:8D:6A:3E:22"
            more.deviceName = "Curtain-3E22"
            more.initialPosition = 50
            _ = await sim.addCurtain(more)
        }) { rig in
            try await body(rig, try #require(await rig.sim.curtain(at: "C4:7C:8D:6A:3E:22")))
        }
    }

    func connected(_ rig: SimRig, _ path: DBusObjectPath) async throws -> Bool {
        try await rig.bus.getProperty(destination: "org.bluez", path: path, interface: "org.bluez.Device1",
                                      name: "Connected") == .boolean(true)
    }

    @Test func discoveryReportsBothAndEachHasItsOwnLink() async throws {
        try await Self.withPair(known: false) { rig, companion in
            try await rig.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                               [.stringVariantDictionary(["UUIDs": .stringArray([CurtainUUID.service])])])
            try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("both curtains reported") {
                let objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
                return objects[device] != nil && objects[Self.second] != nil
            }
            let objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(objects[Self.second]?["org.bluez.Device1"]?["Address"] == .string("C4:7C:8D:6A:3E:22"))
            #expect(objects[Self.second]?["org.bluez.Device1"]?["Adapter"] == .objectPath(adapter))
            try await rig.call(adapter, "org.bluez.Adapter1", "StopDiscovery")

            // Connecting the second curtain leaves the first alone; a write reaches only the second's motor.
            try await rig.call(Self.second, "org.bluez.Device1", "Connect")
            try await eventually("the second curtain's services resolved") {
                try await rig.bus.getProperty(destination: "org.bluez", path: Self.second, interface: "org.bluez.Device1",
                                              name: "ServicesResolved") == .boolean(true)
            }
            #expect(try await !connected(rig, device))
            #expect(try await rig.bus.getManagedObjects(destination: "org.bluez")[statusChar] == nil)
            try await rig.call(Self.secondCommand, "org.bluez.GattCharacteristic1", "WriteValue",
                               [.bytes(try CurtainCommand.moveTo(80).encode()), .stringVariantDictionary(["type": .string("request")])])
            #expect(await companion.writeCount == 1)
            #expect(await rig.sim.writeCount == 0)
            // And the first connects on its own while the second stays up.
            try await rig.connectAndResolve()
            #expect(try await connected(rig, Self.second))
        }
    }

    @Test func powerOffAndARestartTakeEveryLink() async throws {
        try await Self.withPair { rig, companion in
            try await rig.connectAndResolve()
            try await rig.call(Self.second, "org.bluez.Device1", "Connect")
            try await eventually("both connected") { let (a, b) = (await rig.sim.isConnected, await companion.isConnected); return a && b }
            try await rig.sim.handle(.power(false))
            try await eventually("both links down") { let (a, b) = (await rig.sim.isConnected, await companion.isConnected); return !a && !b }
            try await rig.sim.handle(.power(true))

            try await rig.connectAndResolve()
            try await rig.call(Self.second, "org.bluez.Device1", "Connect")
            try await eventually("both connected again") { let (a, b) = (await rig.sim.isConnected, await companion.isConnected); return a && b }
            try await rig.sim.handle(.restartBluetoothd(downtime: .milliseconds(20)))
            try await eventually("org.bluez back with both devices") {
                let objects = try? await rig.bus.getManagedObjects(destination: "org.bluez")
                return objects?[device] != nil && objects?[Self.second] != nil
            }
            #expect(await !companion.isConnected)
            #expect(try await !connected(rig, Self.second))
        }
    }

    @Test func controlRequestsNameTheirCurtain() async throws {
        try await Self.withPair { rig, companion in
            _ = try await rig.sim.handle(.vanish, device: "c4:7c:8d:6a:3e:22")
            #expect(await companion.statusLine.contains("visible=false"))
            #expect(await rig.sim.statusLine.contains("visible=true"))
            await #expect(throws: ControlCommandError.self) { try await rig.sim.handle(.status, device: "C4:7C:8D:6A:3E:99") }
        }
    }
}
