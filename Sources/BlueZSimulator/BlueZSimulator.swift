import CurtainProtocol
import DBus
import DBusExport
import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for bluetoothd with one adapter and one curtain controller, on a private D-Bus bus.
///
/// One file per BlueZ object: SimulatedAdapter.swift (`Adapter1`, discovery), SimulatedDevice.swift (`Device1`,
/// the link), SimulatedGATTService.swift (`GattService1`, `GattDescriptor1`), SimulatedCharacteristic.swift
/// (`GattCharacteristic1`, notify sessions); the firmware behind them in SimulatedCurtain.swift. Other kinds of
/// advertising device belong in files of their own that export their `Device1` the way SimulatedDevice.swift does.
///
/// It owns `org.bluez` and exports what BlueZ 5.66 exports (see docs/bluez-notes.md): ObjectManager at `/`,
/// `Adapter1` at `/org/bluez/hci0`, `AgentManager1` at `/org/bluez`, `Device1` for the curtain, and — after a
/// connection resolves its services — `GattService1` / `GattCharacteristic1` / `GattDescriptor1` objects, with
/// BlueZ's ordering and error names/texts. Behind the characteristics runs ``CurtainMotorModel``.
///
/// Never connect it to the machine's system bus: give it the address of a private bus.
public actor BlueZSimulator {
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
    let busAddress: String
    let logger: Logger
    var connection: DBusConnection?
    var model: any SimulatedCurtain
    /// The iBeacons around (BeaconField.swift).
    let beaconField = BeaconField()
    /// Further curtains on the same adapter (CompanionCurtains.swift).
    var companions: [BlueZSimulator] = []
    /// True for such a further curtain: it exports its device on the first simulator's connection.
    var isCompanion = false
    /// The adapter's links, shared with the companions: how many are up now and at most at once.
    let links: LinkTally

    var powered = true
    var discoverySessions: Set<String> = []
    var discoveryFilters: [String: [String]] = [:]
    var deviceExported = false
    /// Device object survives as long as it is non-temporary (it was connected once) or visible in discovery.
    var deviceNonTemporary = false
    var deviceVisible = true
    var connected = false
    var connectPending = false
    var servicesResolved = false
    var gattExported = false
    var notifySubscribers: Set<String> = []
    var notifying = false
    var linkGeneration = 0
    var failWrites: (count: Int, error: DBusError) = (0, DBusError(name: "org.bluez.Error.Failed", message: ""))
    var failConnects: (count: Int, error: DBusError) = (0, DBusError(name: "org.bluez.Error.Failed", message: ""))
    var ticker: Task<Void, Never>?
    var restarting = false
    var rssiJitter = false
    /// The RSSI bluetoothd shows; nil while the device has not been seen in the current discovery (BlueZ's 0:
    /// the property does not exist).
    var reportedRSSI: Int16?
    /// Clients whose discovery filter has DuplicateData=true (adapter.c merges them: any one enables it).
    var duplicateDataClients: Set<String> = []
    /// Set by Disconnect while a Connect is pending: that Connect fails with "br-connection-canceled".
    var connectCanceled = false
    /// Disconnect calls waiting for the disconnect timer (device.c `device_is_disconnecting()` while > 0).
    var disconnecting = 0
    /// The simulator's end of an AcquireNotify socket (one session per characteristic, like BlueZ).
    var acquiredNotifyFD: Int32?
    /// Watches that socket for the client's hang-up, like bluetoothd's io disconnect handler.
    var acquiredNotifyWatch: (any DispatchSourceRead)?
    /// Notifications bluetoothd dropped because no AcquireNotify socket existed yet (gatt-client.c `notify_io_cb`).
    public internal(set) var droppedNotifications = 0

    /// Whether the curtain advertises while connected (``Configuration/advertisesWhileConnected``).
    var advertisesWhileConnected: Bool

    /// What the device advertised last (see ``advertiseServiceData()``).
    var lastAdvertisement = CurtainAdvertisementData()

    /// Per-client watches: bluetoothd ends a client's sessions when it leaves the bus (`g_dbus_add_disconnect_watch`).
    var departureWatches: [String: Task<Void, Never>] = [:]

    /// Advertisements of the curtain bluetoothd received while discovering (reported or filtered out), for tests.
    public internal(set) var advertisementsSeen = 0

    // MARK: Paths

    nonisolated var adapterPath: DBusObjectPath { DBusObjectPath(stringLiteral: "/org/bluez/" + configuration.adapterName) }
    nonisolated var devicePath: DBusObjectPath {
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
                logger: Logger = Logger(label: "bluez-sim"), links: LinkTally = LinkTally()) {
        self.busAddress = busAddress
        self.links = links
        self.configuration = configuration
        self.logger = logger
        self.model = configuration.device.make(
            motor: CurtainMotorModel(position: configuration.initialPosition, schedule: configuration.initialSchedule,
                                     speed: configuration.speed, statusInterval: configuration.statusInterval,
                                     now: configuration.startTimeOfDay),
            address: configuration.deviceAddress)
        self.deviceNonTemporary = configuration.deviceKnownAtStart
        self.advertisesWhileConnected = configuration.advertisesWhileConnected
    }

    /// Connects to the bus, exports the objects and takes the name `org.bluez`.
    public func start() async throws {
        try await bringUpBluetoothd()
        startBeacons()
        startTicker()
        for companion in companions { await companion.startTicker() }
    }

    func startTicker() {
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
        for companion in companions { await companion.companionStop() }
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

    func bringUpBluetoothd() async throws {
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
        for companion in companions { try await companion.companionAttach(c) }
        try await c.requestName(Self.bluezName)
        logger.info("bluez-sim owns org.bluez", metadata: ["adapter": "\(adapterPath)"])
    }

    /// bluetoothd exits: the device's link, its notify sessions, the discovery sessions and the exported objects go.
    func deviceBluetoothdGone() async {
        forgetClients()
        await linkLost()
        releaseAcquiredNotify()
        discoverySessions.removeAll()
        discoveryFilters.removeAll()
        duplicateDataClients.removeAll()
        reportedRSSI = nil
        notifySubscribers.removeAll()
        notifying = false
        deviceExported = false
        gattExported = false
    }

    func restartBluetoothd(downtime: Duration) async throws {
        guard !restarting else { return }
        restarting = true
        defer { restarting = false }
        for companion in companions { await companion.companionBluetoothdGone() }
        await deviceBluetoothdGone()
        beaconsBluetoothdGone()
        if let c = connection {
            connection = nil
            await c.close()
        }
        try? await Task.sleep(for: downtime)
        try await bringUpBluetoothd()
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
        case .advertiseWhileConnected(let on):
            advertisesWhileConnected = on
        case .battery(let percent):
            await deliver(model.setBattery(percent))
        case .status:
            break
        case .beacon(let c):
            return try handleBeacon(c)
        case .timing:
            let line = "writes=" + timedWrites.map(Self.timed).joined(separator: ",")
                + " notifications=" + timedNotifications.map(Self.timed).joined(separator: ",")
                + " adverts=" + timedAdverts.map(Self.timed).joined(separator: ",")
            timedWrites.removeAll()
            timedNotifications.removeAll()
            timedAdverts.removeAll()
            return line
        }
        return statusLine
    }

    /// A one-line description of the simulated hardware.
    public var statusLine: String {
        "powered=\(powered) discovering=\(!discoverySessions.isEmpty) visible=\(deviceVisible) connected=\(connected) resolved=\(servicesResolved) "
            + "notifying=\(notifying) acquired=\(acquiredNotifyFD != nil) dropped=\(droppedNotifications) "
            + "status=\(model.status) schedule=\(model.schedule) time=\(timeOfDay) "
            + "writes=\(writes.count) keeps-advertising=\(advertisesWhileConnected) "
            + "links=\(links.current) peak-links=\(links.peak)"
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
    public internal(set) var writeCount = 0
    /// The bytes of every write to the command characteristic, accepted or not.
    public internal(set) var writes: [[UInt8]] = []
    var timedWrites: [(Double, [UInt8])] = []
    var timedNotifications: [(Double, [UInt8])] = []
    /// Advertisements bluetoothd signalled (PropertiesChanged on ServiceData/ManufacturerData), each with the
    /// position it carries as one byte, percent open: the benchmark matches them to Watch events.
    var timedAdverts: [(Double, [UInt8])] = []

    var timeOfDay: String {
        let s = Int(model.secondsOfDay)
        return "\(s / 3600):\(s / 60 % 60 < 10 ? "0" : "")\(s / 60 % 60):\(s % 60 < 10 ? "0" : "")\(s % 60)"
    }

    /// Lets simulated time pass (motor, schedule), notifying the frames it produces.
    public func advanceClock(by seconds: Double) async {
        await deliver(model.advance(by: seconds))
    }

    // MARK: Timing (for the benchmark)

    /// Seconds on CLOCK_MONOTONIC (comparable across processes on this machine).
    static func monotonicNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func timed(_ entry: (Double, [UInt8])) -> String {
        String(format: "%.6f", entry.0) + ":" + entry.1.map { String(format: "%02x", $0) }.joined()
    }

    func recordTiming(_ list: inout [(Double, [UInt8])], _ bytes: [UInt8]) {
        list.append((Self.monotonicNow(), bytes))
        if list.count > 512 { list.removeFirst(list.count - 512) }
    }

}
