import CurtainProtocol
import DBus
import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for bluetoothd with one adapter and one curtain controller, on a private D-Bus bus.
///
/// It owns `org.bluez` and exports what BlueZ 5.66 exports (see docs/bluez-notes.md): ObjectManager at `/`,
/// `Adapter1` at `/org/bluez/hci0`, `AgentManager1` at `/org/bluez`, `Device1` for the curtain, and — after a
/// connection resolves its services — `GattService1` / `GattCharacteristic1` / `GattDescriptor1` objects, with
/// BlueZ's ordering and error names/texts. Behind the characteristics runs ``CurtainMotorModel``.
///
/// Never connect it to the machine's system bus: give it the address of a private bus.
public actor BlueZSimulator {
    // MARK: Configuration

    /// Static description of the simulated hardware.
    public struct Configuration: Sendable {
        public var adapterName = "hci0"
        public var adapterAddress = "00:1A:7D:DA:71:13"
        public var adapterAlias = "roombridge-sim"
        public var deviceAddress = "C4:7C:8D:6A:3E:21"
        public var deviceName = "Curtain-Living"
        public var rssi: Int16 = -58
        /// BlueZ `[GATT] Cache` (main.conf): `always` keeps GATT objects after a disconnect.
        public var gattCacheAlways = true
        /// Motor speed, percent per second (simulated time).
        public var speed: Double = 10
        /// STATUS interval while moving, simulated seconds.
        public var statusInterval: Double = 0.5
        public var initialPosition = 0
        public var initialSchedule: CurtainSchedule = .disabled
        /// Simulated time of day at start, seconds since midnight.
        public var startTimeOfDay: Double = 8 * 3600
        /// Real time between Connect and Connected=true / the reply.
        public var connectDelay: Duration = .milliseconds(30)
        /// Real time between the Connect reply and the GATT objects + ServicesResolved.
        public var resolveDelay: Duration = .milliseconds(30)
        /// Real time after StartDiscovery before the device is reported.
        public var discoveryDelay: Duration = .milliseconds(30)
        /// Real time a Connect to an unreachable device takes before failing.
        public var unreachableConnectFailure: Duration = .milliseconds(500)
        /// Real time between Device1.Disconnect and the link going down: bluetoothd's `DISCONNECT_TIMER` (device.c,
        /// 2 s). Meanwhile the device is "disconnecting" and StartNotify answers NotConnected.
        public var disconnectDelay: Duration = .seconds(2)
        /// Whether bluetoothd already knows the device at start (a remembered device).
        public var deviceKnownAtStart = false
        /// Which curtain firmware runs behind the GATT objects (SimulatedCurtain.swift).
        public var device: SimulatedCurtainKind = .roombridge
        /// Simulated seconds per real second for the built-in ticker; 0 = no ticker (tests drive the clock).
        public var timeScale: Double = 1

        public init() {}
    }

    /// What the control interface can ask for; see ``handle(_:)``.
    public enum Control: Sendable, Hashable {
        case press(CurtainMotorModel.SwitchPress)
        case dropLink
        /// bluetoothd ends the notify session while the link stays up (an AcquireNotify socket is closed).
        case endNotify
        case vanish
        case reappear
        case restartBluetoothd(downtime: Duration)
        case power(Bool)
        case failWrites(count: Int, name: String, message: String)
        case failConnects(count: Int, name: String, message: String)
        case setSchedule(CurtainSchedule)
        case advance(seconds: Double)
        case status
        /// Reports (and clears) when command writes arrived and notifications left, on
        /// CLOCK_MONOTONIC, for the benchmark: `ok writes=T:HEX,… notifications=T:HEX,…`.
        case timing
        /// The simulated iBeacons (BeaconField.swift).
        case beacon(BeaconControl)
    }

    // MARK: Constants

    static let bluezName = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let descriptorInterface = "org.bluez.GattDescriptor1"
    static let agentManagerInterface = "org.bluez.AgentManager1"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    // MARK: State

    public let configuration: Configuration
    private let busAddress: String
    private let logger: Logger
    var connection: DBusConnection?
    private var model: any SimulatedCurtain
    /// The iBeacons around (BeaconField.swift).
    let beaconField = BeaconField()

    var powered = true
    var discoverySessions: Set<String> = []
    private var discoveryFilters: [String: [String]] = [:]
    private var deviceExported = false
    /// Device object survives as long as it is non-temporary (it was connected once) or visible in discovery.
    private var deviceNonTemporary = false
    private var deviceVisible = true
    private var connected = false
    private var connectPending = false
    private var servicesResolved = false
    private var gattExported = false
    private var notifySubscribers: Set<String> = []
    private var notifying = false
    private var linkGeneration = 0
    private var failWrites: (count: Int, error: DBusError) = (0, DBusError(name: "org.bluez.Error.Failed", message: ""))
    private var failConnects: (count: Int, error: DBusError) = (0, DBusError(name: "org.bluez.Error.Failed", message: ""))
    private var ticker: Task<Void, Never>?
    private var restarting = false
    private var rssiJitter = false
    /// The RSSI bluetoothd shows; nil while the device has not been seen in the current discovery (BlueZ's 0:
    /// the property does not exist).
    private var reportedRSSI: Int16?
    /// Clients whose discovery filter has DuplicateData=true (adapter.c merges them: any one enables it).
    private var duplicateDataClients: Set<String> = []
    /// Set by Disconnect while a Connect is pending: that Connect fails with "br-connection-canceled".
    private var connectCanceled = false
    /// Disconnect calls waiting for the disconnect timer (device.c `device_is_disconnecting()` while > 0).
    private var disconnecting = 0
    /// The simulator's end of an AcquireNotify socket (one session per characteristic, like BlueZ).
    private var acquiredNotifyFD: Int32?
    /// Watches that socket for the client's hang-up, like bluetoothd's io disconnect handler.
    private var acquiredNotifyWatch: (any DispatchSourceRead)?
    /// Notifications bluetoothd dropped because no AcquireNotify socket existed yet (gatt-client.c `notify_io_cb`).
    public private(set) var droppedNotifications = 0

    // MARK: Paths

    var adapterPath: DBusObjectPath { DBusObjectPath(stringLiteral: "/org/bluez/" + configuration.adapterName) }
    var devicePath: DBusObjectPath {
        DBusObjectPath(stringLiteral: adapterPath.rawValue + "/dev_" + configuration.deviceAddress.replacingColons())
    }
    var servicePath: DBusObjectPath { DBusObjectPath(stringLiteral: devicePath.rawValue + "/service000a") }
    var commandPath: DBusObjectPath { DBusObjectPath(stringLiteral: servicePath.rawValue + "/char000b") }
    var statusPath: DBusObjectPath {
        model.profile.sharesCharacteristic ? commandPath : DBusObjectPath(stringLiteral: servicePath.rawValue + "/char000d")
    }
    var cccdPath: DBusObjectPath { DBusObjectPath(stringLiteral: statusPath.rawValue + "/desc000f") }

    // MARK: Life cycle

    /// Creates a simulator for the bus at `busAddress`; call ``start()``.
    public init(busAddress: String, configuration: Configuration = Configuration(),
                logger: Logger = Logger(label: "bluez-sim")) {
        self.busAddress = busAddress
        self.configuration = configuration
        self.logger = logger
        self.model = configuration.device.make(
            motor: CurtainMotorModel(position: configuration.initialPosition, schedule: configuration.initialSchedule,
                                     speed: configuration.speed, statusInterval: configuration.statusInterval,
                                     now: configuration.startTimeOfDay),
            address: configuration.deviceAddress)
        self.deviceNonTemporary = configuration.deviceKnownAtStart
    }

    /// Connects to the bus, exports the objects and takes the name `org.bluez`.
    public func start() async throws {
        try await bringUpBluetoothd()
        startBeacons()
        if configuration.timeScale > 0, ticker == nil {
            let scale = configuration.timeScale
            ticker = Task { [weak self] in
                let step = 0.05
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(50))
                    await self?.advanceClock(by: step * scale)
                }
            }
        }
    }

    /// Releases `org.bluez`, closes the connection and stops the ticker.
    public func stop() async {
        ticker?.cancel()
        ticker = nil
        stopBeacons()
        forgetClients()
        releaseAcquiredNotify()
        if let c = connection {
            connection = nil
            await c.close()
        }
    }

    private func bringUpBluetoothd() async throws {
        let c = try await DBusConnection.open(.address(busAddress))
        connection = c
        c.addObjectManager(at: .root)
        try c.export(DBusObjectPath(stringLiteral: "/org/bluez"), interfaces: [agentManagerInterface()])
        try c.export(adapterPath, interfaces: [adapterInterface()])
        // Remembered devices come back from storage; their GATT objects only after the next connection
        // resolves services (gatt-client.c `btd_gatt_client_service_added()` exports nothing until the client
        // is ready), even though the cached database is loaded (device.c `load_gatt_db()`).
        if deviceNonTemporary {
            try exportDevice()
        }
        try await c.requestName(Self.bluezName)
        logger.info("bluez-sim owns org.bluez", metadata: ["adapter": "\(adapterPath)"])
    }

    // MARK: Control

    /// Applies a control request (wall switch, link drop, restart, …); returns a one-line answer.
    @discardableResult
    public func handle(_ control: Control) async throws -> String {
        switch control {
        case .press(let button):
            await deliver(model.press(button))
        case .dropLink:
            await linkLost()
        case .endNotify:
            endNotifySessions()
        case .vanish:
            deviceVisible = false
            await linkLost()
            if deviceExported, !deviceNonTemporary { unexportDevice() }
        case .reappear:
            deviceVisible = true
            if !discoverySessions.isEmpty { try await reportDevice() }
        case .restartBluetoothd(let downtime):
            try await restartBluetoothd(downtime: downtime)
        case .power(let on):
            try await setPowered(on)
        case .failWrites(let n, let name, let message):
            failWrites = (n, DBusError(name: name, message: message))
        case .failConnects(let n, let name, let message):
            failConnects = (n, DBusError(name: name, message: message))
        case .setSchedule(let s):
            await deliver(model.setScheduleLocally(s))
        case .advance(let seconds):
            await advanceClock(by: seconds)
        case .status:
            break
        case .beacon(let c):
            return try handleBeacon(c)
        case .timing:
            let line = "writes=" + timedWrites.map(Self.timed).joined(separator: ",")
                + " notifications=" + timedNotifications.map(Self.timed).joined(separator: ",")
            timedWrites.removeAll()
            timedNotifications.removeAll()
            return line
        }
        return statusLine
    }

    /// A one-line description of the simulated hardware.
    public var statusLine: String {
        "powered=\(powered) discovering=\(!discoverySessions.isEmpty) visible=\(deviceVisible) connected=\(connected) resolved=\(servicesResolved) "
            + "notifying=\(notifying) acquired=\(acquiredNotifyFD != nil) dropped=\(droppedNotifications) "
            + "status=\(model.status) schedule=\(model.schedule) time=\(timeOfDay) "
            + "writes=\(writes.count)"
    }

    /// The motor model's current STATUS (for tests).
    public var deviceStatus: CurtainStatus { model.status }
    /// The schedule stored on the device (for tests).
    public var deviceSchedule: CurtainSchedule { model.schedule }
    /// True while the link is up.
    public var isConnected: Bool { connected }
    /// True while a Device1.Connect call is being served.
    public var isConnecting: Bool { connectPending }
    /// Number of accepted command writes (for tests proving nothing was written).
    public private(set) var writeCount = 0
    /// The bytes of every write to the command characteristic, accepted or not.
    public private(set) var writes: [[UInt8]] = []
    private var timedWrites: [(Double, [UInt8])] = []
    private var timedNotifications: [(Double, [UInt8])] = []

    private var timeOfDay: String {
        let s = Int(model.secondsOfDay)
        return "\(s / 3600):\(s / 60 % 60 < 10 ? "0" : "")\(s / 60 % 60):\(s % 60 < 10 ? "0" : "")\(s % 60)"
    }

    /// Lets simulated time pass (motor, schedule), notifying the frames it produces.
    public func advanceClock(by seconds: Double) async {
        await deliver(model.advance(by: seconds))
    }

    // MARK: Frames

    /// Notifies frames to subscribers (PropertiesChanged on Value, one per frame, like BlueZ's FLUSH);
    /// also refreshes the advertised service data. Frames are lost when nobody is subscribed.
    /// Seconds on CLOCK_MONOTONIC (comparable across processes on this machine).
    static func monotonicNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func timed(_ entry: (Double, [UInt8])) -> String {
        String(format: "%.6f", entry.0) + ":" + entry.1.map { String(format: "%02x", $0) }.joined()
    }

    private func recordTiming(_ list: inout [(Double, [UInt8])], _ bytes: [UInt8]) {
        list.append((Self.monotonicNow(), bytes))
        if list.count > 512 { list.removeFirst(list.count - 512) }
    }

    private func deliver(_ frames: [[UInt8]]) async {
        for bytes in frames {
            // Notifications flow whenever the link is up (gatt-client.c `notify_cb()`), resolved or not.
            guard connected else { continue }
            recordTiming(&timedNotifications, bytes)
            if let fd = acquiredNotifyFD {
                // AcquireNotify: one SOCK_SEQPACKET packet per notification, no Value signal. Never block the
                // actor: a reader that does not keep up loses notifications (as over the air); a closed peer ends
                // the session.
                let sent = bytes.withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK { releaseAcquiredNotify() }
            } else if !notifySubscribers.isEmpty {
                emitValue(bytes, at: statusPath)
            }
        }
        // The advertisement changes with the state; bluetoothd only sees it while it scans (a discovery session).
        // SwitchBot motion changes only the advertisement, so compare it rather than wait for a frame.
        if !discoverySessions.isEmpty, deviceVisible, !frames.isEmpty || model.advertisement != lastAdvertisement {
            advertiseServiceData()
        }
    }

    /// Stores `Value` and always emits PropertiesChanged (BlueZ emits one per notification even when the
    /// value repeats: `G_DBUS_PROPERTY_CHANGED_FLAG_FLUSH` in gatt-client.c `write_characteristic_cb`).
    private func emitValue(_ bytes: [UInt8], at path: DBusObjectPath) {
        guard let c = connection, gattExported else { return }
        // The property is declared without automatic change signals; emit exactly one per notification.
        try? c.updateProperty("Value", interface: Self.characteristicInterface, path: path, value: .bytes(bytes))
        try? c.emitSignal(path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                          arguments: [.string(Self.characteristicInterface),
                                      .stringVariantDictionary(["Value": .bytes(bytes)]), .stringArray([])])
    }

    private var serviceDataValue: DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v", model.advertisement.serviceData.sorted { $0.key < $1.key }
            .map { DBusDictEntry(.string($0.key), .variant(.bytes($0.value))) })
    }

    private var manufacturerDataValue: DBusValue {
        .dictionary(keySignature: "q", valueSignature: "v", model.advertisement.manufacturerData
            .sorted { $0.key < $1.key }.map { DBusDictEntry(.uint16($0.key), .variant(.bytes($0.value))) })
    }

    // MARK: Adapter

    private func agentManagerInterface() -> DBusInterface {
        let ok: @Sendable (DBusMethodCall) async throws -> [DBusValue] = { _ in [] }
        return DBusInterface(Self.agentManagerInterface, methods: [
            DBusMethod("RegisterAgent", in: [DBusArgument("agent", "o"), DBusArgument("capability", "s")], handler: ok),
            DBusMethod("UnregisterAgent", in: [DBusArgument("agent", "o")], handler: ok),
            DBusMethod("RequestDefaultAgent", in: [DBusArgument("agent", "o")], handler: ok),
        ])
    }

    private func adapterInterface() -> DBusInterface {
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

    private func setPowered(_ on: Bool, fromPropertySet: Bool = false) async throws {
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
        if !fromPropertySet {
            try? connection?.updateProperty("Powered", interface: Self.adapterInterface, path: adapterPath,
                                            value: .boolean(on))
        }
        try? connection?.updateProperty("PowerState", interface: Self.adapterInterface, path: adapterPath,
                                        value: .string(on ? "on" : "off"))
    }

    private func startDiscovery(_ call: DBusMethodCall) async throws -> [DBusValue] {
        guard powered else { throw BlueZError.notReady }
        let sender = call.sender ?? ""
        guard !discoverySessions.contains(sender) else { throw BlueZError.busy }
        discoverySessions.insert(sender)
        watchForDeparture(of: sender)
        try? connection?.updateProperty("Discovering", interface: Self.adapterInterface, path: adapterPath,
                                        value: .boolean(true))
        let delay = configuration.discoveryDelay
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            try? await self?.reportDevice()
        }
        return []
    }

    private func stopDiscovery(_ call: DBusMethodCall) async throws -> [DBusValue] {
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
        return []
    }

    private func setDiscoveryFilter(_ call: DBusMethodCall) async throws -> [DBusValue] {
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
        return []
    }

    /// What the device advertised last (see ``advertiseServiceData()``).
    private var lastAdvertisement = CurtainAdvertisementData()

    // MARK: Clients leaving the bus

    /// Per-client watches: bluetoothd ends a client's sessions when it leaves the bus (`g_dbus_add_disconnect_watch`).
    private var departureWatches: [String: Task<Void, Never>] = [:]

    private func watchForDeparture(of sender: String) {
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
    private func clientLeft(_ sender: String) {
        departureWatches[sender] = nil
        discoveryFilters[sender] = nil
        duplicateDataClients.remove(sender)
        if discoverySessions.remove(sender) != nil, discoverySessions.isEmpty {
            discoveryEnded()
        }
        if notifySubscribers.remove(sender) != nil, notifySubscribers.isEmpty {
            setNotifying(false)
        }
    }

    private func forgetClients() {
        for watch in departureWatches.values { watch.cancel() }
        departureWatches.removeAll()
    }

    /// Advertisements of the curtain bluetoothd received while discovering (reported or filtered out), for tests.
    public private(set) var advertisementsSeen = 0

    /// Reports the curtain to discovery (creates its Device1, or refreshes RSSI/ServiceData).
    private func reportDevice() async throws {
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

    /// An advertisement's service and manufacturer data: PropertiesChanged only when it differs from what bluetoothd
    /// holds (shared/ad.c `bt_ad_add_service_data()` returns false for identical data), unless a client asked for
    /// DuplicateData (device.c `device_set_service_data()` then clears the data first, so it always changes).
    /// ManufacturerData follows the same rule (`device_set_manufacturer_data()`). A device without such data has no
    /// such property.
    private func advertiseServiceData() {
        guard deviceExported, let c = connection else { return }
        let ad = model.advertisement
        lastAdvertisement = ad
        for (name, present, value) in [("ServiceData", !ad.serviceData.isEmpty, serviceDataValue),
                                       ("ManufacturerData", !ad.manufacturerData.isEmpty, manufacturerDataValue)]
        where present {
            if c.exportedProperty(name, interface: Self.deviceInterface, path: devicePath) == value {
                guard !duplicateDataClients.isEmpty else { continue }
                try? c.emitSignal(path: devicePath, interface: Self.propertiesInterface, member: "PropertiesChanged",
                                  arguments: [.string(Self.deviceInterface), .stringVariantDictionary([name: value]),
                                              .stringArray([])])
            } else {
                try? c.updateProperty(name, interface: Self.deviceInterface, path: devicePath, value: value)
            }
        }
    }

    /// The last discovery session ended (adapter.c `discovery_cleanup()`): devices found during it lose their RSSI
    /// (`invalidate_rssi_and_tx_power()` → `device_set_rssi(dev, 0)`: RSSI invalidated), and Discovering=false.
    private func discoveryEnded() {
        try? connection?.updateProperty("Discovering", interface: Self.adapterInterface, path: adapterPath,
                                        value: .boolean(false))
        if reportedRSSI != nil {
            reportedRSSI = nil
            setDeviceProperty("RSSI", nil)
        }
        beaconsDiscoveryEnded()
    }

    private func removeDevice(_ call: DBusMethodCall) async throws -> [DBusValue] {
        guard case .objectPath(let path)? = call.arguments.first else { throw BlueZError.invalidArgs }
        guard path == devicePath, deviceExported else {
            throw DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
        }
        await linkLost()
        deviceNonTemporary = false
        unexportDevice()
        return []
    }

    // MARK: Device

    private func exportDevice() throws {
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

    private func unexportDevice() {
        guard deviceExported else { return }
        unexportGATT()
        connection?.unexport(devicePath)
        deviceExported = false
    }

    private func setDeviceProperty(_ name: String, _ value: DBusValue?) {
        guard deviceExported else { return }
        try? connection?.updateProperty(name, interface: Self.deviceInterface, path: devicePath, value: value)
    }

    /// Sets Device1 link properties and emits them in ONE PropertiesChanged, in this order: bluetoothd's gdbus
    /// queues property changes and sends each object's pending ones together (gdbus/object.c
    /// `g_dbus_emit_property_changed_full()` → `process_property_changes()`, in the order they were changed).
    private func setLinkProperties(_ changes: [(String, Bool)]) {
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
    private func connect(_ call: DBusMethodCall) async throws -> [DBusValue] {
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

    private func resolveServices(linkGeneration gen: Int) async {
        guard connected, gen == linkGeneration else { return }
        try? exportGATT()
        servicesResolved = true
        setLinkProperties([("ServicesResolved", true)])
    }

    /// Device1.Disconnect (device.c `dev_disconnect()` → `device_request_disconnect()`): a pending Connect is
    /// answered with "br-connection-canceled"; not connected → an immediate empty reply.
    private func disconnectRequested() async -> [DBusValue] {
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
    private func linkLost() async {
        linkGeneration += 1
        guard connected else { return }
        connected = false
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
    }

    private func restartBluetoothd(downtime: Duration) async throws {
        guard !restarting else { return }
        restarting = true
        forgetClients()
        defer { restarting = false }
        await linkLost()
        releaseAcquiredNotify()
        discoverySessions.removeAll()
        discoveryFilters.removeAll()
        duplicateDataClients.removeAll()
        reportedRSSI = nil
        beaconsBluetoothdGone()
        notifySubscribers.removeAll()
        notifying = false
        if let c = connection {
            connection = nil
            await c.close()
        }
        deviceExported = false
        gattExported = false
        try? await Task.sleep(for: downtime)
        try await bringUpBluetoothd()
    }

    // MARK: GATT

    private func exportGATT() throws {
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

    private func unexportGATT() {
        guard gattExported, let c = connection else { return }
        c.unexport(cccdPath)
        c.unexport(statusPath)
        if statusPath != commandPath { c.unexport(commandPath) }
        c.unexport(servicePath)
        gattExported = false
    }

    private func characteristicInterface(uuid: String, flags: [String], notify: Bool) -> DBusInterface {
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

    private func readCCCD() throws -> [DBusValue] {
        guard connected else { throw BlueZError.gattNotConnected }
        return [.bytes(notifying || acquiredNotifyFD != nil ? [0x01, 0x00] : [0x00, 0x00])]
    }

    /// Reads and writes work as soon as the link is up and the objects exist — with the GATT cache, before
    /// ServicesResolved: gatt-client.c `btd_gatt_client_connected()` sets `client->gatt` on connection ("Services
    /// have already been created before"), and `characteristic_read_value` / `characteristic_write_value` only check
    /// that (`if (!gatt) return btd_error_failed(msg, "Not connected")`). bleak relies on it when it reuses its
    /// service cache (`dangerous_use_bleak_cache`, as PySwitchbot's bleak-retry-connector does).
    private func readValue(_ path: DBusObjectPath) throws -> [DBusValue] {
        guard connected, gattExported else { throw BlueZError.gattNotConnected }
        guard path == statusPath else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        }
        guard let bytes = model.readValue else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        }
        // A read updates Value and so also emits PropertiesChanged (bleak client.py start_notify comment).
        emitValue(bytes, at: statusPath)
        return [.bytes(bytes)]
    }

    private func writeValue(_ path: DBusObjectPath, _ call: DBusMethodCall) async throws -> [DBusValue] {
        guard connected, gattExported else { throw BlueZError.gattNotConnected }
        guard path == commandPath else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
        }
        guard call.arguments.count == 2, let bytes = try? call.arguments[0].bytes(),
              let options = try? call.arguments[1].stringVariantDictionary() else { throw BlueZError.invalidArgs }
        var withResponse = true
        if let type = options["type"]?.unwrappingVariants {
            guard case .string(let t) = type else { throw BlueZError.invalidArgs }
            switch t.lowercased() {
            case "request": withResponse = true
            case "command": withResponse = false
            default:
                throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
            }
        }
        writes.append(bytes)
        recordTiming(&timedWrites, bytes)
        if failWrites.count > 0 {
            failWrites.count -= 1
            throw failWrites.error
        }
        switch model.write(bytes, withResponse: withResponse) {
        case .accepted(let frames):
            writeCount += 1
            await deliver(frames)
            return []
        case .attError(let code):
            throw BlueZError.att(code)
        case .refused(let frames):
            await deliver(frames)
            return []
        }
    }

    private func startNotify(_ path: DBusObjectPath, _ call: DBusMethodCall) async throws -> [DBusValue] {
        guard disconnecting == 0 else { throw BlueZError.notConnected } // "Device is disconnecting"
        guard path == statusPath else {
            throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        }
        releaseAcquiredNotifyIfHungUp()
        guard acquiredNotifyFD == nil else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")
        }
        let sender = call.sender ?? ""
        // gatt-client.c `characteristic_start_notify()`: one session per client; a second call succeeds when the
        // session is registered with the device, and is "In Progress" while it waits for a link (`notify_id` 0).
        if notifySubscribers.contains(sender) {
            guard connected else { throw BlueZError.inProgress }
            return []
        }
        notifySubscribers.insert(sender)
        watchForDeparture(of: sender)
        // Not connected: BlueZ answers success and registers for the next connection.
        guard connected, servicesResolved else { return [] }
        // The first session writes the CCCD (shared/gatt-client.c `register_notify`: later ones only count). The
        // controller answers the CCCD write at once with STATUS + SCHEDULE, before its Write Response; bluetoothd
        // passes notifications to handlers whose CCCD write is still pending (`notify_handler`), so the Value
        // signals come first, then Notifying=true and the reply (`register_notify_cb`).
        if !notifying {
            await deliver(model.subscribeNotifications())
            setNotifying(true)
        }
        return []
    }

    private func stopNotify(_ path: DBusObjectPath, _ call: DBusMethodCall) throws -> [DBusValue] {
        if acquiredNotifyFD != nil {
            releaseAcquiredNotify()
            return []
        }
        guard notifySubscribers.remove(call.sender ?? "") != nil else {
            throw DBusError(name: "org.bluez.Error.Failed", message: "No notify session started")
        }
        if notifySubscribers.isEmpty { setNotifying(false) }
        return []
    }

    /// AcquireNotify (gatt-client.c `characteristic_acquire_notify`): a SOCK_SEQPACKET socket carrying one
    /// notification per packet; refused while another session (acquired or StartNotify) exists.
    private func acquireNotify(_ path: DBusObjectPath) async throws -> [DBusValue] {
        guard connected, servicesResolved else { throw BlueZError.gattNotConnected }
        guard path == statusPath else {
            throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        }
        releaseAcquiredNotifyIfHungUp()
        guard acquiredNotifyFD == nil else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")
        }
        guard notifySubscribers.isEmpty else { throw BlueZError.inProgress }
        // The CCCD write makes the controller send STATUS then SCHEDULE at once. bluetoothd creates the socket only
        // when the CCCD write has completed (`register_notify_io_cb` → `characteristic_ready` → `create_sock`) and
        // drops what is notified before (`notify_io_cb`: "Drop notification if the sock is not ready").
        droppedNotifications += model.subscribeNotifications().count
        // Exactly bluetoothd's pair (gatt-client.c `create_sock()`): O_NONBLOCK is part of the open file
        // description, so the client's end arrives non-blocking.
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_LOCAL, type, 0, &fds) == 0 else {
            throw DBusError(name: "org.bluez.Error.Failed", message: String(cString: strerror(errno)))
        }
        acquiredNotifyFD = fds[0]
        let watch = DispatchSource.makeReadSource(fileDescriptor: fds[0], queue: .global())
        watch.setEventHandler { [weak self] in
            // The client never writes to a notify socket: readable means hung up. (Cancelling drops this handler
            // and with it the reference to the source.)
            watch.cancel()
            Task { await self?.releaseAcquiredNotifyIfHungUp() }
        }
        watch.resume()
        acquiredNotifyWatch = watch
        let clientEnd = DBusUnixFD(taking: fds[1])
        // NotifyAcquired=true; Notifying stays as it is: only StartNotify's `register_notify_cb` sets it.
        try? connection?.updateProperty("NotifyAcquired", interface: Self.characteristicInterface, path: statusPath,
                                        value: .boolean(true))
        return [.unixFD(clientEnd), .uint16(247)]
    }

    /// BlueZ ends an AcquireNotify session as soon as the client closes its end (gatt-client.c `sock_hup` →
    /// `destroy_sock`, an io disconnect handler), e.g. when the client process exits: NotifyAcquired=false. The
    /// simulator's watch calls this on the hang-up; it is also checked before a new session is refused.
    private func releaseAcquiredNotifyIfHungUp() {
        guard let fd = acquiredNotifyFD else { return }
        var p = pollfd(fd: fd, events: 0, revents: 0)  // POLLHUP and POLLERR are always reported
        if poll(&p, 1, 0) > 0, p.revents & Int16(POLLHUP | POLLERR) != 0 {
            releaseAcquiredNotify()
        }
    }

    private func releaseAcquiredNotify() {
        guard let fd = acquiredNotifyFD else { return }
        acquiredNotifyFD = nil
        acquiredNotifyWatch?.cancel()
        acquiredNotifyWatch = nil
        close(fd)
        // gatt-client.c `destroy_sock()`: NotifyAcquired=false (Notifying was never set for this session).
        try? connection?.updateProperty("NotifyAcquired", interface: Self.characteristicInterface, path: statusPath,
                                        value: .boolean(false))
    }

    /// bluetoothd ends the notify session of the status characteristic while the link stays up: an AcquireNotify
    /// socket is closed (`destroy_sock()`), StartNotify sessions are dropped (`update_notifying()`:
    /// Notifying=false). For testing clients' recovery; the link and the GATT objects stay.
    private func endNotifySessions() {
        if acquiredNotifyFD != nil {
            releaseAcquiredNotify()
        } else if !notifySubscribers.isEmpty {
            notifySubscribers.removeAll()
            setNotifying(false)
        }
    }

    private func setNotifying(_ on: Bool) {
        notifying = on
        guard gattExported else { return }
        try? connection?.updateProperty("Notifying", interface: Self.characteristicInterface, path: statusPath,
                                        value: .boolean(on))
    }
}

/// BlueZ error replies, with bluez `src/error.c` / `gatt-client.c` names and texts.
enum BlueZError {
    static let notReady = DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
    static let notConnected = DBusError(name: "org.bluez.Error.NotConnected", message: "Not Connected")
    static let busy = DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
    static let inProgress = DBusError(name: "org.bluez.Error.InProgress", message: "In Progress")
    static let invalidArgs = DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call")
    static let gattNotConnected = DBusError(name: "org.bluez.Error.Failed", message: "Not connected")
    static let leAbortByLocal = DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
    /// src/error.h `ERR_BREDR_CONN_CANCELED`.
    static let connectionCanceled = DBusError(name: "org.bluez.Error.Failed", message: "br-connection-canceled")

    /// gatt-client.c `create_gatt_dbus_error()`.
    static func att(_ code: UInt8) -> DBusError {
        switch code {
        case 0x02: DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        case 0x03: DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
        case 0x05, 0x0C, 0x0F: DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired")
        case 0x07: DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid offset")
        case 0x0D: DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid Length")
        case 0x08: DBusError(name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized")
        case 0x06: DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        case 0x00: DBusError(name: "org.bluez.Error.Failed", message: "Operation failed")
        default:
            DBusError(name: "org.bluez.Error.Failed",
                      message: "Operation failed with ATT error: 0x" + (code < 0x10 ? "0" : "") + String(code, radix: 16))
        }
    }
}

extension String {
    func replacingColons() -> String {
        String(map { $0 == ":" ? "_" : $0 }).uppercased()
    }
}
