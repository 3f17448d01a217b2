import CurtainProtocol
import DBus
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// How the client subscribes to the curtain's status characteristic.
public enum CurtainNotifyMethod: String, Sendable, Hashable, CaseIterable {
    /// `StartNotify`: every notification is a PropertiesChanged on `Value`. bluetoothd delivers
    /// notifications that arrive while the CCCD write is pending (shared/gatt-client.c `notify_handler`).
    case startNotify = "start-notify"
    /// `AcquireNotify` (when the characteristic has `NotifyAcquired`): a SOCK_SEQPACKET socket, one packet per
    /// notification. bluetoothd drops notifications that arrive before the socket exists (gatt-client.c
    /// `notify_io_cb`); refused calls fall back to StartNotify.
    case acquireNotify = "acquire-notify"
}

/// Settings of the BlueZ curtain client.
public struct CurtainClientConfiguration: Sendable {
    /// Adapter name (`hci0`); nil: the first adapter BlueZ exports.
    public var adapterName: String?
    /// The curtain's address (`AA:BB:CC:DD:EE:FF`); nil: the first device advertising the curtain service.
    public var deviceAddress: String?
    /// Limit for one Device1.Connect call (BlueZ itself may take ~25 s to give up).
    public var connectTimeout: Duration = .seconds(20)
    /// Limit for ServicesResolved after the Connect reply.
    public var resolveTimeout: Duration = .seconds(30)
    /// Limit for StartNotify / WriteValue / ReadValue calls.
    public var callTimeout: Duration = .seconds(10)
    /// How to subscribe to the status characteristic. StartNotify (the default, as in bleak ≥ 3.0.2) or
    /// AcquireNotify where BlueZ offers it; see ``CurtainNotifyMethod``.
    public var notifyMethod: CurtainNotifyMethod = .startNotify
    /// How long after subscribing (and SYNC) the first notification may take before the subscription counts as
    /// deaf and is made again.
    public var firstNotificationTimeout: Duration = .seconds(5)
    /// Backoff between connection attempts and after a link loss.
    public var backoff = Backoff(initial: .milliseconds(250), multiplier: 2, maximum: .seconds(30))
    /// What kind of curtain it is (CurtainProfile.all): UUIDs, write type, wire format.
    public var profile: CurtainProfile = .roombridge
    /// The PIN for profiles that log in (AM43); nil: the profile's default.
    public var pin: UInt16?

    public init(adapterName: String? = nil, deviceAddress: String? = nil) {
        self.adapterName = adapterName
        self.deviceAddress = deviceAddress
    }
}

/// The BLE curtain over BlueZ's D-Bus API: the daemon's side of the curtain link.
///
/// ``run()`` keeps a connection to the curtain: it follows `org.bluez` on the bus, caches BlueZ's objects
/// (GetManagedObjects + InterfacesAdded/Removed + PropertiesChanged), chooses the adapter, searches with a
/// UUID discovery filter, connects, waits for ServicesResolved, subscribes to the status characteristic
/// (AcquireNotify where offered, else StartNotify) and
/// asks for STATUS + SCHEDULE, then adopts what the device notifies. Link loss and bluetoothd restarts lead to
/// a reconnect with bounded backoff. Commands fail at once with ``CurtainError/notConnected`` while there is
/// no connection (nothing is queued). See docs/bluez-notes.md for the BlueZ behaviour this relies on.
public actor CurtainClient {
    static let bluez = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

    /// Events for the daemon's `SystemState` (connection, adapter, STATUS, SCHEDULE, errors).
    public nonisolated let events: AsyncStream<CurtainEvent>
    private let eventSink: AsyncStream<CurtainEvent>.Continuation

    private let bus: DBusConnection
    private let configuration: CurtainClientConfiguration
    private let logger: Logger

    /// The current view of the curtain.
    public private(set) var snapshot = CurtainSnapshot()

    // Object cache of org.bluez.
    private var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
    private var bluezOwner: String?
    private var bluezGeneration = 0
    private var cacheLoaded = false
    /// The first answer about `org.bluez`'s owner arrived (until then "no owner" only means "not asked yet").
    private var ownerKnown = false
    /// Connected=true notifications seen per device (see ``connect(device:generation:)``).
    private var connectedUps: [DBusObjectPath: Int] = [:]
    private var busIsClosed = false

    // Current link.
    private var devicePath: DBusObjectPath?
    private var commandPath: DBusObjectPath?
    private var statusPath: DBusObjectPath?
    private var linkUp = false
    /// Counts links, so packets from an old AcquireNotify socket are ignored.
    private var linkSerial = 0
    private var notifyReader: NotifySocketReader?
    /// How the current subscription was made (nil while there is none).
    private var subscribedWith: CurtainNotifyMethod?
    /// Notifications received since the current subscription was made.
    private var notificationsSinceSubscribe = 0
    /// Why the notification stream of the current subscription ended while the link was up (nil: it has not).
    private var notifyFault: String?
    /// Notify faults on the current link; decides the recovery (``NotifyRecovery``). Reset when the link goes.
    private var notifyFaultsOnLink = 0
    /// The method for the next subscription on this link, when a recovery chose one.
    private var recoveryNotifyMethod: CurtainNotifyMethod?
    private var reconnectRequested = false
    /// Set by ``reconnect()``: the next search runs discovery and takes only a device reported during it.
    private var forceSearch = false
    /// Devices reported (added, or RSSI/ServiceData changed) since the current discovery started.
    private var freshDevices: Set<DBusObjectPath> = []

    private var changeWaiters: [CheckedContinuation<Void, Never>] = []
    /// Status, battery, light and manual operation of profiles without a STATUS frame (SwitchBot, AM43).
    private var tracker = CurtainStateTracker()
    /// The request whose reply is awaited (SwitchBot replies do not say what they answer).
    private var pendingRequest: CurtainRequest?
    private var profile: CurtainProfile { configuration.profile }

    /// Creates a client on `bus` (the system bus in production; a private bus with bluez-sim in tests).
    public init(bus: DBusConnection, configuration: CurtainClientConfiguration = CurtainClientConfiguration(),
                logger: Logger = Logger(label: "roombridge.curtain")) {
        self.bus = bus
        self.configuration = configuration
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: CurtainEvent.self, bufferingPolicy: .bufferingNewest(4096))
    }

    /// A client on the system bus (where bluetoothd lives), for the daemon.
    public static func onSystemBus(configuration: CurtainClientConfiguration = CurtainClientConfiguration(),
                                   logger: Logger = Logger(label: "roombridge.curtain")) async throws -> CurtainClient {
        CurtainClient(bus: try await DBusConnection.open(.system), configuration: configuration, logger: logger)
    }

    // MARK: Public API

    /// Keeps the curtain connected until the task is cancelled. Throws only if the bus connection itself is lost
    /// (then open a new connection and a new client). Call it once per client.
    public func run() async throws {
        let signals = try await bus.signals(matching: DBusMatchRule(sender: Self.bluez))
        let owners = try await bus.nameOwnerChanges(of: Self.bluez)
        let signalTask = Task { [weak self] in
            for await message in signals { await self?.ingest(message) }
            await self?.busClosed()
        }
        let ownerTask = Task { [weak self] in
            for await owner in owners { await self?.ownerChanged(owner) }
        }
        let scheduleTask = profile.keepsSchedule ? nil : Task { [weak self] in await self?.runDaemonSchedule() }
        defer {
            signalTask.cancel()
            ownerTask.cancel()
            scheduleTask?.cancel()
            eventSink.finish()
        }
        report(.profile(profile.id, keepsSchedule: profile.keepsSchedule))
        var attempt = 0
        while !Task.isCancelled {
            do {
                try await connectOnce()
                attempt = 0
                try await waitUntilLinkLost()
            } catch is CancellationError {
                break
            } catch let e as BusLost {
                await linkDown(detail: "the D-Bus connection was lost")
                throw e.error
            } catch let fault as NotifyFault {
                await recover(from: fault)
                continue
            } catch let stop as Restart {
                logger.debug("restarting connection cycle: \(stop.reason)")
                if stop.immediate || reconnectRequested {
                    reconnectRequested = false
                    await linkDown(detail: stop.reason)
                    continue
                }
            } catch {
                logger.info("curtain connection attempt failed: \(error)")
            }
            await linkDown(detail: nil)
            attempt += 1
            if reconnectRequested {
                reconnectRequested = false
                attempt = 0
                continue
            }
            let delay = configuration.backoff.delay(attempt: attempt)
            do {
                try await pause(delay) { self.reconnectRequested }
            } catch {
                break
            }
        }
        await linkDown(detail: "stopped")
    }

    /// Sends a command: validated, refused while a wall-switch motion is in progress (manual priority), refused
    /// at once while not connected, then written with `type=request` so the controller's errors come back.
    public func send(_ command: CurtainCommand) async throws(CurtainError) {
        // Validation and manual priority are the same for every profile; the bytes come from its codec.
        _ = try CurtainCommandGate.prepare(command, status: snapshot.status)
        let frames: [[UInt8]]
        do throws(CurtainCommandError) {
            frames = try profile.codec.frames(for: .command(command))
        } catch {
            throw .invalidCommand(error)
        }
        if case .setSchedule(let s) = command, !profile.keepsSchedule {
            // The device keeps no schedule: the daemon keeps it (scheduleSource daemon).
            report(.schedule(s))
            return
        }
        guard linkUp, let path = commandPath else {
            report(.error(.notConnected))
            throw .notConnected
        }
        do {
            tracker.commanded(command)
            try await write(frames, for: .command(command), to: path)
        } catch {
            let mapped = Self.map(error)
            report(.error(mapped))
            throw mapped
        }
    }

    /// For curtains that keep no schedule: fires the schedule set through ``setSchedule(_:)`` at its local times
    /// (open or close, like the controller's own schedule; refused like any command while a manual motion runs or
    /// while not connected). The wait is re-evaluated at least every 30 s, so a changed schedule or clock counts.
    private func runDaemonSchedule() async {
        while !Task.isCancelled {
            var wait = 30.0
            if let schedule = snapshot.schedule, let next = schedule.nextFiring(afterSecondsOfDay: Self.localSecondsOfDay()) {
                if next.delay <= 0.5 {
                    logger.info("daemon-kept schedule fires: \(next.command)")
                    do throws(CurtainError) { try await send(next.command) } catch {
                        logger.warning("the scheduled \(next.command) failed: \(error)")
                    }
                    wait = 1
                } else {
                    wait = min(next.delay - 0.25, 30)
                }
            }
            do { try await Task.sleep(for: .seconds(wait)) } catch { return }
        }
    }

    /// Seconds since local midnight (the time zone of the machine, as the schedule's HH:MM means).
    static func localSecondsOfDay() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var parts = tm()
        localtime_r(&t, &parts)
        return Double(parts.tm_hour * 3600 + parts.tm_min * 60 + parts.tm_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Writes a request's frames with the profile's write type, remembering which reply is awaited.
    private func write(_ frames: [[UInt8]], for request: CurtainRequest, to path: DBusObjectPath) async throws {
        for frame in frames {
            pendingRequest = request
            try await writeRequest(frame, to: path)
        }
    }

    /// OPEN.
    public func open() async throws(CurtainError) { try await send(.open) }
    /// CLOSE.
    public func close() async throws(CurtainError) { try await send(.close) }
    /// STOP.
    public func stop() async throws(CurtainError) { try await send(.stop) }
    /// MOVE_TO a position, 0–100 % open.
    public func move(to position: Int) async throws(CurtainError) { try await send(.moveTo(position)) }
    /// SET_SCHEDULE; the device answers with SCHEDULE, which is then adopted.
    public func setSchedule(_ schedule: CurtainSchedule) async throws(CurtainError) {
        try await send(.setSchedule(schedule))
    }
    /// SYNC: the device answers with STATUS and SCHEDULE.
    public func sync() async throws(CurtainError) { try await send(.sync) }

    /// Drops the current link (if any) and searches for the curtain again.
    public func reconnect() async {
        let previous = devicePath
        let wasUp = linkUp
        reconnectRequested = true
        forceSearch = true
        devicePath = nil
        linkUp = false
        setConnection(.searching, detail: "reconnect requested")
        if let previous, wasUp {
            _ = try? await bus.call(destination: Self.bluez, path: previous, interface: Self.deviceInterface,
                                    member: "Disconnect", timeout: configuration.callTimeout)
        }
        changed()
    }

    // MARK: Connection cycle

    struct BusLost: Error {
        var error = DBusError.disconnected("the bus connection of the curtain client closed")
    }

    /// The notification stream ended, or stayed silent after subscribing, while the link was up.
    struct NotifyFault: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    struct Restart: Error, CustomStringConvertible {
        var reason: String
        var immediate = false
        var description: String { reason }
    }

    private func connectOnce() async throws {
        let generation = try await waitForBlueZ()
        let adapter = try await waitForAdapter(generation: generation)
        let device = try await findDevice(adapter: adapter, generation: generation)
        try await connect(device: device, generation: generation)
        try await subscribe(device: device, generation: generation)
    }

    /// Waits for org.bluez, loads its objects.
    private func waitForBlueZ() async throws -> Int {
        if busIsClosed { throw BusLost() }
        if !ownerKnown {
            try await until(timeout: nil) { () -> Bool? in
                if self.busIsClosed { throw BusLost() }
                return self.ownerKnown ? true : nil
            }
        }
        if bluezOwner == nil {
            setAdapter(.serviceUnavailable)
            setConnection(.disconnected, detail: BluetoothAdapterState.serviceUnavailable.description)
            try await until(timeout: nil) { () -> Bool? in
                if self.busIsClosed { throw BusLost() }
                return self.bluezOwner != nil ? true : nil
            }
        }
        let generation = bluezGeneration
        if !cacheLoaded {
            let loaded: [DBusObjectPath: [String: [String: DBusValue]]]
            do {
                loaded = try await bus.getManagedObjects(destination: Self.bluez, timeout: configuration.callTimeout)
            } catch let e as DBusError {
                if e.name == "org.freedesktop.DBus.Error.AccessDenied" {
                    report(.error(.bluetooth(name: e.name, message: "access to org.bluez was denied (\(e.message)): "
                                             + "install the D-Bus policy dbus/roombridge.conf for the service user")))
                } else {
                    report(.error(CurtainError.fromBlueZ(name: e.name, message: e.message)))
                }
                throw Restart(reason: "GetManagedObjects failed: \(e)")
            }
            guard generation == bluezGeneration else { throw Restart(reason: "bluetoothd restarted", immediate: true) }
            objects = loaded
            cacheLoaded = true
        }
        return generation
    }

    private func adapterPath() -> DBusObjectPath? {
        let adapters = objects.filter { $0.value[Self.adapterInterface] != nil }.keys.sorted()
        if let name = configuration.adapterName {
            return adapters.first { $0.rawValue == "/org/bluez/" + name }
        }
        return adapters.first
    }

    private func waitForAdapter(generation: Int) async throws -> DBusObjectPath {
        try await until(timeout: nil) { () -> DBusObjectPath? in
            try self.checkGeneration(generation)
            guard let path = self.adapterPath() else {
                self.setAdapter(.noAdapter)
                self.setConnection(.disconnected, detail: BluetoothAdapterState.noAdapter.description)
                return nil
            }
            guard self.property(path, Self.adapterInterface, "Powered") == .boolean(true) else {
                self.setAdapter(.poweredOff(path: path.rawValue))
                self.setConnection(.disconnected, detail: self.snapshot.adapter.description)
                return nil
            }
            self.setAdapter(.poweredOn(path: path.rawValue))
            return path
        }
    }

    private func matchingDevice(adapter: DBusObjectPath) -> DBusObjectPath? {
        let candidates = objects.filter { path, ifaces in
            guard let dev = ifaces[Self.deviceInterface], dev["Adapter"] == .objectPath(adapter) else { return false }
            if let wanted = configuration.deviceAddress {
                return (try? dev["Address"]?.string())?.uppercased() == wanted.uppercased()
            }
            let uuids = (try? dev["UUIDs"]?.stringArray()) ?? []
            let serviceData = (try? dev["ServiceData"]?.stringVariantDictionary()) ?? [:]
            return uuids.contains { CurtainUUID.matches($0, self.profile.serviceUUID) }
                || serviceData.keys.contains { CurtainUUID.matches($0, self.profile.serviceUUID) }
        }
        return candidates.keys.sorted().first
    }

    /// The configured (or first matching) curtain; discovery with a UUID filter while it is not known.
    private func findDevice(adapter: DBusObjectPath, generation: Int) async throws -> DBusObjectPath {
        let fresh = forceSearch
        forceSearch = false
        if !fresh, let known = matchingDevice(adapter: adapter) {
            return chooseDevice(known)
        }
        setConnection(.searching, detail: nil)
        freshDevices.removeAll()
        do {
            _ = try await bus.call(destination: Self.bluez, path: adapter, interface: Self.adapterInterface,
                                   member: "SetDiscoveryFilter",
                                   arguments: [.stringVariantDictionary([
                                       "UUIDs": .stringArray([profile.serviceUUID]),
                                       "Transport": .string("le"),
                                   ])], timeout: configuration.callTimeout)
            _ = try await bus.call(destination: Self.bluez, path: adapter, interface: Self.adapterInterface,
                                   member: "StartDiscovery", timeout: configuration.callTimeout)
        } catch let e as DBusError where e.name == "org.bluez.Error.InProgress" {
            // Our own session is still running (e.g. after a reconnect request): keep it.
        } catch let e as DBusError {
            throw Restart(reason: "discovery failed: \(e)")
        }
        defer {
            Task { [bus, configuration] in
                _ = try? await bus.call(destination: Self.bluez, path: adapter, interface: Self.adapterInterface,
                                        member: "StopDiscovery", timeout: configuration.callTimeout)
            }
        }
        let found = try await until(timeout: nil) { () -> DBusObjectPath? in
            try self.checkGeneration(generation)
            try self.checkAdapterPowered(adapter)
            guard let found = self.matchingDevice(adapter: adapter) else { return nil }
            return !fresh || self.freshDevices.contains(found) ? found : nil
        }
        return chooseDevice(found)
    }

    private func chooseDevice(_ path: DBusObjectPath) -> DBusObjectPath {
        if devicePath != path {
            devicePath = path
            let address = (try? property(path, Self.deviceInterface, "Address")?.string()) ?? path.rawValue
            let name = try? property(path, Self.deviceInterface, "Name")?.string()
            report(.device(address: address, name: name))
        }
        return path
    }

    /// Device1.Connect, then ServicesResolved (the reply comes before the GATT objects exist).
    private func connect(device: DBusObjectPath, generation: Int) async throws {
        setConnection(.connecting, detail: nil)
        // BlueZ emits Connected=true before the Connect reply, but signals are ingested on their own task, so the
        // reply can overtake it: a cached Connected=false only means "disconnected" once this attempt's
        // Connected=true has been seen.
        let upsBefore = connectedUps[device, default: 0]
        var calledConnect = false
        if property(device, Self.deviceInterface, "Connected") != .boolean(true) {
            calledConnect = true
            do {
                _ = try await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                       member: "Connect", timeout: configuration.connectTimeout)
            } catch let e as DBusError {
                if e.name == "org.freedesktop.DBus.Error.NoReply" {
                    // Cancel the pending attempt as bleak does (Disconnect cancels a pending Connect).
                    _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                            member: "Disconnect", timeout: configuration.callTimeout)
                }
                let kind = BlueZErrorClass(name: e.name, message: e.message)
                report(.error(CurtainError.fromBlueZ(name: e.name, message: e.message)))
                switch kind {
                case .deviceMissing:
                    devicePath = nil
                    throw Restart(reason: "device vanished: \(e)", immediate: true)
                default:
                    throw Restart(reason: "Connect failed (\(kind)): \(e)")
                }
            }
        }
        try await until(timeout: configuration.resolveTimeout) { () -> Bool? in
            try self.checkGeneration(generation)
            guard self.objects[device]?[Self.deviceInterface] != nil else {
                throw Restart(reason: "device removed while resolving services")
            }
            if self.property(device, Self.deviceInterface, "ServicesResolved") == .boolean(true) { return true }
            if self.property(device, Self.deviceInterface, "Connected") == .boolean(false),
               !calledConnect || self.connectedUps[device, default: 0] > upsBefore {
                throw Restart(reason: "disconnected before services were resolved")
            }
            return nil
        }
    }

    /// Finds the characteristics by UUID, subscribes, then asks for STATUS + SCHEDULE (SYNC).
    private func subscribe(device: DBusObjectPath, generation: Int) async throws {
        guard let command = characteristic(profile.writeCharacteristicUUID, under: device),
              let status = characteristic(profile.notifyCharacteristicUUID, under: device) else {
            report(.error(.bluetooth(name: "curtain.NotACurtain",
                                     message: "the device has no \(profile.displayName) service \(profile.serviceUUID): "
                                        + "check curtain.profile and curtain.address")))
            _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                    member: "Disconnect", timeout: configuration.callTimeout)
            devicePath = nil
            throw Restart(reason: "not a curtain")
        }
        commandPath = command
        statusPath = status
        linkSerial += 1
        notifyFault = nil
        notificationsSinceSubscribe = 0
        let method = recoveryNotifyMethod ?? configuration.notifyMethod
        do {
            if method == .acquireNotify, try await acquireNotify(status) {
                subscribedWith = .acquireNotify
            } else {
                subscribedWith = .startNotify
                _ = try await bus.call(destination: Self.bluez, path: status, interface: Self.characteristicInterface,
                                       member: "StartNotify", timeout: configuration.callTimeout)
            }
            try checkGeneration(generation)
            linkUp = true
            // StartNotify may be a no-op when BlueZ kept an earlier session, and bluetoothd drops what the device
            // notifies before an AcquireNotify socket exists (gatt-client.c `notify_io_cb`): SYNC makes the device
            // send STATUS then SCHEDULE in every case, and we adopt them (the device is the source of truth).
            if case .pin(let defaultPIN) = profile.login {
                try await write(try profile.codec.frames(for: .login(pin: configuration.pin ?? defaultPIN)),
                                for: .login(pin: configuration.pin ?? defaultPIN), to: command)
            }
            try await write(try profile.codec.frames(for: .command(.sync)), for: .command(.sync), to: command)
            if profile.motionFromAdvertisements { await watchAdvertisements(device: device) }
        } catch let e as DBusError {
            linkUp = false
            throw Restart(reason: "subscribe failed: \(e)")
        }
        // Only a subscription that is heard counts as connected: never "connected" and deaf.
        do {
            try await until(timeout: configuration.firstNotificationTimeout) { () -> Bool? in
                try self.checkGeneration(generation)
                try self.checkLinkUp(device)
                if let fault = self.notifyFault { throw NotifyFault(reason: fault) }
                return self.notificationsSinceSubscribe > 0 ? true : nil
            }
        } catch CurtainError.timeout {
            throw NotifyFault(reason: "no notification arrived within \(configuration.firstNotificationTimeout) "
                              + "of subscribing (\(method.rawValue)) and asking for STATUS")
        }
        setConnection(.connected, detail: nil)
    }

    /// What to do after the notification stream of a link ended while the link stayed up.
    enum NotifyRecovery: Equatable {
        /// Subscribe again on the same link, with this method.
        case subscribeAgain(CurtainNotifyMethod)
        /// Disconnect and connect again.
        case reconnect

        /// First fault: the configured method again (bluetoothd may simply have ended the session); second: StartNotify
        /// (what bleak falls back to when AcquireNotify misbehaves); then a new link.
        static func after(faults: Int, configured: CurtainNotifyMethod) -> NotifyRecovery {
            switch faults {
            case 0, 1: .subscribeAgain(configured)
            case 2 where configured == .acquireNotify: .subscribeAgain(.startNotify)
            default: .reconnect
            }
        }
    }

    /// Logs the fault, shows it (last error, connection state) and prepares the recovery; the connection cycle then
    /// runs again at once (subscribing on the same link, or connecting anew).
    private func recover(from fault: NotifyFault) async {
        notifyFaultsOnLink += 1
        let recovery = NotifyRecovery.after(faults: notifyFaultsOnLink, configured: configuration.notifyMethod)
        let action: String
        switch recovery {
        case .subscribeAgain(let m): action = "subscribing again (\(m.rawValue))"
        case .reconnect: action = "reconnecting"
        }
        logger.warning("curtain notifications stopped while connected: \(fault.reason); \(action)")
        report(.error(.bluetooth(name: "curtain.NotificationsStopped",
                                 message: "notifications from the curtain stopped while connected (\(fault.reason)); "
                                 + action)))
        endSubscription()
        switch recovery {
        case .subscribeAgain(let method):
            recoveryNotifyMethod = method
            setConnection(.connecting, detail: "notifications stopped; \(action)")
        case .reconnect:
            if let device = devicePath {
                _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                        member: "Disconnect", timeout: configuration.callTimeout)
                // Wait for BlueZ to report the link down, so that the next cycle connects anew.
                _ = try? await until(timeout: configuration.callTimeout) { () -> Bool? in
                    self.property(device, Self.deviceInterface, "Connected") == .boolean(true) ? nil : true
                }
            }
            await linkDown(detail: "notifications stopped; reconnecting")
        }
    }

    private func checkLinkUp(_ device: DBusObjectPath) throws {
        guard objects[device]?[Self.deviceInterface] != nil else { throw Restart(reason: "device removed") }
        if property(device, Self.deviceInterface, "ServicesResolved") != .boolean(true)
            || property(device, Self.deviceInterface, "Connected") != .boolean(true) {
            throw Restart(reason: "link lost")
        }
    }

    private func waitUntilLinkLost() async throws {
        guard let device = devicePath else { return }
        let generation = bluezGeneration
        try await until(timeout: nil) { () -> Bool? in
            try self.checkGeneration(generation)
            if self.reconnectRequested { throw Restart(reason: "reconnect requested", immediate: true) }
            try self.checkLinkUp(device)
            if let fault = self.notifyFault { throw NotifyFault(reason: fault) }
            return nil
        }
    }

    /// AcquireNotify when offered; returns false to fall back to StartNotify.
    private func acquireNotify(_ status: DBusObjectPath) async throws -> Bool {
        guard bus.canPassUnixFDs,
              property(status, Self.characteristicInterface, "NotifyAcquired") != nil else { return false }
        let reply: [DBusValue]
        do {
            reply = try await bus.call(destination: Self.bluez, path: status, interface: Self.characteristicInterface,
                                       member: "AcquireNotify", arguments: [.stringVariantDictionary([:])],
                                       timeout: configuration.callTimeout)
        } catch let e as DBusError where ["org.bluez.Error.NotSupported", "org.bluez.Error.NotPermitted",
                                          "org.bluez.Error.InProgress"].contains(e.name) {
            logger.debug("AcquireNotify refused (\(e)); using StartNotify")
            return false
        }
        guard let value = reply.first, let fd = try? value.unixFD() else {
            throw DBusError.failed("AcquireNotify returned no file descriptor")
        }
        let reader = NotifySocketReader(fd: fd.take())
        notifyReader?.stop()
        notifyReader = reader
        let serial = linkSerial
        Task { [weak self] in
            for await item in reader.items {
                switch item {
                case .packet(let packet): await self?.adoptNotified(packet, serial: serial)
                case .ended(let reason, let stopped): await self?.notifyStreamEnded(reason, stopped: stopped, serial: serial)
                }
            }
        }
        return true
    }

    private func adoptNotified(_ value: [UInt8], serial: Int) {
        guard serial == linkSerial else { return }
        notificationsSinceSubscribe += 1
        adoptValue(value)
        changed()
    }

    /// A notified value, decoded with the profile's codec into events (STATUS and SCHEDULE as they are; the pieces
    /// other devices report folded into a status by the tracker).
    private func adoptValue(_ value: [UInt8]) {
        guard profile.id != .roombridge else {
            for event in CurtainSnapshot.events(fromStatusValue: value) { report(event) }
            return
        }
        do throws(CurtainDecodeError) {
            let events = try profile.codec.decode(notification: value, replyingTo: pendingRequest)
            pendingRequest = nil
            adoptDeviceEvents(events)
        } catch {
            report(.error(.bluetooth(name: "curtain.BadFrame", message: "ignored a malformed notification: \(error)")))
        }
    }

    private func adoptDeviceEvents(_ events: [CurtainDeviceEvent]) {
        let before = (tracker.battery, tracker.light)
        if let status = tracker.apply(events) { report(.status(status)) }
        for case .refused(let e) in events {
            let refusal = e.given(calibrated: tracker.calibrated)
            logger.warning("curtain refused a request: \(refusal)")
            report(.error(.refusedByCurtain(refusal)))
        }
        if tracker.battery != before.0 || tracker.light != before.1 {
            report(.levels(battery: tracker.battery, light: tracker.light))
        }
    }

    /// Devices that advertise their motion (SwitchBot) are heard through discovery while connected; filter on their
    /// service so that bluetoothd reports nothing else.
    private func watchAdvertisements(device: DBusObjectPath) async {
        guard let adapter = property(device, Self.deviceInterface, "Adapter"), case .objectPath(let a) = adapter else {
            return
        }
        _ = try? await bus.call(destination: Self.bluez, path: a, interface: Self.adapterInterface,
                                member: "SetDiscoveryFilter",
                                arguments: [.stringVariantDictionary([
                                    "UUIDs": .stringArray([profile.serviceUUID]), "Transport": .string("le"),
                                ])], timeout: configuration.callTimeout)
        _ = try? await bus.call(destination: Self.bluez, path: a, interface: Self.adapterInterface,
                                member: "StartDiscovery", timeout: configuration.callTimeout)
    }

    private func adoptAdvertisement(of device: DBusObjectPath) {
        let serviceData = ((try? property(device, Self.deviceInterface, "ServiceData")?.stringVariantDictionary()) ?? [:])
            .compactMapValues { try? $0.unwrappingVariants.bytes() }
        var manufacturerData: [UInt16: [UInt8]] = [:]
        if case .dictionary(_, _, let entries)? = property(device, Self.deviceInterface, "ManufacturerData") {
            for entry in entries {
                if case .uint16(let id) = entry.key, let bytes = try? entry.value.unwrappingVariants.bytes() {
                    manufacturerData[id] = bytes
                }
            }
        }
        adoptDeviceEvents(profile.codec.decode(
            advertisement: CurtainAdvertisementData(serviceData: serviceData, manufacturerData: manufacturerData)))
    }

    /// The AcquireNotify socket of subscription `serial` ended. Unless we stopped it, that is a fault: bluetoothd
    /// ended the session (gatt-client.c `sock_hup`/`destroy_sock`) or the socket failed, and no notification
    /// would ever arrive again.
    private func notifyStreamEnded(_ reason: String, stopped: Bool, serial: Int) {
        guard serial == linkSerial, !stopped, notifyFault == nil else { return }
        notifyFault = reason
        changed()
    }

    /// Ends the current subscription on our side (closes an AcquireNotify socket; later packets are ignored).
    private func endSubscription() {
        notifyReader?.stop()
        notifyReader = nil
        subscribedWith = nil
        notifyFault = nil
        linkSerial += 1
        linkUp = false
    }

    private func linkDown(detail: String?) async {
        endSubscription()
        tracker.linkLost()
        pendingRequest = nil
        notifyFaultsOnLink = 0
        recoveryNotifyMethod = nil
        commandPath = nil
        statusPath = nil
        if snapshot.connection != .disconnected {
            setConnection(.disconnected, detail: detail ?? "link lost; reconnecting")
        }
    }

    // MARK: GATT helpers

    private func characteristic(_ uuid: String, under device: DBusObjectPath) -> DBusObjectPath? {
        objects.filter { path, ifaces in
            guard path.isDescendant(of: device), let c = ifaces[Self.characteristicInterface],
                  let u = try? c["UUID"]?.string() else { return false }
            return CurtainUUID.matches(u, uuid)
        }.keys.sorted().first
    }

    private func writeRequest(_ bytes: [UInt8], to path: DBusObjectPath) async throws {
        var attempts = 0
        while true {
            do {
                _ = try await bus.call(destination: Self.bluez, path: path, interface: Self.characteristicInterface,
                                       member: "WriteValue",
                                       arguments: [.bytes(bytes),
                                                   .stringVariantDictionary(["type": .string(profile.writeType.rawValue)])],
                                       timeout: configuration.callTimeout)
                return
            } catch let e as DBusError where e.name == "org.bluez.Error.InProgress" && attempts < 20 {
                // Another write is pending on the characteristic (gatt-client.c); bleak retries after 10 ms.
                attempts += 1
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    static func map(_ error: any Error) -> CurtainError {
        if let e = error as? DBusError {
            if e.name == DBusError.disconnectedName { return .bluetoothServiceUnavailable }
            return CurtainError.fromBlueZ(name: e.name, message: e.message)
        }
        if error is CancellationError { return .timeout("cancelled") }
        return .bluetooth(name: "unknown", message: "\(error)")
    }

    // MARK: Signals and cache

    private func ownerChanged(_ owner: DBusNameOwner) {
        let newOwner: String?
        switch owner {
        case .owned(let name): newOwner = name
        case .unowned: newOwner = nil
        }
        if !ownerKnown {
            ownerKnown = true
            changed()
        }
        guard newOwner != bluezOwner else { return }
        bluezOwner = newOwner
        bluezGeneration += 1
        objects.removeAll()
        cacheLoaded = false
        linkUp = false
        if newOwner == nil {
            setAdapter(.serviceUnavailable)
            setConnection(.disconnected, detail: BluetoothAdapterState.serviceUnavailable.description)
        }
        changed()
    }

    private func ingest(_ message: DBusMessage) {
        guard let member = message.member, let path = message.path else { return }
        switch (message.interface, member) {
        case (Self.propertiesInterface, "PropertiesChanged"):
            guard message.body.count >= 2, case .string(let iface) = message.body[0],
                  let changedProps = try? message.body[1].stringVariantDictionary() else { return }
            let invalidated = (message.body.count > 2 ? try? message.body[2].stringArray() : nil) ?? []
            if iface == Self.deviceInterface, changedProps["RSSI"] != nil || changedProps["ServiceData"] != nil {
                freshDevices.insert(path)
            }
            if iface == Self.deviceInterface, changedProps["Connected"] == .boolean(true) {
                connectedUps[path, default: 0] += 1
            }
            if objects[path]?[iface] != nil {
                for (k, v) in changedProps { objects[path]?[iface]?[k] = v }
                for k in invalidated { objects[path]?[iface]?[k] = nil }
            }
            if iface == Self.deviceInterface, path == devicePath, linkUp, profile.motionFromAdvertisements,
               changedProps["ServiceData"] != nil || changedProps["ManufacturerData"] != nil {
                adoptAdvertisement(of: path)
            }
            if iface == Self.characteristicInterface, path == statusPath {
                if case .bytes(let value)? = changedProps["Value"] {
                    notificationsSinceSubscribe += 1
                    adoptValue(value)
                }
                // A StartNotify session that bluetoothd ended while the link is up (the signals of a link loss,
                // ServicesResolved=false first, arrive before this one).
                if changedProps["Notifying"] == .boolean(false), subscribedWith == .startNotify, notifyFault == nil,
                   let device = devicePath, (try? checkLinkUp(device)) != nil {
                    notifyFault = "bluetoothd reports Notifying=false"
                }
            }
        case (Self.objectManagerInterface, "InterfacesAdded"):
            guard message.body.count == 2, case .objectPath(let p) = message.body[0],
                  let ifaces = try? message.body[1].interfacesAndProperties() else { return }
            for (name, props) in ifaces { objects[p, default: [:]][name] = props }
            if ifaces[Self.deviceInterface] != nil { freshDevices.insert(p) }
        case (Self.objectManagerInterface, "InterfacesRemoved"):
            guard message.body.count == 2, case .objectPath(let p) = message.body[0],
                  let names = try? message.body[1].stringArray() else { return }
            for name in names { objects[p]?[name] = nil }
            if objects[p]?.isEmpty == true { objects[p] = nil }
        default:
            return
        }
        changed()
    }

    private func property(_ path: DBusObjectPath, _ iface: String, _ name: String) -> DBusValue? {
        objects[path]?[iface]?[name]
    }

    private func busClosed() {
        busIsClosed = true
        changed()
    }

    private func checkGeneration(_ generation: Int) throws {
        if busIsClosed { throw BusLost() }
        if generation != bluezGeneration || bluezOwner == nil {
            throw Restart(reason: "bluetoothd restarted or left the bus", immediate: bluezOwner != nil)
        }
    }

    private func checkAdapterPowered(_ adapter: DBusObjectPath) throws {
        guard objects[adapter]?[Self.adapterInterface] != nil else { throw Restart(reason: "adapter removed", immediate: true) }
        if property(adapter, Self.adapterInterface, "Powered") != .boolean(true) {
            throw Restart(reason: "adapter powered off", immediate: true)
        }
    }

    // MARK: Events

    private func report(_ event: CurtainEvent) {
        let changed = snapshot.apply(event)
        switch event {
        case .error, .deviceError, .device: eventSink.yield(event)
        default: if changed { eventSink.yield(event) }
        }
    }

    private func setConnection(_ state: CurtainConnectionState, detail: String?) {
        guard snapshot.connection != state else { return }
        if state != .connected { linkUp = false }
        report(.connection(state, detail: detail))
    }

    private func setAdapter(_ state: BluetoothAdapterState) {
        report(.adapter(state))
    }

    // MARK: Waiting

    private func changed() {
        let waiters = changeWaiters
        changeWaiters.removeAll()
        for w in waiters { w.resume() }
    }

    /// Re-evaluates `check` after every cache/state change until it returns a value or throws; throws
    /// ``CurtainError/timeout(_:)`` after `timeout`.
    @discardableResult
    private func until<T>(timeout: Duration?, _ check: () throws -> T?) async throws -> T {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        let timer = startTimer(deadline)
        defer { timer?.cancel() }
        while true {
            try Task.checkCancellation()
            if let value = try check() { return value }
            if let deadline, clock.now >= deadline { throw CurtainError.timeout("no answer from BlueZ in time") }
            await nextChange()
        }
    }

    /// Waits `delay`, returning early when `wake` becomes true.
    private func pause(_ delay: Duration, wake: () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + delay
        let timer = startTimer(deadline)
        defer { timer?.cancel() }
        while clock.now < deadline, !wake() {
            try Task.checkCancellation()
            await nextChange()
        }
    }

    private func startTimer(_ deadline: ContinuousClock.Instant?) -> Task<Void, Never>? {
        deadline.map { d in
            Task { [weak self] in
                try? await Task.sleep(until: d, clock: ContinuousClock())
                await self?.changed()
            }
        }
    }

    private func nextChange() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { changeWaiters.append($0) }
        } onCancel: {
            Task { [weak self] in await self?.changed() }
        }
    }
}
