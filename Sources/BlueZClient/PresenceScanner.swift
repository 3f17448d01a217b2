import DBus
import Logging
import Presence

/// What the presence scanner needs to know.
public struct PresenceScannerConfiguration: Sendable {
    /// The configured regions; only their proximity UUIDs are ever reported.
    public var regions: [Region]
    public var settings: PresenceSettings
    /// The adapter's name (`hci0`); nil takes the first one (the curtain's adapter on a one-adapter machine).
    public var adapterName: String?
    /// Timeout of each call to bluetoothd.
    public var callTimeout: Duration = .seconds(10)
    /// How long to wait before trying again after bluetoothd refused to start discovery.
    public var retryDelay: Duration = .seconds(2)

    public init(regions: [Region], settings: PresenceSettings = PresenceSettings(), adapterName: String? = nil) {
        self.regions = regions
        self.settings = settings
        self.adapterName = adapterName
    }

    /// The discovery filter: LE only; every advertisement reported even when its data repeats (DuplicateData, so a
    /// beacon standing still keeps being seen); and an RSSI threshold that lets everything through (-127 dBm) but
    /// makes bluetoothd report every RSSI change instead of only changes of 8 dBm or more (adapter.c
    /// `discovery_filter_has_proximity()` → device.c `device_set_rssi_with_delta(dev, rssi, 0)`).
    public static let discoveryFilter: [String: DBusValue] = [
        "Transport": .string("le"), "DuplicateData": .boolean(true), "RSSI": .int16(-127),
    ]
}

/// Whether the scanner is scanning, and why not.
public enum PresenceScanStatus: Sendable, Equatable, CustomStringConvertible {
    case starting
    case scanning(adapter: String)
    /// Not scanning; the text says why and what to do.
    case unavailable(String)

    public var description: String {
        switch self {
        case .starting: "starting"
        case .scanning(let a): "scanning on \(a)"
        case .unavailable(let why): why
        }
    }
}

/// What the scanner reports.
public enum PresenceScanEvent: Sendable, Equatable {
    case status(PresenceScanStatus)
    /// A region change; `now` is the scanner's monotonic time at that moment (compare with `Sighting.lastSeen`).
    case change(PresenceChange, now: Duration)
}

/// Scans for iBeacons through BlueZ (its own D-Bus connection, hence its own discovery session: discovery filters
/// are per client and the last SetDiscoveryFilter of a client wins, so sharing the curtain client's connection would
/// replace its filter) and feeds what it hears into a ``PresenceTracker``.
///
/// Advertisements of devices that are not iBeacons of a configured region are dropped on arrival: not kept, not
/// logged. When bluetoothd restarts (a new owner of `org.bluez`) or the adapter is powered on again, the filter
/// and StartDiscovery are applied again.
public actor PresenceScanner {
    static let bluez = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

    public let configuration: PresenceScannerConfiguration
    public nonisolated let events: AsyncStream<PresenceScanEvent>
    private let sink: AsyncStream<PresenceScanEvent>.Continuation
    private let bus: DBusConnection
    private let logger: Logger
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant
    private var tracker: PresenceTracker
    public private(set) var status: PresenceScanStatus = .starting
    private var generation = 0
    private var owner: String?
    private var adapter: DBusObjectPath?
    /// The last RSSI of beacon devices of configured regions (nothing is kept for other devices).
    private var rssi: [DBusObjectPath: Int16] = [:]

    public init(bus: DBusConnection, configuration: PresenceScannerConfiguration,
                logger: Logger = Logger(label: "roombridge.presence")) {
        self.bus = bus
        self.configuration = configuration
        self.logger = logger
        tracker = PresenceTracker(regions: configuration.regions, settings: configuration.settings)
        origin = ContinuousClock.now
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    /// A scanner with its own connection to the system bus.
    public static func onSystemBus(configuration: PresenceScannerConfiguration,
                                   logger: Logger = Logger(label: "roombridge.presence")) async throws -> PresenceScanner {
        PresenceScanner(bus: try await DBusConnection.open(.system), configuration: configuration, logger: logger)
    }

    /// Monotonic time since the scanner was made (the clock of `Sighting.lastSeen`).
    public var now: Duration { clock.now - origin }

    /// Who or what is in each configured region now.
    public var current: [(region: Region, sightings: [Sighting])] { tracker.current }

    /// Scans until cancelled. Throws only if the D-Bus connection is lost.
    public func run() async throws {
        let signals = try await bus.signals(matching: DBusMatchRule(sender: Self.bluez))
        let owners = try await bus.nameOwnerChanges(of: Self.bluez)
        let signalTask = Task { [weak self] in
            for await message in signals { await self?.ingest(message) }
        }
        let tickTask = Task { [weak self] in
            guard let period = await self?.tickPeriod else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: period)
                await self?.tick()
            }
        }
        defer {
            signalTask.cancel()
            tickTask.cancel()
            sink.finish()
        }
        for await change in owners {
            ownerChanged(change)
        }
        if !Task.isCancelled {
            setStatus(.unavailable("the D-Bus connection to bluetoothd was lost"))
            throw DBusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "the system bus connection was lost")
        }
    }

    /// Exits are checked at a quarter of `exitAfter` (between 50 ms and 1 s), so they come at most that late.
    var tickPeriod: Duration {
        min(.seconds(1), max(.milliseconds(50), configuration.settings.exitAfter / 4))
    }

    private func tick() {
        for change in tracker.tick(now: now) { sink.yield(.change(change, now: now)) }
    }

    // MARK: bluetoothd

    private func ownerChanged(_ change: DBusNameOwner) {
        generation += 1
        adapter = nil
        rssi.removeAll()
        switch change {
        case .owned(let name):
            owner = name
            setStatus(.starting)
            let gen = generation
            Task { await self.startScanning(generation: gen) }
        case .unowned:
            owner = nil
            setStatus(.unavailable("bluetoothd is not running (no owner of org.bluez): start bluetooth.service"))
        }
    }

    /// Finds the adapter and starts discovery with the filter. Runs again after a restart of bluetoothd, when the
    /// adapter comes back on, or after `retryDelay` when bluetoothd refused.
    private func startScanning(generation gen: Int) async {
        guard gen == generation else { return }
        do {
            let objects = try await bus.getManagedObjects(destination: Self.bluez, timeout: configuration.callTimeout)
            guard gen == generation else { return }
            let adapters = objects.filter { $0.value[Self.adapterInterface] != nil }.keys.sorted { $0.rawValue < $1.rawValue }
            let chosen = configuration.adapterName.map { name in adapters.first { $0.rawValue.hasSuffix("/" + name) } }
                ?? adapters.first
            guard let path = chosen else {
                setStatus(.unavailable("no Bluetooth adapter" + (configuration.adapterName.map { " named \($0)" } ?? "")
                                       + ": plug one in or check `bluetoothctl list`"))
                return
            }
            adapter = path
            guard objects[path]?[Self.adapterInterface]?["Powered"]?.unwrappingVariants == .boolean(true) else {
                setStatus(.unavailable("Bluetooth is off (\(path.rawValue.split(separator: "/").last ?? "adapter") "
                                       + "is powered off): turn it on with `bluetoothctl power on`"))
                return
            }
            for (p, ifaces) in objects where p.rawValue.hasPrefix(path.rawValue + "/") {
                if let props = ifaces[Self.deviceInterface] { heard(p, props) }
            }
            _ = try await bus.call(destination: Self.bluez, path: path, interface: Self.adapterInterface,
                                   member: "SetDiscoveryFilter",
                                   arguments: [.stringVariantDictionary(PresenceScannerConfiguration.discoveryFilter)],
                                   timeout: configuration.callTimeout)
            do {
                _ = try await bus.call(destination: Self.bluez, path: path, interface: Self.adapterInterface,
                                       member: "StartDiscovery", timeout: configuration.callTimeout)
            } catch let e as DBusError where e.name == "org.bluez.Error.InProgress" {
                // Our session already runs (this connection started it before).
            }
            guard gen == generation else { return }
            setStatus(.scanning(adapter: String(path.rawValue.split(separator: "/").last ?? "")))
        } catch {
            guard gen == generation else { return }
            setStatus(.unavailable("bluetoothd refused to scan (\(error)); retrying"))
            let delay = configuration.retryDelay
            Task {
                try? await Task.sleep(for: delay)
                await self.startScanning(generation: gen)
            }
        }
    }

    private func ingest(_ message: DBusMessage) {
        guard let member = message.member, let path = message.path else { return }
        switch (message.interface, member) {
        case (Self.propertiesInterface, "PropertiesChanged"):
            guard message.body.count >= 2, case .string(let iface) = message.body[0],
                  let changed = try? message.body[1].stringVariantDictionary() else { return }
            if iface == Self.deviceInterface {
                heard(path, changed)
            } else if iface == Self.adapterInterface, path == adapter, let powered = changed["Powered"] {
                if powered.unwrappingVariants == .boolean(true) {
                    generation += 1
                    let gen = generation
                    setStatus(.starting)
                    Task { await self.startScanning(generation: gen) }
                } else {
                    // adapter.c `adapter_stop()`: discovery sessions end with the power.
                    rssi.removeAll()
                    setStatus(.unavailable("Bluetooth is off (\(path.rawValue.split(separator: "/").last ?? "adapter") "
                                           + "was powered off): turn it on with `bluetoothctl power on`"))
                }
            }
        case (Self.objectManagerInterface, "InterfacesAdded"):
            guard message.body.count == 2, case .objectPath(let p) = message.body[0],
                  let ifaces = try? message.body[1].interfacesAndProperties() else { return }
            if let props = ifaces[Self.deviceInterface] { heard(p, props) }
            if ifaces[Self.adapterInterface] != nil, adapter == nil, owner != nil {
                let gen = generation
                Task { await self.startScanning(generation: gen) }
            }
        case (Self.objectManagerInterface, "InterfacesRemoved"):
            guard message.body.count == 2, case .objectPath(let p) = message.body[0] else { return }
            // bluetoothd forgets temporary devices (TemporaryTimeout, end of discovery); whether the beacon is
            // still around is the tracker's business (exitAfter).
            rssi[p] = nil
        default:
            return
        }
    }

    /// Device1 properties seen (added or changed): an advertisement when they carry Apple manufacturer data that is
    /// an iBeacon frame of a configured region. Anything else is dropped here.
    private func heard(_ path: DBusObjectPath, _ props: [String: DBusValue]) {
        guard let adapter, path.rawValue.hasPrefix(adapter.rawValue + "/") else { return }
        let reading: Int16? = if case .int16(let r)? = props["RSSI"]?.unwrappingVariants { r } else { nil }
        guard let frame = Self.iBeacon(in: props["ManufacturerData"]),
              configuration.regions.contains(where: { $0.contains(frame.beacon) }) else {
            // Not (or no longer) a configured beacon: an RSSI alone updates a known beacon's reading only.
            if let reading, rssi[path] != nil { rssi[path] = reading }
            return
        }
        if let reading { rssi[path] = reading }
        let level = Int(rssi[path] ?? 0)
        for change in tracker.observe(frame, rssi: level, at: now) { sink.yield(.change(change, now: now)) }
    }

    /// The iBeacon frame under Apple's company ID, if the manufacturer data holds one.
    static func iBeacon(in value: DBusValue?) -> IBeaconFrame? {
        guard case .dictionary(_, _, let entries)? = value?.unwrappingVariants else { return nil }
        for entry in entries {
            if case .uint16(appleCompanyID) = entry.key, let bytes = try? entry.value.unwrappingVariants.bytes() {
                return IBeaconFrame(manufacturerData: bytes)
            }
        }
        return nil
    }

    private func setStatus(_ new: PresenceScanStatus) {
        guard new != status else { return }
        status = new
        logger.info("presence scanning: \(new)")
        sink.yield(.status(new))
    }
}
