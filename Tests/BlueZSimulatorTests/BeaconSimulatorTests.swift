import BlueZSimulator
import DBus
import Foundation
import Presence
import Testing
import TestSupport

private let beaconAddress = "F0:BE:AC:00:00:42"
private let beaconDevice: DBusObjectPath = "/org/bluez/hci0/dev_F0_BE_AC_00_00_42"
private let beaconUUID = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
private let frame = IBeaconFrame(beacon: BeaconID(uuid: beaconUUID, major: 0x1234, minor: 0x5678), txPower: -59)

/// Collects the PropertiesChanged signals of the beacon's Device1.
private actor Changes {
    var all: [[String: DBusValue]] = []
    func add(_ c: [String: DBusValue]) { all.append(c) }
    func count(of name: String) -> Int { all.filter { $0[name] != nil }.count }
}

private func watchChanges(_ rig: SimRig) async throws -> (Changes, Task<Void, Never>) {
    let changes = Changes()
    let stream = try await rig.bus.propertiesChanged(sender: "org.bluez", path: beaconDevice, interface: "org.bluez.Device1")
    let task = Task { for await c in stream { await changes.add(c.changed) } }
    return (changes, task)
}

/// How many advertisements bluetoothd heard so far (`beacon list`).
private func heard(_ rig: SimRig) async throws -> Int {
    let line = try await rig.sim.handle(.beacon(.list))
    return Int(line.split(separator: " ").first { $0.hasPrefix("heard=") }?.dropFirst(6) ?? "") ?? 0
}

private func addBeacon(_ rig: SimRig, rssi: Int = -65) async throws {
    try await rig.sim.handle(.beacon(.add(address: beaconAddress, frame: frame, rssi: rssi, noise: 0,
                                          interval: .milliseconds(20))))
}

private func startDiscovery(_ rig: SimRig, filter: [String: DBusValue]?) async throws {
    if let filter { try await rig.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantDictionary(filter)]) }
    try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
}

private func exported(_ rig: SimRig) async throws -> [String: DBusValue]? {
    try await rig.bus.getManagedObjects(destination: "org.bluez")[beaconDevice]?["org.bluez.Device1"]
}

@Suite struct BeaconSimulatorTests {
    /// adapter.c `btd_adapter_device_found()` only runs while discovering; the new Device1 carries the iBeacon frame
    /// under Apple's company ID and the RSSI (InterfacesAdded with every property set for that advertisement).
    @Test func aBeaconIsADevice1WithAppleManufacturerDataOnlyWhileDiscovering() async throws {
        try await SimRig.with { rig in
            try await addBeacon(rig)
            #expect(try await exported(rig) == nil)
            try await startDiscovery(rig, filter: nil)
            let props = try await eventually("the beacon's Device1") { try await exported(rig) }
            #expect(props["RSSI"] == .int16(-65))
            #expect(props["AddressType"] == .string("random"))
            guard case .dictionary(_, _, let entries)? = props["ManufacturerData"], entries.count == 1,
                  case .uint16(0x004C) = entries[0].key else {
                Issue.record("no Apple manufacturer data: \(String(describing: props["ManufacturerData"]))")
                return
            }
            #expect(try entries[0].value.unwrappingVariants.bytes() == frame.manufacturerData)
        }
    }

    /// shared/ad.c `bt_ad_add_manufacturer_data()` reports nothing for identical data; with DuplicateData
    /// (device.c `device_set_manufacturer_data()` clears first) every advertisement is a PropertiesChanged.
    @Test(arguments: [false, true]) func repeatedDataIsReportedOnlyWithDuplicateData(duplicate: Bool) async throws {
        try await SimRig.with { rig in
            let (changes, task) = try await watchChanges(rig)
            defer { task.cancel() }
            try await addBeacon(rig)
            try await startDiscovery(rig, filter: ["Transport": .string("le"), "DuplicateData": .boolean(duplicate)])
            _ = try await eventually("the beacon's Device1") { try await exported(rig) }
            let before = try await heard(rig)
            try await eventually("ten more advertisements heard") { try await heard(rig) >= before + 10 }
            if duplicate {
                try await eventually("a ManufacturerData change per advertisement") {
                    await changes.count(of: "ManufacturerData") >= 9
                }
            } else {
                #expect(await changes.count(of: "ManufacturerData") == 0)
            }
        }
    }

    /// device.c `device_set_rssi_with_delta()`: without an RSSI or Pathloss filter a change is reported only from 8 dBm;
    /// with one (adapter.c `discovery_filter_has_proximity()`) every change is.
    @Test func rssiChangesFollowTheEightDBmRuleUnlessAFilterAsksForProximity() async throws {
        try await SimRig.with { rig in
            let (changes, task) = try await watchChanges(rig)
            defer { task.cancel() }
            try await addBeacon(rig, rssi: -70)
            try await startDiscovery(rig, filter: ["Transport": .string("le")])
            _ = try await eventually("the beacon's Device1") { try await exported(rig) }
            try await rig.sim.handle(.beacon(.move(address: beaconAddress, rssi: -66)))
            let before = try await heard(rig)
            try await eventually("advertisements at -66 heard") { try await heard(rig) >= before + 5 }
            #expect(await changes.count(of: "RSSI") == 0)
            try await rig.sim.handle(.beacon(.move(address: beaconAddress, rssi: -58)))
            try await eventually("a change of 12 dBm reported") { await changes.all.contains { $0["RSSI"] == .int16(-58) } }

            try await rig.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                               [.stringVariantDictionary(["Transport": .string("le"), "RSSI": .int16(-127)])])
            try await rig.sim.handle(.beacon(.move(address: beaconAddress, rssi: -57)))
            try await eventually("a change of 1 dBm reported") { await changes.all.contains { $0["RSSI"] == .int16(-57) } }
        }
    }

    /// adapter.c `discovery_cleanup()` removes temporary, non-connectable devices when the last session ends; device.c
    /// `device_disappeared()` removes one unseen for TemporaryTimeout while discovery goes on.
    @Test func beaconDevicesGoWhenDiscoveryEndsOrWhenUnseenForTheTemporaryTimeout() async throws {
        try await SimRig.with { rig in
            try await addBeacon(rig)
            try await startDiscovery(rig, filter: nil)
            _ = try await eventually("the beacon's Device1") { try await exported(rig) }
            try await rig.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
            try await eventually("removed when discovery ended") { try await exported(rig) == nil }

            try await rig.sim.handle(.beacon(.temporaryTimeout(.milliseconds(300))))
            try await startDiscovery(rig, filter: nil)
            _ = try await eventually("the beacon's Device1 again") { try await exported(rig) }
            try await rig.sim.handle(.beacon(.vanish(address: beaconAddress)))
            try await eventually("removed after the temporary timeout") { try await exported(rig) == nil }
        }
    }

    /// A phone sends other Apple frames from the same address: bluetoothd keeps one value per company, so 0x004C
    /// alternates between the iBeacon frame and the other one.
    @Test func anotherAppleFrameReplacesTheIBeaconFrameUnderTheSameKey() async throws {
        try await SimRig.with { rig in
            let (changes, task) = try await watchChanges(rig)
            defer { task.cancel() }
            try await addBeacon(rig)
            let other: [UInt8] = [0x10, 0x05, 0x03, 0x1C, 0x0B, 0x6E, 0x0F]
            try await rig.sim.handle(.beacon(.otherAppleFrame(address: beaconAddress, bytes: other)))
            try await startDiscovery(rig, filter: nil)
            try await eventually("both frames seen under 0x004C") {
                let values = await changes.all.compactMap { c -> [UInt8]? in
                    guard case .dictionary(_, _, let e)? = c["ManufacturerData"]?.unwrappingVariants, e.count == 1 else { return nil }
                    return try? e[0].value.unwrappingVariants.bytes()
                }
                return values.contains(other) && values.contains(frame.manufacturerData)
            }
        }
    }

    @Test func beaconControlLinesParse() throws {
        let add = try ControlProtocol.parse("beacon add \(beaconUUID.uuidString) 4660 22136 tx=-61 rssi=-70 interval=100 address=\(beaconAddress)")
        #expect(add == .beacon(.add(address: beaconAddress, frame: IBeaconFrame(
            beacon: BeaconID(uuid: beaconUUID, major: 4660, minor: 22136), txPower: -61), rssi: -70, noise: 0,
            interval: .milliseconds(100))))
        #expect(try ControlProtocol.parse("beacon rssi \(beaconAddress) -50") == .beacon(.move(address: beaconAddress, rssi: -50)))
        #expect(try ControlProtocol.parse("beacon apple-frame \(beaconAddress) 1005") == .beacon(.otherAppleFrame(
            address: beaconAddress, bytes: [0x10, 0x05])))
        #expect(throws: ControlProtocol.ParseError.self) { try ControlProtocol.parse("beacon add not-a-uuid 1 2") }
        #expect(throws: ControlProtocol.ParseError.self) { try ControlProtocol.parse("beacon add \(beaconUUID.uuidString) 70000 2") }
        #expect(throws: ControlProtocol.ParseError.self) { try ControlProtocol.parse("beacon rssi") }
    }
}
