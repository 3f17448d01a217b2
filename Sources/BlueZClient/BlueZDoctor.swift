import CurtainProtocol
import DBus

/// One result of the Bluetooth checks of `roombridgectl doctor` (maps 1:1 onto `Diagnostics.Finding`
/// with area "bluetooth").
public struct BluetoothCheck: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable { case ok, warning, failed, skipped }
    public var check: String
    public var status: Status
    public var detail: String
    /// What to do about it (nil when ok).
    public var fix: String?

    public init(_ check: String, _ status: Status, _ detail: String, fix: String? = nil) {
        self.check = check
        self.status = status
        self.detail = detail
        self.fix = fix
    }
}

/// The BlueZ side of `roombridgectl doctor`.
public enum BluetoothDiagnostics {
    /// BlueZ-level checks over D-Bus on `bus` (the system bus in production): bluetoothd present, the
    /// adapter (configured or first) present and powered, the configured curtain known to BlueZ.
    public static func blueZChecks(bus: DBusConnection, adapterName: String?, deviceAddress: String?) async -> [BluetoothCheck] {
        var out: [BluetoothCheck] = []
        guard (try? await bus.nameOwner("org.bluez")) != nil else {
            return [BluetoothCheck("bluetoothd (org.bluez)", .failed, "not on the system bus",
                                   fix: "sudo systemctl enable --now bluetooth")]
        }
        out.append(BluetoothCheck("bluetoothd (org.bluez)", .ok, "running"))
        let objects: [DBusObjectPath: [String: [String: DBusValue]]]
        do {
            objects = try await bus.getManagedObjects(destination: "org.bluez", timeout: .seconds(5))
        } catch {
            out.append(BluetoothCheck("BlueZ objects", .failed, "GetManagedObjects failed: \(error)",
                                      fix: "check the D-Bus policy for the service user (dbus/roombridge.conf)"))
            return out
        }
        let adapters = objects.filter { $0.value["org.bluez.Adapter1"] != nil }.keys.sorted()
        let adapter = adapterName.map { name in adapters.first { $0.rawValue == "/org/bluez/" + name } }
            ?? adapters.first
        guard let adapter else {
            out.append(BluetoothCheck("adapter", .failed,
                                      adapterName.map { "\($0) not found (BlueZ has: \(adapters.map(\.rawValue)))" }
                                          ?? "BlueZ exports no adapter",
                                      fix: "plug in an adapter or fix [curtain] adapter in the config"))
            return out
        }
        let props = objects[adapter]?["org.bluez.Adapter1"] ?? [:]
        let address = (try? props["Address"]?.string()) ?? "?"
        if props["Powered"] == .boolean(true) {
            out.append(BluetoothCheck("adapter \(adapter.rawValue)", .ok, "\(address) powered"))
        } else {
            out.append(BluetoothCheck("adapter \(adapter.rawValue)", .failed, "\(address) powered off",
                                      fix: "bluetoothctl power on; set AutoEnable=true in /etc/bluetooth/main.conf"))
        }
        if let deviceAddress {
            let path = DBusObjectPath(stringLiteral: adapter.rawValue + "/dev_"
                                      + deviceAddress.uppercased().split(separator: ":").joined(separator: "_"))
            if let dev = objects[path]?["org.bluez.Device1"] {
                let connected = dev["Connected"] == .boolean(true)
                let uuids = (try? dev["UUIDs"]?.stringArray()) ?? []
                let curtain = uuids.contains { CurtainUUID.matches($0, CurtainUUID.service) }
                out.append(BluetoothCheck("curtain \(deviceAddress)", curtain ? .ok : .warning,
                                          (connected ? "known, connected" : "known, not connected")
                                              + (curtain ? "" : "; does not advertise the curtain service"),
                                          fix: curtain ? nil : "check the configured address"))
            } else {
                out.append(BluetoothCheck("curtain \(deviceAddress)", .warning, "not known to BlueZ yet",
                                          fix: "power the curtain and keep it in range; the daemon searches for it"))
            }
        }
        return out
    }
}
