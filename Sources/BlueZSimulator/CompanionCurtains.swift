import DBus
import Synchronization

/// Several curtains on the one simulated adapter.
///
/// bluetoothd serves every device of an adapter from one process: one `org.bluez` name, one ObjectManager, one
/// `Device1` per remote address under the adapter's path (`/org/bluez/hci0/dev_AA_BB_…`, adapter.c
/// `adapter_create_device()` → device.c `device_create()`), each with its own connection, GATT database and notify
/// sessions (device.c `struct btd_device`, gatt-client.c per-device `struct btd_gatt_client`). Discovery is the
/// adapter's: a client's session and filter apply to every device (adapter.c `discovery_filter`, `device_found()`
/// checks each advertisement against the merged filters), and powering off or bluetoothd exiting takes every link.
///
/// Here each further curtain is a ``BlueZSimulator`` in companion mode: it keeps its own device state (link, GATT
/// objects, notify sessions, motor) and exports its objects on the first simulator's bus connection, which owns
/// `org.bluez`, the adapter and discovery; the first simulator tells its companions what the adapter does
/// (sessions, filters, power, restarts). Simplified: companions do not take part in `RemoveDevice` of the first
/// curtain's path nor in beacon simulation, and their connection attempts do not contend for the radio.
extension BlueZSimulator {
    /// Adds a curtain with its own address, name and firmware (`configuration`'s device fields; the adapter fields
    /// are the first simulator's). Call before ``start()``; control it through the returned simulator or
    /// ``handle(_:device:)``.
    public func addCurtain(_ configuration: Configuration) -> BlueZSimulator {
        var own = configuration
        own.adapterName = self.configuration.adapterName
        own.adapterAddress = self.configuration.adapterAddress
        let companion = BlueZSimulator(busAddress: busAddress, configuration: own, logger: logger, links: links)
        companions.append(companion)
        return companion
    }

    /// The curtain with `address` (the first simulator's or a companion's), or nil.
    public func curtain(at address: String) -> BlueZSimulator? {
        if configuration.deviceAddress == address.uppercased() { return self }
        return companions.first { $0.configuration.deviceAddress == address.uppercased() }
    }

    /// Applies a control request to the curtain at `device` (nil: the first); adapter-wide requests (power,
    /// restart, beacons) always go to the first simulator.
    public func handle(_ control: Control, device: String?) async throws -> String {
        guard let device, device.uppercased() != configuration.deviceAddress else { return try await handle(control) }
        guard let companion = companions.first(where: { $0.configuration.deviceAddress == device.uppercased() }) else {
            throw ControlCommandError("no simulated curtain has address \(device); the curtains: "
                                      + ([configuration.deviceAddress] + companions.map(\.configuration.deviceAddress))
                                      .joined(separator: ", "))
        }
        switch control {
        case .power, .restartBluetoothd, .beacon:
            return try await handle(control)
        default:
            return try await companion.handle(control)
        }
    }

    // MARK: Companion side

    /// bluetoothd (the first simulator) is up on `connection`: remembered devices come back from storage.
    func companionAttach(_ connection: DBusConnection) throws {
        isCompanion = true
        self.connection = connection
        if deviceNonTemporary { try exportDevice() }
    }

    /// bluetoothd exits: the link, the notify sessions and the objects go (with the bus connection, which the
    /// first simulator closes).
    func companionBluetoothdGone() async {
        await deviceBluetoothdGone()
        connection = nil
    }

    /// The first simulator stops: the companion's ticker and sessions end; the connection is not its to close.
    func companionStop() {
        ticker?.cancel()
        ticker = nil
        forgetClients()
        releaseAcquiredNotify()
        connection = nil
    }

    /// The adapter's discovery state, as the first simulator has it after a change.
    func companionAdopt(powered: Bool, sessions: Set<String>, filters: [String: [String]], duplicates: Set<String>) async {
        let wasPowered = self.powered
        let wasDiscovering = !discoverySessions.isEmpty
        self.powered = powered
        discoverySessions = sessions
        discoveryFilters = filters
        duplicateDataClients = duplicates
        if wasPowered, !powered { await linkLost() }
        if wasDiscovering, sessions.isEmpty { discoveryEnded() }
    }

    // MARK: First simulator's side

    /// Tells every companion the adapter's discovery state.
    func syncCompanions() async {
        for companion in companions {
            await companion.companionAdopt(powered: powered, sessions: discoverySessions, filters: discoveryFilters,
                                           duplicates: duplicateDataClients)
        }
    }

    /// Discovery found the companions too (each reports itself if it is visible and matches a filter).
    func reportCompanions() async {
        for companion in companions { try? await companion.reportDevice() }
    }
}

/// A control request that names no simulated curtain.
public struct ControlCommandError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The links up on the simulated adapter, across its curtains: now, and the most at once since the start (a test
/// reads `peak-links` to see that a central kept to its connection budget). A controller has a limited number of
/// connection slots, which bluetoothd's D-Bus API does not tell (docs/bluez-notes.md, "Connection budget"); the
/// simulated adapter sets none.
public final class LinkTally: Sendable {
    private let counts = Mutex((current: 0, peak: 0))

    public init() {}

    public var current: Int { counts.withLock { $0.current } }
    public var peak: Int { counts.withLock { $0.peak } }

    func up() {
        counts.withLock {
            $0.current += 1
            $0.peak = max($0.peak, $0.current)
        }
    }

    func down() { counts.withLock { $0.current = max(0, $0.current - 1) } }
}
