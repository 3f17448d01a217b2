import BlueZClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import Presence
import RoomBridgeConfig
import RoomBridgeCore
import ServiceLifecycle
import Retry

/// Scans for the configured iBeacon regions through BlueZ (its own system-bus connection) and keeps
/// `SystemState`'s presence up to date: entries, exits and proximity changes become `presence` events; RSSI and
/// distance are refreshed every second without events. While not scanning it reports the configured default
/// place with the reason. Retries with bounded backoff when the bus is unavailable.
struct PresenceService: Service {
    let state: SystemState
    let configuration: PresenceScannerConfiguration
    let defaultPlace: String?
    /// `presence.history`: entries and exits are written to the log (the journal) only when true.
    let history: Bool
    /// The names behind the regions' user and device IDs.
    let names: RegionNames
    var backoff = Backoff(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30))
    let logger: Logger

    /// The service for `config`, or nil when no region is configured (presence stays off).
    static func configured(_ config: DaemonConfig, state: SystemState, inventory: any InventoryStore) -> PresenceService? {
        let regions = config[.presenceRegions].compactMap { try? Region(parsing: $0) }
        guard !regions.isEmpty else { return nil }
        let settings = PresenceSettings(
            exitAfter: .milliseconds(Int64(config[.presenceExitAfter] * 1000)),
            rssiWindow: .milliseconds(Int64(config[.presenceRSSIWindow] * 1000)),
            distance: DistanceModel(a: config[.presenceDistanceA], b: config[.presenceDistanceB],
                                    c: config[.presenceDistanceC]))
        let adapter = [config[.presenceAdapter], config[.curtainAdapter]].first { !$0.isEmpty }
        let place = config[.presenceDefaultPlace]
        return PresenceService(state: state,
                               configuration: PresenceScannerConfiguration(regions: regions, settings: settings,
                                                                           adapterName: adapter),
                               defaultPlace: place.isEmpty ? nil : place, history: config[.presenceHistory],
                               names: RegionNames(inventory: inventory),
                               logger: Logger(label: "roombridged.presence"))
    }

    func run() async throws {
        logger.info("presence: watching \(configuration.regions.count) region(s)")
        await publish(status: .starting, reason: nil, regions: [], change: nil)
        await cancelWhenGracefulShutdown { [self] in
            await superviseScanners()
        }
    }

    private func superviseScanners() async {
        var attempt = 0
        while !Task.isCancelled {
            let scanner: PresenceScanner
            do {
                scanner = try await abandoningOnCancel { [configuration, logger] in
                    try await PresenceScanner.onSystemBus(configuration: configuration, logger: logger)
                }
            } catch is CancellationError {
                return
            } catch {
                attempt += 1
                let delay = backoff.delay(attempt: attempt)
                await publish(status: .unavailable, reason: "cannot connect to the D-Bus system bus (\(error)): is dbus "
                              + "running (systemctl status dbus)? retrying in \(CurtainService.format(delay))",
                              regions: [], change: nil)
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                continue
            }
            attempt = 0
            for region in configuration.regions { await names.refresh(region) }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await forward(scanner) }
                group.addTask { await refresh(scanner) }
                try? await scanner.run()
                group.cancelAll()
            }
            if Task.isCancelled { return }
            attempt += 1
            let delay = backoff.delay(attempt: attempt)
            await publish(status: .unavailable, reason: "lost the connection to the D-Bus system bus; reconnecting in "
                          + CurtainService.format(delay), regions: [], change: nil)
            guard (try? await Task.sleep(for: delay)) != nil else { return }
        }
    }

    /// Carries the scanner's changes into `SystemState`.
    private func forward(_ scanner: PresenceScanner) async {
        var status: PresenceState.Status = .starting
        var reason: String?
        for await event in scanner.events {
            // An entry looks the names up again first, so the state published with it has them.
            var change: PresenceChangeEvent?
            if case .change(let c, let now) = event { change = await changeEvent(c, now: now) }
            let regions = await regionStates(scanner)
            switch event {
            case .status(let s):
                switch s {
                case .starting: (status, reason) = (.starting, nil)
                case .scanning: (status, reason) = (.scanning, nil)
                case .unavailable(let why): (status, reason) = (.unavailable, why)
                }
                await publish(status: status, reason: reason, regions: regions,
                              change: PresenceChangeEvent(kind: .status, status: status, reason: reason))
            case .change:
                guard let e = change else { continue }
                if history {
                    var parts: [String] = ["presence history:", e.kind.rawValue, e.region ?? ""]
                    if let u = e.userId { parts.append("user \(u)") }
                    if let d = e.deviceId { parts.append("device \(d)") }
                    if let b = e.beacon { parts.append("\(b.major)/\(b.minor) \(b.proximity)") }
                    logger.notice("\(parts.joined(separator: " "))")
                }
                await publish(status: status, reason: reason, regions: regions, change: e)
            }
        }
    }

    /// RSSI and distance move all the time; they are refreshed once a second without an event.
    private func refresh(_ scanner: PresenceScanner) async {
        while (try? await Task.sleep(for: .seconds(1))) != nil {
            let regions = await regionStates(scanner)
            let current = await state.presenceState()
            guard current.regions != regions else { continue }
            var new = current
            new.regions = regions
            await state.updatePresence(new, change: nil)
        }
    }

    private func publish(status: PresenceState.Status, reason: String?, regions: [PresenceRegionState],
                         change: PresenceChangeEvent?) async {
        var listed = regions
        if listed.isEmpty {
            for r in configuration.regions { listed.append(Self.regionState(r, names: await names.of(r), beacons: [])) }
        }
        let new = PresenceState(status: status, reason: reason, defaultPlace: status == .scanning ? nil : defaultPlace,
                                regions: listed)
        await state.updatePresence(new, change: change)
    }

    private func regionStates(_ scanner: PresenceScanner) async -> [PresenceRegionState] {
        let now = await scanner.now
        let wall = Date()
        var states: [PresenceRegionState] = []
        for entry in await scanner.current {
            states.append(Self.regionState(entry.region, names: await names.of(entry.region),
                                           beacons: entry.sightings.map { Self.beacon($0, now: now, wall: wall) }))
        }
        return states
    }

    private func changeEvent(_ change: PresenceChange, now: Duration) async -> PresenceChangeEvent {
        let wall = Date()
        let (kind, sighting, from): (PresenceChangeEvent.Kind, Sighting, Proximity?) = switch change {
        case .entered(let s): (.entered, s, nil)
        case .exited(let s): (.exited, s, nil)
        case .proximityChanged(let s, let before): (.proximityChanged, s, before)
        }
        let region = configuration.regions.first { $0.name == sighting.region }
        // An arrival looks the names up again, so a renamed user is greeted by the new name.
        var named = RegionNames.Names()
        if let region { named = kind == .entered ? await names.refresh(region) : await names.of(region) }
        return PresenceChangeEvent(kind: kind, region: sighting.region, userId: region?.userId, deviceId: region?.deviceId,
                                   userName: named.userName, deviceModel: named.deviceModel,
                                   beacon: Self.beacon(sighting, now: now, wall: wall), from: from?.rawValue)
    }

    static func regionState(_ r: Region, names: RegionNames.Names, beacons: [PresentBeacon]) -> PresenceRegionState {
        PresenceRegionState(region: r, userName: names.userName, deviceModel: names.deviceModel, beacons: beacons)
    }

    /// A sighting on the wire; its monotonic `lastSeen` becomes a wall-clock time.
    static func beacon(_ s: Sighting, now: Duration, wall: Date) -> PresentBeacon {
        let ago = now - s.lastSeen
        let seconds = Double(ago.components.seconds) + Double(ago.components.attoseconds) / 1e18
        return PresentBeacon(uuid: s.beacon.uuid.uuidString, major: Int(s.beacon.major), minor: Int(s.beacon.minor),
                             proximity: s.proximity.rawValue, distance: s.distance.map { ($0 * 100).rounded() / 100 },
                             rssi: s.rssi.map { ($0 * 10).rounded() / 10 }, lastSeen: wall.addingTimeInterval(-seconds))
    }
}

/// The names behind the regions' user and device IDs, looked up in the inventory when scanning starts and
/// again for a region whenever a beacon enters it. A lookup that fails keeps what was known (the IDs still
/// show); presence never waits for the database beyond that one lookup.
actor RegionNames {
    struct Names: Sendable, Equatable {
        var userName: String?
        var deviceModel: String?
    }

    private let inventory: any InventoryStore
    private var known: [String: Names] = [:]

    init(inventory: any InventoryStore) { self.inventory = inventory }

    /// Looks `region`'s names up now, remembers and returns them.
    @discardableResult
    func refresh(_ region: Region) async -> Names {
        var names = known[region.name] ?? Names()
        // A lookup that fails keeps what was known; one that finds nobody clears the name.
        if let id = region.userId {
            do { names.userName = try await inventory.user(id: id)?.name } catch {}
        }
        if let id = region.deviceId {
            do { names.deviceModel = try await inventory.device(id: id)?.device.model } catch {}
        }
        known[region.name] = names
        return names
    }

    /// The names last looked up for `region`.
    func of(_ region: Region) -> Names { known[region.name] ?? Names() }
}
