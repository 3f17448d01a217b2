import CurtainProtocol
import DBus
import DBusExport

/// `Device1` of the simulated curtain: its properties, its advertisement, Connect/Disconnect and link loss
/// (device.c).
extension BlueZSimulator {
    // MARK: Device

    func exportDevice() throws {
        guard let c = connection, !deviceExported else { return }
        let cfg = configuration
        var properties = [
            DBusProperty("Address", value: .string(cfg.deviceAddress)),
            DBusProperty("AddressType", value: .string("public")),
            DBusProperty("Name", value: .string(cfg.deviceName)),
            DBusProperty("Alias", value: .string(cfg.deviceName), access: .readwrite),
            DBusProperty("Paired", value: .boolean(false)),
            DBusProperty("Bonded", value: .boolean(false)),
            DBusProperty("Trusted", value: .boolean(false), access: .readwrite),
            DBusProperty("Blocked", value: .boolean(false), access: .readwrite),
            DBusProperty("LegacyPairing", value: .boolean(false)),
            reportedRSSI.map { DBusProperty("RSSI", value: .int16($0)) } ?? DBusProperty("RSSI", signature: "n"),
            // Connected and ServicesResolved: signals emitted by hand, one PropertiesChanged per bluetoothd batch.
            DBusProperty("Connected", value: .boolean(connected), changeSignal: .none),
            DBusProperty("UUIDs", value: .stringArray([model.profile.serviceUUID])),
            DBusProperty("Adapter", value: .objectPath(adapterPath)),
            DBusProperty("ServicesResolved", value: .boolean(servicesResolved), changeSignal: .none),
            DBusProperty("AdvertisingFlags", value: .bytes([0x06])),
            DBusProperty("WakeAllowed", value: .boolean(false), access: .readwrite),
        ]
        // BlueZ has these properties only when the device advertised such data (device.c
        // `dev_property_manufacturer_data_exist`, `dev_property_service_data_exist`).
        if !model.advertisement.serviceData.isEmpty {
            properties.append(DBusProperty("ServiceData", value: serviceDataValue))
        }
        if !model.advertisement.manufacturerData.isEmpty {
            properties.append(DBusProperty("ManufacturerData", value: manufacturerDataValue))
        }
        try c.export(devicePath, interfaces: [DBusInterface(Self.deviceInterface, methods: [
            DBusMethod("Connect") { [weak self] call in try await self?.connect(call) ?? [] },
            DBusMethod("Disconnect") { [weak self] _ in await self?.disconnectRequested() ?? [] },
            DBusMethod("ConnectProfile", in: [DBusArgument("UUID", "s")]) { _ in
                throw DBusError(name: "org.bluez.Error.NotAvailable", message: "br-connection-profile-unavailable")
            },
            DBusMethod("DisconnectProfile", in: [DBusArgument("UUID", "s")]) { _ in
                throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
            },
            DBusMethod("Pair") { _ in
                throw DBusError(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
            },
            DBusMethod("CancelPairing") { _ in
                throw DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
            },
        ], properties: properties)])
        deviceExported = true
    }

    func unexportDevice() {
        guard deviceExported else { return }
        unexportGATT()
        connection?.unexport(devicePath)
        deviceExported = false
    }

    func setDeviceProperty(_ name: String, _ value: DBusValue?) {
        guard deviceExported else { return }
        try? connection?.updateProperty(name, interface: Self.deviceInterface, path: devicePath, value: value)
    }

    /// Sets Device1 link properties and emits them in ONE PropertiesChanged, in this order: bluetoothd's gdbus
    /// queues property changes and sends each object's pending ones together (gdbus/object.c
    /// `g_dbus_emit_property_changed_full()` → `process_property_changes()`, in the order they were changed).
    func setLinkProperties(_ changes: [(String, Bool)]) {
        guard deviceExported, let c = connection else { return }
        for (name, value) in changes {
            try? c.updateProperty(name, interface: Self.deviceInterface, path: devicePath, value: .boolean(value))
        }
        try? c.emitSignal(path: devicePath, interface: Self.propertiesInterface, member: "PropertiesChanged",
                          arguments: [.string(Self.deviceInterface),
                                      .dictionary(keySignature: "s", valueSignature: "v",
                                                  changes.map { DBusDictEntry(.string($0.0), .variant(.boolean($0.1))) }),
                                      .stringArray([])])
    }

    /// Device1.Connect with BlueZ's ordering: Connected=true, the reply, then (later) the GATT objects and
    /// ServicesResolved=true (device.c `att_connect_cb` replies before `device_browse_gatt` finishes).
    func connect(_ call: DBusMethodCall) async throws -> [DBusValue] {
        if connected { return [] }
        guard !connectPending else {
            throw DBusError(name: "org.bluez.Error.Failed", message: "Operation already in progress")
        }
        if failConnects.count > 0 {
            failConnects.count -= 1
            throw failConnects.error
        }
        connectPending = true
        connectCanceled = false
        defer { connectPending = false }
        // dev_connect(): the device becomes non-temporary (stored) as soon as Connect is called.
        deviceNonTemporary = true
        let generation = linkGeneration
        guard powered, deviceVisible else {
            try? await Task.sleep(for: configuration.unreachableConnectFailure)
            if connectCanceled { throw BlueZError.connectionCanceled }
            throw BlueZError.leAbortByLocal
        }
        try? await Task.sleep(for: configuration.connectDelay)
        // A Disconnect while Connect is pending answers it with "br-connection-canceled"
        // (device.c `device_request_disconnect()`).
        if connectCanceled { throw BlueZError.connectionCanceled }
        guard powered, deviceVisible, generation == linkGeneration, connection != nil else {
            throw BlueZError.leAbortByLocal
        }
        connected = true
        links.up()
        setLinkProperties([("Connected", true)])
        // StartNotify sessions that survived the disconnect are registered again as soon as ATT is up
        // (device.c `gatt_client_init()` → gatt-client.c `btd_gatt_client_connected()` → `register_notify()`), from
        // the cached database, before services are resolved: the CCCD is written and the controller answers.
        if !notifySubscribers.isEmpty {
            await deliver(model.subscribeNotifications())
            setNotifying(true)
        }
        let delay = configuration.resolveDelay
        let linkGen = linkGeneration
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.resolveServices(linkGeneration: linkGen)
        }
        return []
    }

    func resolveServices(linkGeneration gen: Int) async {
        guard connected, gen == linkGeneration else { return }
        try? exportGATT()
        servicesResolved = true
        setLinkProperties([("ServicesResolved", true)])
    }

    /// Device1.Disconnect (device.c `dev_disconnect()` → `device_request_disconnect()`): a pending Connect is
    /// answered with "br-connection-canceled"; not connected → an immediate empty reply.
    func disconnectRequested() async -> [DBusValue] {
        if connectPending { connectCanceled = true }
        guard connected else { return [] }
        // `DISCONNECT_TIMER` before `disconnect_all()`; the link (and every call on it) keeps working meanwhile.
        disconnecting += 1
        try? await Task.sleep(for: configuration.disconnectDelay)
        disconnecting -= 1
        await linkLost()
        return []
    }

    /// The link goes down: ServicesResolved=false then Connected=false (device.c device_remove_connection),
    /// GATT objects removed unless the cache keeps them.
    func linkLost() async {
        linkGeneration += 1
        guard connected else { return }
        connected = false
        links.down()
        servicesResolved = false
        model.linkDropped()
        releaseAcquiredNotify()
        // device.c `device_remove_connection()`: ServicesResolved=false then Connected=false, sent together.
        setLinkProperties([("ServicesResolved", false), ("Connected", false)])
        if !configuration.gattCacheAlways {
            notifySubscribers.removeAll()
            notifying = false
            unexportGATT()
        }
        // Without a link the peripheral advertises again; a discovery that is running reports it
        // (adapter.c `btd_adapter_device_found()` for its next advertising report). A discovery started while
        // the link was still up (Disconnect waits DISCONNECT_TIMER) skipped the device, so without this a
        // client that searched for it then saw nothing.
        if !discoverySessions.isEmpty {
            let delay = configuration.discoveryDelay
            Task { [weak self] in
                try? await Task.sleep(for: delay)
                try? await self?.reportDevice()
            }
        }
    }

    var serviceDataValue: DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v", model.advertisement.serviceData.sorted { $0.key < $1.key }
            .map { DBusDictEntry(.string($0.key), .variant(.bytes($0.value))) })
    }

    var manufacturerDataValue: DBusValue {
        .dictionary(keySignature: "q", valueSignature: "v", model.advertisement.manufacturerData
            .sorted { $0.key < $1.key }.map { DBusDictEntry(.uint16($0.key), .variant(.bytes($0.value))) })
    }
    /// An advertisement's service and manufacturer data: PropertiesChanged only when it differs from what bluetoothd
    /// holds (shared/ad.c `bt_ad_add_service_data()` returns false for identical data), unless a client asked for
    /// DuplicateData (device.c `device_set_service_data()` then clears the data first, so it always changes).
    /// ManufacturerData follows the same rule (`device_set_manufacturer_data()`). A device without such data has no
    /// such property.
    func advertiseServiceData() {
        guard deviceExported, let c = connection else { return }
        let ad = model.advertisement
        lastAdvertisement = ad
        // btd_adapter_device_found() (src/adapter.c) sets the manufacturer data, then the service data, in one
        // call: gdbus sends both in one PropertiesChanged.
        var values: [(name: String, value: DBusValue)] = []
        if !ad.manufacturerData.isEmpty { values.append(("ManufacturerData", manufacturerDataValue)) }
        if !ad.serviceData.isEmpty { values.append(("ServiceData", serviceDataValue)) }
        let changed = values.contains { c.exportedProperty($0.name, interface: Self.deviceInterface, path: devicePath) != $0.value }
        let duplicates = duplicateDataClients.isEmpty ? [] : Set(values.map(\.name))
        guard changed || !duplicates.isEmpty else { return }
        try? c.updateProperties(values, interface: Self.deviceInterface, path: devicePath, signalled: duplicates)
        recordTiming(&timedAdverts, [UInt8(clamping: model.status.position)])
    }
}
