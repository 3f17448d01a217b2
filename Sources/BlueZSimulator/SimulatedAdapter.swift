import CurtainProtocol
import DBus
import DBusExport

/// `Adapter1` at /org/bluez/hci0 (and `AgentManager1` at /org/bluez): power, discovery sessions and filters,
/// and the devices discovery reports (adapter.c).
extension BlueZSimulator {
    // MARK: Adapter

    func agentManagerInterface() -> DBusInterface {
        let ok: @Sendable (DBusMethodCall) async throws -> [DBusValue] = { _ in [] }
        return DBusInterface(Self.agentManagerInterface, methods: [
            DBusMethod("RegisterAgent", in: [DBusArgument("agent", "o"), DBusArgument("capability", "s")], handler: ok),
            DBusMethod("UnregisterAgent", in: [DBusArgument("agent", "o")], handler: ok),
            DBusMethod("RequestDefaultAgent", in: [DBusArgument("agent", "o")], handler: ok),
        ])
    }

    func adapterInterface() -> DBusInterface {
        let cfg = configuration
        return DBusInterface(Self.adapterInterface, methods: [
            DBusMethod("StartDiscovery") { [weak self] call in try await self?.startDiscovery(call) ?? [] },
            DBusMethod("StopDiscovery") { [weak self] call in try await self?.stopDiscovery(call) ?? [] },
            DBusMethod("SetDiscoveryFilter", in: [DBusArgument("properties", "a{sv}")]) { [weak self] call in
                try await self?.setDiscoveryFilter(call) ?? []
            },
            DBusMethod("GetDiscoveryFilters", out: [DBusArgument("filters", "as")]) { _ in
                [.stringArray(["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])]
            },
            DBusMethod("RemoveDevice", in: [DBusArgument("device", "o")]) { [weak self] call in
                try await self?.removeDevice(call) ?? []
            },
        ], properties: [
            DBusProperty("Address", value: .string(cfg.adapterAddress)),
            DBusProperty("AddressType", value: .string("public")),
            DBusProperty("Name", value: .string(cfg.adapterAlias)),
            DBusProperty("Alias", value: .string(cfg.adapterAlias), access: .readwrite),
            DBusProperty("Class", value: .uint32(0)),
            DBusProperty("Powered", value: .boolean(powered), access: .readwrite) { [weak self] value, _ in
                guard case .boolean(let on) = value.unwrappingVariants else {
                    throw DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call")
                }
                try await self?.setPowered(on, fromPropertySet: true)
            },
            DBusProperty("PowerState", value: .string(powered ? "on" : "off")),
            DBusProperty("Discoverable", value: .boolean(false), access: .readwrite),
            DBusProperty("DiscoverableTimeout", value: .uint32(180), access: .readwrite),
            DBusProperty("Pairable", value: .boolean(false), access: .readwrite),
            DBusProperty("PairableTimeout", value: .uint32(0), access: .readwrite),
            DBusProperty("Discovering", value: .boolean(!discoverySessions.isEmpty)),
            DBusProperty("UUIDs", value: .stringArray(["00001800-0000-1000-8000-00805f9b34fb",
                                                        "00001801-0000-1000-8000-00805f9b34fb"])),
            DBusProperty("Modalias", value: .string("usb:v1D6Bp0246d0542")),
            DBusProperty("Roles", value: .stringArray(["central", "peripheral"])),
        ])
    }

    func setPowered(_ on: Bool, fromPropertySet: Bool = false) async throws {
        guard on != powered else { return }
        powered = on
        if !on {
            // adapter.c adapter_stop(): connections removed, Discovering=false, then Powered=false.
            await linkLost()
            discoverySessions.removeAll()
            discoveryFilters.removeAll()
            duplicateDataClients.removeAll()
            discoveryEnded()
        }
        await syncCompanions()
        if !fromPropertySet {
            try? connection?.updateProperty("Powered", interface: Self.adapterInterface, path: adapterPath,
                                            value: .boolean(on))
        }
        try? connection?.updateProperty("PowerState", interface: Self.adapterInterface, path: adapterPath,
                                        value: .string(on ? "on" : "off"))
    }

    func startDiscovery(_ call: DBusMethodCall) async throws -> [DBusValue] {
        guard powered else { throw BlueZError.notReady }
        let sender = call.sender ?? ""
        guard !discoverySessions.contains(sender) else { throw BlueZError.busy }
        discoverySessions.insert(sender)
        watchForDeparture(of: sender)
        await syncCompanions()
        try? connection?.updateProperty("Discovering", interface: Self.adapterInterface, path: adapterPath,
                                        value: .boolean(true))
        let delay = configuration.discoveryDelay
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            try? await self?.reportDevice()
            await self?.reportCompanions()
        }
        return []
    }

    func stopDiscovery(_ call: DBusMethodCall) async throws -> [DBusValue] {
        guard powered else { throw BlueZError.notReady }
        let sender = call.sender ?? ""
        guard discoverySessions.remove(sender) != nil else {
            throw DBusError(name: "org.bluez.Error.Failed", message: "No discovery started")
        }
        discoveryFilters[sender] = nil
        duplicateDataClients.remove(sender)
        if discoverySessions.isEmpty {
            discoveryEnded()
        }
        await syncCompanions()
        return []
    }

    func setDiscoveryFilter(_ call: DBusMethodCall) async throws -> [DBusValue] {
        guard powered else { throw BlueZError.notReady }
        let dict: [String: DBusValue]
        do { dict = try call.arguments.first?.stringVariantDictionary() ?? [:] } catch { throw BlueZError.invalidArgs }
        var uuids: [String] = []
        var duplicateData = false
        for (key, value) in dict {
            switch (key, value.unwrappingVariants) {
            case ("UUIDs", let v):
                guard let list = try? v.stringArray() else { throw BlueZError.invalidArgs }
                uuids = list.map { $0.lowercased() }
            case ("Transport", .string(let t)):
                guard ["auto", "le", "bredr"].contains(t) else { throw BlueZError.invalidArgs }
            case ("DuplicateData", .boolean(let on)):
                duplicateData = on
            case ("RSSI", .int16), ("Pathloss", .uint16), ("Discoverable", .boolean), ("Pattern", .string):
                break
            default:
                throw BlueZError.invalidArgs
            }
        }
        discoveryFilters[call.sender ?? ""] = dict.isEmpty ? nil : uuids
        beaconFilterSet(by: call.sender ?? "", dict)
        // adapter.c `parse_discovery_filter_dict()`: DuplicateData defaults to false (the API text says true).
        if duplicateData { duplicateDataClients.insert(call.sender ?? "") } else { duplicateDataClients.remove(call.sender ?? "") }
        await syncCompanions()
        return []
    }

    // MARK: Clients leaving the bus


    func watchForDeparture(of sender: String) {
        guard !sender.isEmpty, departureWatches[sender] == nil, let c = connection else { return }
        departureWatches[sender] = Task { [weak self] in
            guard let owners = try? await c.nameOwnerChanges(of: sender) else { return }
            for await owner in owners where owner == .unowned {
                await self?.clientLeft(sender)
                return
            }
        }
    }

    /// A client left the bus: its discovery session ends (adapter.c `discovery_disconnect()` → `discovery_stop()`)
    /// and its StartNotify session too (gatt-client.c `notify_client_disconnect()` → `update_notifying()`).
    func clientLeft(_ sender: String) async {
        departureWatches[sender] = nil
        discoveryFilters[sender] = nil
        duplicateDataClients.remove(sender)
        if discoverySessions.remove(sender) != nil, discoverySessions.isEmpty {
            discoveryEnded()
        }
        if notifySubscribers.remove(sender) != nil, notifySubscribers.isEmpty {
            setNotifying(false)
        }
        await syncCompanions()
    }

    func forgetClients() {
        for watch in departureWatches.values { watch.cancel() }
        departureWatches.removeAll()
    }

    /// Reports the curtain to discovery (creates its Device1, or refreshes RSSI/ServiceData).
    func reportDevice() async throws {
        guard powered, deviceVisible, !discoverySessions.isEmpty, !connected else { return }
        advertisementsSeen += 1
        // Filters of all clients are merged (adapter-api.txt): report if any session has no UUID filter or
        // a filter containing the curtain service.
        let matches = discoverySessions.contains { session in
            guard let uuids = discoveryFilters[session], !uuids.isEmpty else { return true }
            return uuids.contains(model.profile.serviceUUID)
        }
        guard matches else { return }
        // Each advertisement carries a fresh RSSI reading; it jitters by a dB.
        rssiJitter.toggle()
        let rssi = configuration.rssi - (rssiJitter ? 1 : 0)
        if !deviceExported {
            reportedRSSI = rssi
            try exportDevice() // InterfacesAdded with every property, RSSI included (adapter.c `device_found()`)
        } else {
            // device.c `device_set_rssi_with_delta()`: a change is only reported from 0 (not seen) or by
            // RSSI_THRESHOLD (8) dBm or more, so the jitter emits nothing.
            if reportedRSSI.map({ abs(Int($0) - Int(rssi)) >= Self.rssiThreshold }) ?? true {
                reportedRSSI = rssi
                setDeviceProperty("RSSI", .int16(rssi))
            }
            advertiseServiceData()
        }
    }

    /// device.c `RSSI_THRESHOLD`.
    static let rssiThreshold = 8


    /// The last discovery session ended (adapter.c `discovery_cleanup()`): devices found during it lose their RSSI
    /// (`invalidate_rssi_and_tx_power()` → `device_set_rssi(dev, 0)`: RSSI invalidated), and Discovering=false.
    func discoveryEnded() {
        if !isCompanion { try? connection?.updateProperty("Discovering", interface: Self.adapterInterface, path: adapterPath,
                                        value: .boolean(false)) }
        if reportedRSSI != nil {
            reportedRSSI = nil
            setDeviceProperty("RSSI", nil)
        }
        beaconsDiscoveryEnded()
    }

    func removeDevice(_ call: DBusMethodCall) async throws -> [DBusValue] {
        guard case .objectPath(let path)? = call.arguments.first else { throw BlueZError.invalidArgs }
        if path != devicePath, let companion = companions.first(where: { $0.devicePath == path }) {
            return try await companion.removeDevice(call)
        }
        guard path == devicePath, deviceExported else {
            throw DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
        }
        await linkLost()
        deviceNonTemporary = false
        unexportDevice()
        return []
    }
}
