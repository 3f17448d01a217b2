import CurtainProtocol
import DBus
import Logging

/// One BLE curtain over BlueZ's D-Bus API.
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

    /// Events for the daemon's `SystemState` (connection, adapter, STATUS, SCHEDULE, errors).
    public nonisolated let events: AsyncStream<CurtainEvent>
    let eventSink: AsyncStream<CurtainEvent>.Continuation

    let bus: DBusConnection
    let configuration: CurtainClientConfiguration
    let logger: Logger

    /// The current view of the curtain.
    public private(set) var snapshot = CurtainSnapshot()

    /// bluetoothd's objects as this client last heard them.
    var cache = BlueZObjectCache()
    var busIsClosed = false

    // Current link.
    var devicePath: DBusObjectPath?
    var commandPath: DBusObjectPath?
    var statusPath: DBusObjectPath?
    var linkUp = false
    /// Counts links, so packets from an old AcquireNotify socket are ignored.
    var linkSerial = 0
    var notifyReader: NotifySocketReader?
    /// How the current subscription was made (nil while there is none).
    var subscribedWith: CurtainNotifyMethod?
    /// Notifications received since the current subscription was made.
    var notificationsSinceSubscribe = 0
    /// Why the notification stream of the current subscription ended while the link was up (nil: it has not).
    var notifyFault: String?
    /// Notify faults on the current link; decides the recovery (``NotifyRecovery``). Reset when the link goes.
    var notifyFaultsOnLink = 0
    /// The method for the next subscription on this link, when a recovery chose one.
    var recoveryNotifyMethod: CurtainNotifyMethod?
    var reconnectRequested = false
    /// Set by ``reconnect()``: the next search runs discovery and takes only a device reported during it.
    var forceSearch = false

    var changeWaiters: [CheckedContinuation<Void, Never>] = []
    /// Status, battery, light and manual operation of profiles without a STATUS frame (SwitchBot, AM43).
    var tracker = CurtainStateTracker()
    /// The request whose reply is awaited (SwitchBot replies do not say what they answer).
    var pendingRequest: CurtainWireRequest?
    /// On-demand profiles: a command (or the first state read at start) wants the link up; cleared once it is.
    var connectWanted = true
    /// On-demand profiles: when the last command was written (or the link came up), on the configured clock; the
    /// link is released ``CurtainProfile/ConnectionPolicy/hold`` after it.
    var lastCommandAt: Duration = .zero
    /// Whether this curtain holds a slot of ``CurtainClientConfiguration/budget``.
    var holdsSlot = false
    /// True while it waits in line for a slot (the time a command spends there does not count against it).
    var queuedForSlot = false
    /// Another curtain started waiting for a slot: an on-demand curtain in its hold gives its own back.
    var slotWanted = false
    /// Commands between their start and the end of their write; the link is not given away under them.
    var commandsInProgress = 0
    /// The profile this client speaks.
    public nonisolated var profile: CurtainProfile { configuration.profile }

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
        if let budget = configuration.budget {
            await budget.onWanted(slotName) { [weak self] in Task { await self?.wantSlot() } }
        }
        report(.profile(profile.id, keepsSchedule: profile.keepsSchedule))
        if !profile.keepsSchedule, let kept = configuration.keptSchedule { report(.schedule(kept)) }
        var attempt = 0
        while !Task.isCancelled {
            do {
                if let hold = profile.connection.hold {
                    // On demand: between commands, hear the curtain's advertisements; connect when a command asks.
                    if !connectWanted { try await standBy() }
                    try await connectOnce()
                    attempt = 0
                    connectWanted = false
                    try await holdThenRelease(hold)
                    continue
                }
                try await connectOnce()
                attempt = 0
                try await waitUntilLinkLost()
            } catch is CancellationError {
                break
            } catch let e as BusLost {
                await linkDown(detail: "the D-Bus connection was lost")
                await leaveBudget()
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
        await leaveBudget()
    }

    /// Sends a command: validated, refused while a wall-switch motion is in progress (manual priority), refused
    /// at once while not connected, then written with `type=request` so the controller's errors come back.
    public func send(_ command: CurtainCommand) async throws(CurtainError) {
        defer { eventSink.yield(.commandAnswered) }
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
        commandsInProgress += 1
        defer {
            commandsInProgress -= 1
            changed()
        }
        var target = linkUp ? commandPath : nil
        if target == nil, profile.connection.hold != nil {
            target = await connectForCommand()
            // The state read on connecting may show a motion the daemon did not command.
            _ = try CurtainCommandGate.prepare(command, status: snapshot.status)
        }
        guard let path = target else {
            report(.error(.notConnected))
            throw .notConnected
        }
        do {
            lastCommandAt = configuration.clock.elapsed()
            tracker.commanded(command, at: lastCommandAt, startWithin: configuration.motionStartWindow)
            try await write(frames, for: .command(command), to: path)
        } catch {
            let mapped = Self.map(error)
            report(.error(mapped))
            throw mapped
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
        eventSink.yield(.commandAnswered)
    }

    /// Disconnects the curtain this client chose (Device1.Disconnect), e.g. after ``run()`` ended because the
    /// settings changed; does nothing when there is none.
    public func disconnectDevice() async {
        guard let device = devicePath else { return }
        _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                member: "Disconnect", timeout: configuration.callTimeout)
    }

    // MARK: Signals and cache

    func ownerChanged(_ owner: DBusNameOwner) {
        let newOwner: String?
        switch owner {
        case .owned(let name): newOwner = name
        case .unowned: newOwner = nil
        }
        if cache.ownerChanged(to: newOwner) {
            linkUp = false
            if newOwner == nil {
                setAdapter(.serviceUnavailable)
                setConnection(.disconnected, detail: BluetoothAdapterState.serviceUnavailable.description)
            }
        }
        changed()
    }

    /// Applies a signal to the cache, then reacts to what concerns the curtain: its advertisement, its
    /// notifications, and a notify session bluetoothd ended.
    func ingest(_ message: DBusMessage) {
        guard let change = cache.ingest(message) else { return }
        if case .properties(let path, let iface, let changedProps) = change {
            // On demand the advertisements are the state between commands, so they count without a link too.
            if iface == Self.deviceInterface, path == devicePath, linkUp || profile.connection.hold != nil,
               profile.motionFromAdvertisements,
               changedProps["ServiceData"] != nil || changedProps["ManufacturerData"] != nil {
                adoptAdvertisement(of: path, only: Set(changedProps.keys))
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
        }
        changed()
    }

    func property(_ path: DBusObjectPath, _ iface: String, _ name: String) -> DBusValue? {
        cache.property(path, iface, name)
    }

    func busClosed() {
        busIsClosed = true
        changed()
    }

    // MARK: Events

    func report(_ event: CurtainEvent) {
        let changed = snapshot.apply(event)
        switch event {
        case .error, .deviceError, .device: eventSink.yield(event)
        default: if changed { eventSink.yield(event) }
        }
    }

    func setConnection(_ state: CurtainConnectionState, detail: String?) {
        guard snapshot.connection != state else { return }
        if state != .connected { linkUp = false }
        report(.connection(state, detail: detail))
    }

    func setAdapter(_ state: BluetoothAdapterState) {
        report(.adapter(state))
    }
}
