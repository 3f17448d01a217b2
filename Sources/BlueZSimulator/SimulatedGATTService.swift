import CurtainProtocol
import DBus
import DBusExport

/// `GattService1` of the curtain and its objects below: the characteristics' D-Bus interface and the CCCD
/// `GattDescriptor1` (gatt-client.c).
extension BlueZSimulator {
    // MARK: GATT

    func exportGATT() throws {
        guard let c = connection, !gattExported else { return }
        try c.export(servicePath, interfaces: [DBusInterface(Self.serviceInterface, properties: [
            DBusProperty("UUID", value: .string(model.profile.serviceUUID)),
            DBusProperty("Device", value: .objectPath(devicePath)),
            DBusProperty("Primary", value: .boolean(true)),
            DBusProperty("Includes", value: .array(elementSignature: "o", [])),
        ])])
        // One characteristic for both when the profile says so (AM43 0xFE51), else a write and a notify one.
        if !model.profile.sharesCharacteristic {
            try c.export(commandPath, interfaces: [characteristicInterface(
                uuid: model.profile.writeCharacteristicUUID, flags: model.writeFlags, notify: false)])
        }
        try c.export(statusPath, interfaces: [characteristicInterface(
            uuid: model.profile.notifyCharacteristicUUID, flags: model.notifyFlags, notify: true)])
        try c.export(cccdPath, interfaces: [DBusInterface(Self.descriptorInterface, methods: [
            DBusMethod("ReadValue", in: [DBusArgument("options", "a{sv}")], out: [DBusArgument("value", "ay")]) {
                [weak self] _ in
                guard let self else { return [] }
                return try await self.readCCCD()
            },
            DBusMethod("WriteValue", in: [DBusArgument("value", "ay"), DBusArgument("options", "a{sv}")]) { _ in
                throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
            },
        ], properties: [
            DBusProperty("UUID", value: .string(CurtainUUID.cccd)),
            DBusProperty("Characteristic", value: .objectPath(statusPath)),
            DBusProperty("Value", value: .bytes([])),
        ])])
        gattExported = true
    }

    func unexportGATT() {
        guard gattExported, let c = connection else { return }
        c.unexport(cccdPath)
        c.unexport(statusPath)
        if statusPath != commandPath { c.unexport(commandPath) }
        c.unexport(servicePath)
        gattExported = false
    }

    func characteristicInterface(uuid: String, flags: [String], notify: Bool) -> DBusInterface {
        let path = notify ? statusPath : commandPath
        var props: [DBusProperty] = [
            DBusProperty("UUID", value: .string(uuid)),
            DBusProperty("Service", value: .objectPath(servicePath)),
            DBusProperty("Value", value: .bytes([]), changeSignal: .none),
            DBusProperty("Flags", value: .stringArray(flags)),
        ]
        if notify {
            props.append(DBusProperty("Notifying", value: .boolean(notifying)))
            props.append(DBusProperty("NotifyAcquired", value: .boolean(false)))
        } else {
            props.append(DBusProperty("WriteAcquired", value: .boolean(false)))
        }
        return DBusInterface(Self.characteristicInterface, methods: [
            DBusMethod("ReadValue", in: [DBusArgument("options", "a{sv}")], out: [DBusArgument("value", "ay")]) {
                [weak self] _ in try await self?.readValue(path) ?? []
            },
            DBusMethod("WriteValue", in: [DBusArgument("value", "ay"), DBusArgument("options", "a{sv}")]) {
                [weak self] call in try await self?.writeValue(path, call) ?? []
            },
            DBusMethod("AcquireWrite", in: [DBusArgument("options", "a{sv}")],
                       out: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]) { _ in
                throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
            },
            DBusMethod("AcquireNotify", in: [DBusArgument("options", "a{sv}")],
                       out: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]) { [weak self] _ in
                try await self?.acquireNotify(path) ?? []
            },
            DBusMethod("StartNotify") { [weak self] call in try await self?.startNotify(path, call) ?? [] },
            DBusMethod("StopNotify") { [weak self] call in try await self?.stopNotify(path, call) ?? [] },
        ], properties: props)
    }

    func readCCCD() throws -> [DBusValue] {
        guard connected else { throw BlueZError.gattNotConnected }
        return [.bytes(notifying || acquiredNotifyFD != nil ? [0x01, 0x00] : [0x00, 0x00])]
    }

    /// Reads and writes work as soon as the link is up and the objects exist — with the GATT cache, before
    /// ServicesResolved: gatt-client.c `btd_gatt_client_connected()` sets `client->gatt` on connection ("Services
}
