import DBusTesting
import DBusTestSupport
import DBusExport
import Glibc
import Testing
@testable import DBus

/// bluetoothctl (BlueZ's own libdbus-based client) reads a minimal org.bluez we export:
/// our ObjectManager, Properties and Introspectable must be what BlueZ's gdbus client expects.
@Suite(.serialized) struct BluetoothctlTests {
    @Test func bluetoothctlListsOurAdapter() async throws {
        let daemon = try await DBusTestDaemon.start()
        let bluez = try await DBusConnection.open(.address(daemon.address))
        bluez.addObjectManager(at: "/")
        try bluez.export("/org/bluez/hci0", interfaces: [DBusInterface("org.bluez.Adapter1", properties: [
            DBusProperty("Address", value: .string("00:11:22:33:44:55")),
            DBusProperty("AddressType", value: .string("public")),
            DBusProperty("Name", value: .string("roombridge")),
            DBusProperty("Alias", value: .string("roombridge"), access: .readwrite),
            DBusProperty("Class", value: .uint32(0)),
            DBusProperty("Powered", value: .boolean(true), access: .readwrite),
            DBusProperty("Discoverable", value: .boolean(false), access: .readwrite),
            DBusProperty("Pairable", value: .boolean(false), access: .readwrite),
            DBusProperty("Discovering", value: .boolean(false)),
            DBusProperty("UUIDs", value: .stringArray([])),
        ])])
        try bluez.export("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", interfaces: [DBusInterface("org.bluez.Device1", properties: [
            DBusProperty("Address", value: .string("AA:BB:CC:DD:EE:FF")),
            DBusProperty("AddressType", value: .string("random")),
            DBusProperty("Name", value: .string("Curtain")),
            DBusProperty("Alias", value: .string("Curtain"), access: .readwrite),
            DBusProperty("Paired", value: .boolean(false)),
            DBusProperty("Connected", value: .boolean(false)),
            DBusProperty("Adapter", value: .objectPath("/org/bluez/hci0")),
            DBusProperty("RSSI", value: .int16(-60)),
        ])])
        try await bluez.requestName("org.bluez")
        let env = ["DBUS_SYSTEM_BUS_ADDRESS": daemon.address, "PATH": "/usr/bin:/bin"]
        let list = try await runTool("/usr/bin/bluetoothctl", ["--timeout", "2", "list"], environment: env)
        #expect(list.stdout.contains("Controller 00:11:22:33:44:55 roombridge [default]"), "\(list.stdout) \(list.stderr)")
        let devices = try await runTool("/usr/bin/bluetoothctl", ["--timeout", "2", "devices"], environment: env)
        #expect(devices.stdout.contains("Device AA:BB:CC:DD:EE:FF Curtain"), "\(devices.stdout) \(devices.stderr)")
        await bluez.close()
        await daemon.stop()
    }
}
