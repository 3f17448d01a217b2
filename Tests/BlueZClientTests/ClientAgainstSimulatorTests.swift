import DBusTesting
import BlueZSimulator
import CurtainProtocol
import DBus
import RoomBridgeCore
import Testing
import TestSupport
@testable import BlueZClient
import Retry

/// Records every event the client emits.
actor EventLog {
    private(set) var events: [CurtainEvent] = []
    func append(_ e: CurtainEvent) { events.append(e) }
    var statuses: [CurtainStatus] { events.compactMap { if case .status(let s) = $0 { s } else { nil } } }
    var connectionStates: [CurtainConnectionState] {
        events.compactMap { if case .connection(let c, _) = $0 { c } else { nil } }
    }
    func clear() { events.removeAll() }
}

/// A private dbus-daemon, the BlueZ simulator on it, and a client connected to it.
struct Rig {
    let daemon: DBusTestDaemon
    let sim: BlueZSimulator
    let bus: DBusConnection
    let client: CurtainClient
    let log: EventLog
    let tasks: [Task<Void, Never>]

    static func start(_ configure: (inout BlueZSimulator.Configuration) -> Void = { _ in },
                      client clientConfig: CurtainClientConfiguration = fastClient(),
                      startSimulator: Bool = true) async throws -> Rig {
        let daemon = try await DBusTestDaemon.start()
        var config = BlueZSimulator.Configuration()
        config.timeScale = 0 // the tests drive the clock
        configure(&config)
        let sim = BlueZSimulator(busAddress: daemon.address, configuration: config)
        if startSimulator { try await sim.start() }
        let bus = try await DBusConnection.open(.address(daemon.address))
        let client = CurtainClient(bus: bus, configuration: clientConfig)
        let log = EventLog()
        let events = client.events
        let logTask = Task { for await e in events { await log.append(e) } }
        let runTask = Task { _ = try? await client.run() }
        return Rig(daemon: daemon, sim: sim, bus: bus, client: client, log: log, tasks: [logTask, runTask])
    }

    static func fastClient(_ notify: CurtainNotifyMethod = .startNotify) -> CurtainClientConfiguration {
        var c = CurtainClientConfiguration()
        c.notifyMethod = notify
        c.backoff = Backoff(initial: .milliseconds(20), multiplier: 2, maximum: .milliseconds(200))
        c.connectTimeout = .seconds(5)
        return c
    }

    /// Runs `body` with a fresh rig and always tears it down (daemon, simulator, client).
    static func with(_ configure: (inout BlueZSimulator.Configuration) -> Void = { _ in },
                     client: CurtainClientConfiguration = fastClient(),
                     startSimulator: Bool = true, _ body: (Rig) async throws -> Void) async throws {
        let rig = try await start(configure, client: client, startSimulator: startSimulator)
        do {
            try await body(rig)
        } catch {
            await rig.stop()
            throw error
        }
        await rig.stop()
    }

    func stop() async {
        for t in tasks { t.cancel() }
        await sim.stop()
        await bus.close()
        await daemon.stop()
    }

    /// Waits (up to a generous guard, not a timing assertion) until `condition` holds for the client's snapshot.
    func wait(_ what: String, _ condition: @escaping @Sendable (CurtainSnapshot) -> Bool) async throws {
        do {
            try await eventually(what) { condition(await client.snapshot) }
        } catch {
            Issue.record("\(error); snapshot: \(await client.snapshot)")
            throw error
        }
    }

    /// Waits until the event log (filled asynchronously from the client's stream) satisfies `condition`.
    func waitLog(_ what: String, _ condition: @escaping @Sendable ([CurtainEvent]) -> Bool) async throws {
        do {
            try await eventually(what) { condition(await log.events) }
        } catch {
            Issue.record("\(error); events: \(await log.events)")
            throw error
        }
    }

    /// Waits until the event log has caught up with a `.connected` state.
    func waitLogConnected() async throws {
        try await waitLog("connected event") { events in
            events.last { if case .connection = $0 { true } else { false } } == .connection(.connected, detail: nil)
        }
    }

    /// A property of the status characteristic as bluez-sim shows it.
    func statusCharacteristic(_ property: String) async throws -> DBusValue {
        try await bus.getProperty(destination: "org.bluez", path: "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21/service000a/char000d",
                                  interface: "org.bluez.GattCharacteristic1", name: property)
    }

    func waitConnected() async throws {
        try await wait("connected") { $0.connection == .connected && $0.status != nil && $0.schedule != nil }
    }

    /// Advances the simulated clock in small steps (so periodic STATUS frames flow) until `condition`.
    func run(until what: String, step: Double = 0.5, _ condition: @escaping @Sendable (CurtainSnapshot) -> Bool) async throws {
        try await eventually(what) {
            if condition(await client.snapshot) { return true }
            await sim.advanceClock(by: step)
            return false
        }
    }
}

let morning = CurtainSchedule(openTime: try! CurtainTime(hour: 7, minute: 0), openEnabled: true,
                              closeTime: try! CurtainTime(hour: 21, minute: 30), closeEnabled: true)

@Suite(.serialized) struct ClientAgainstSimulatorTests {
    @Test func connectsAndAdoptsTheDeviceSchedule() async throws {
        try await Rig.with({ $0.initialSchedule = morning; $0.initialPosition = 25 }) { rig in
            try await rig.waitConnected()
            let snap = await rig.client.snapshot
            #expect(snap.schedule == morning)
            #expect(snap.status == CurtainStatus(motion: .idle, position: 25, target: 25))
            #expect(snap.deviceAddress == "C4:7C:8D:6A:3E:21")
            #expect(snap.adapter == .poweredOn(path: "/org/bluez/hci0"))
            try await rig.waitLogConnected()
            let states = await rig.log.connectionStates
            #expect(states.contains(.searching) && states.last == .connected)
        }
    }

    @Test(arguments: CurtainNotifyMethod.allCases)
    func openRisesToHundred(notify: CurtainNotifyMethod) async throws {
        try await Rig.with(client: Rig.fastClient(notify)) { rig in
            try await rig.waitConnected()
            #expect(try await rig.statusCharacteristic("NotifyAcquired") == .boolean(notify == .acquireNotify))
            try await rig.client.open()
            try await rig.run(until: "open") { $0.status == CurtainStatus(motion: .idle, position: 100, target: 100) }
            try await rig.waitLog("arrival") { $0.last == .status(CurtainStatus(motion: .idle, position: 100, target: 100)) }
            let positions = await rig.log.statuses.map(\.position)
            #expect(positions == positions.sorted())
            #expect(Set(positions).count > 5) // intermediate positions were notified while moving
        }
    }

    @Test func stopMidwayAndMoveTo() async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            try await rig.client.open()
            await rig.sim.advanceClock(by: 3)
            try await rig.client.stop()
            try await rig.wait("stopped") { $0.status == CurtainStatus(motion: .idle, position: 30, target: 30) }
            #expect(await rig.sim.deviceStatus.position == 30)
            try await rig.client.move(to: 40)
            try await rig.run(until: "at 40") { $0.status == CurtainStatus(motion: .idle, position: 40, target: 40) }
        }
    }

    @Test func wallSwitchHasPriorityUntilIdle() async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            try await rig.sim.handle(.press(.open))
            try await rig.wait("manual motion") { $0.status?.isManualMotionActive == true }
            let writesBefore = await rig.sim.writes.count
            for command in [CurtainCommand.open, .close, .stop, .moveTo(10)] {
                await #expect(throws: CurtainError.manualOperationActive) { try await rig.client.send(command) }
            }
            #expect(await rig.sim.writes.count == writesBefore) // nothing written
            // Schedules may still be written.
            try await rig.client.setSchedule(morning)
            try await rig.wait("schedule adopted") { $0.schedule == morning }
            try await rig.run(until: "idle") { $0.status?.motion == .idle }
            #expect(await rig.client.snapshot.status?.manual == true)
            try await rig.client.close()
            try await rig.wait("closing") { $0.status?.motion == .closing && $0.status?.manual == false }
        }
    }

    @Test func scheduleSetByClientThenChangedOnDevice() async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            try await rig.client.setSchedule(morning)
            try await rig.wait("set") { $0.schedule == morning }
            #expect(await rig.sim.deviceSchedule == morning)
            let cleared = CurtainSchedule.disabled
            try await rig.sim.handle(.setSchedule(cleared))
            try await rig.wait("device schedule adopted") { $0.schedule == cleared }
        }
    }

    @Test func scheduleFiresOnTheDeviceAndIsReported() async throws {
        try await Rig.with({ $0.initialSchedule = morning; $0.startTimeOfDay = 6 * 3600 + 59 * 60 }) { rig in
            try await rig.waitConnected()
            await rig.sim.advanceClock(by: 61)
            try await rig.wait("scheduled opening") { $0.status?.scheduled == true && $0.status?.motion == .opening }
        }
    }

    @Test(arguments: [true, false], CurtainNotifyMethod.allCases)
    func linkDropReconnectsAndResyncs(gattCache: Bool, notify: CurtainNotifyMethod) async throws {
        try await Rig.with({ $0.gattCacheAlways = gattCache }, client: Rig.fastClient(notify)) { rig in
            try await rig.waitConnected()
            // Keep it disconnected for a while, change the device meanwhile (frames are lost), then let it reconnect.
            try await rig.sim.handle(.failConnects(count: 2, name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
            try await rig.sim.handle(.dropLink)
            try await rig.sim.handle(.setSchedule(morning))
            try await rig.sim.handle(.press(.close))
            try await rig.sim.handle(.press(.stop))
            try await rig.wait("reconnected with the new schedule") {
                $0.connection == .connected && $0.schedule == morning && $0.status?.manual == true
            }
            try await rig.waitLogConnected()
            #expect(await rig.log.connectionStates.contains(.disconnected))
            try await rig.client.open()
            try await rig.wait("opening after reconnect") { $0.status?.motion == .opening }
        }
    }

    @Test(arguments: CurtainNotifyMethod.allCases)
    func bluetoothdRestartReconnects(notify: CurtainNotifyMethod) async throws {
        try await Rig.with(client: Rig.fastClient(notify)) { rig in
            try await rig.waitConnected()
            await rig.log.clear()
            try await rig.sim.handle(.restartBluetoothd(downtime: .milliseconds(100)))
            try await rig.wait("reconnected") { $0.connection == .connected }
            try await rig.waitLogConnected()
            let events = await rig.log.events
            #expect(events.contains(.adapter(.serviceUnavailable)))
            #expect(await rig.log.connectionStates.contains(.disconnected))
            try await rig.client.move(to: 20)
            try await rig.run(until: "moved") { $0.status == CurtainStatus(motion: .idle, position: 20, target: 20) }
        }
    }

    /// bluetoothd makes the AcquireNotify pair non-blocking (gatt-client.c `create_sock()`) and drops what the
    /// curtain notifies before the socket exists (`notify_io_cb`): the client still hears STATUS and SCHEDULE
    /// (its SYNC) and everything after. Regression: a blocking-style reader got EAGAIN and went deaf.
    @Test func acquireNotifyOnANonBlockingSocketHearsEverything() async throws {
        try await Rig.with({ $0.initialSchedule = morning }, client: Rig.fastClient(.acquireNotify)) { rig in
            try await rig.waitConnected()
            #expect(try await rig.statusCharacteristic("NotifyAcquired") == .boolean(true))
            #expect(await rig.sim.droppedNotifications == 2) // STATUS + SCHEDULE answering the CCCD write
            #expect(await rig.client.snapshot.schedule == morning) // from the SYNC
            try await rig.client.move(to: 30)
            try await rig.run(until: "at 30") { $0.status == CurtainStatus(motion: .idle, position: 30, target: 30) }
            #expect(try await rig.statusCharacteristic("NotifyAcquired") == .boolean(true)) // the socket stayed open
        }
    }

    /// The notify session ends while the link stays up: the client says so (log, last error, state), subscribes
    /// again, and hears the next STATUS; it never stays "connected" and deaf.
    @Test(arguments: CurtainNotifyMethod.allCases)
    func notifySessionEndingWhileConnectedIsRecovered(notify: CurtainNotifyMethod) async throws {
        try await Rig.with(client: Rig.fastClient(notify)) { rig in
            try await rig.waitConnected()
            try await rig.waitLogConnected()
            await rig.log.clear()
            let writesBefore = await rig.sim.writes.count
            try await rig.sim.handle(.endNotify)
            try await rig.waitLog("the fault reported") { events in
                events.contains { if case .error(.bluetooth("curtain.NotificationsStopped", _)) = $0 { true } else { false } }
            }
            try await rig.waitLog("subscribed again") { events in
                events.contains(.connection(.connecting, detail: "notifications stopped; subscribing again (\(notify.rawValue))"))
                    && events.last { if case .connection = $0 { true } else { false } } == .connection(.connected, detail: nil)
            }
            #expect(await rig.sim.isConnected) // the same link: no reconnect
            #expect(try await rig.sim.writes.dropFirst(writesBefore).first == CurtainCommand.sync.encode())
            #expect(try await rig.statusCharacteristic("NotifyAcquired") == .boolean(notify == .acquireNotify))
            try await rig.sim.handle(.press(.open))
            try await rig.wait("the next STATUS") { $0.status?.motion == .opening && $0.status?.manual == true }
        }
    }

    /// Repeated faults on one link escalate: the configured method again, then StartNotify, then a new link.
    @Test func repeatedNotifyFaultsFallBackToStartNotifyThenReconnect() async throws {
        try await Rig.with(client: Rig.fastClient(.acquireNotify)) { rig in
            try await rig.waitConnected()
            for expected in [true, false] {
                try await rig.waitLogConnected()
                await rig.log.clear()
                try await rig.sim.handle(.endNotify)
                try await rig.waitLog("fault seen") { $0.contains { if case .connection(.connecting, _) = $0 { true } else { false } } }
                try await rig.waitLogConnected()
                #expect(try await rig.statusCharacteristic("NotifyAcquired") == .boolean(expected))
            }
            #expect(try await rig.statusCharacteristic("Notifying") == .boolean(true))
            await rig.log.clear()
            try await rig.sim.handle(.endNotify)
            try await rig.waitLog("reconnected") { events in
                events.contains(.connection(.disconnected, detail: "notifications stopped; reconnecting"))
                    && events.last { if case .connection = $0 { true } else { false } } == .connection(.connected, detail: nil)
            }
            // A new link starts over with the configured method.
            #expect(try await rig.statusCharacteristic("NotifyAcquired") == .boolean(true))
        }
    }

    @Test func poweredOffAdapterIsAClearState() async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            try await rig.sim.handle(.power(false))
            try await rig.wait("powered off") { $0.adapter == .poweredOff(path: "/org/bluez/hci0") && $0.connection == .disconnected }
            await #expect(throws: CurtainError.notConnected) { try await rig.client.open() }
            #expect(await rig.client.snapshot.adapter.description.contains("power it on"))
            try await rig.sim.handle(.power(true))
            try await rig.waitConnected()
            try await rig.wait("on") { $0.adapter == .poweredOn(path: "/org/bluez/hci0") }
        }
    }

    @Test func powerOnThroughPropertiesSetIsSeen() async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            try await rig.bus.setProperty(destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                                          name: "Powered", value: .boolean(false))
            try await rig.wait("off") { $0.adapter == .poweredOff(path: "/org/bluez/hci0") }
            try await rig.bus.setProperty(destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                                          name: "Powered", value: .boolean(true))
            try await rig.waitConnected()
        }
    }

    @Test func badParametersAreRefusedWithNothingWritten() async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            let before = await rig.sim.writes.count
            await #expect(throws: CurtainError.invalidCommand(.positionOutOfRange(101))) { try await rig.client.move(to: 101) }
            await #expect(throws: CurtainError.invalidCommand(.positionOutOfRange(-1))) { try await rig.client.move(to: -1) }
            #expect(await rig.sim.writes.count == before)
        }
    }

    @Test(arguments: [
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x13", CurtainError.rejectedByDevice(.outOfRange)),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x80", .rejectedByDevice(.unknownCommand)),
        ("org.bluez.Error.InvalidArguments", "Invalid Length", .rejectedByDevice(.invalidLength)),
        ("org.bluez.Error.Failed", "Not connected", .notConnected),
    ])
    func writeErrorsAreMapped(name: String, message: String, expected: CurtainError) async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            try await rig.sim.handle(.failWrites(count: 1, name: name, message: message))
            await #expect(throws: expected) { try await rig.client.open() }
            #expect(await rig.client.snapshot.lastError == expected)
            try await rig.client.open() // the next write goes through
        }
    }

    @Test func commandsFailAtOnceWhileDisconnected() async throws {
        try await Rig.with({ $0.deviceKnownAtStart = false }) { rig in
            try await rig.sim.handle(.vanish)
            try await rig.wait("searching") { $0.connection == .searching }
            await #expect(throws: CurtainError.notConnected) { try await rig.client.close() }
            try await rig.sim.handle(.reappear)
            try await rig.waitConnected()
        }
    }

    @Test func deviceOutOfRangeAndBack() async throws {
        try await Rig.with({ $0.unreachableConnectFailure = .milliseconds(50) }) { rig in
            try await rig.waitConnected()
            try await rig.sim.handle(.vanish)
            try await rig.wait("lost") { $0.connection != .connected }
            await #expect(throws: CurtainError.notConnected) { try await rig.client.open() }
            // Connect attempts fail like BlueZ's (le-connection-abort-by-local) until the curtain is back.
            try await rig.wait("a failed attempt") {
                $0.lastError == .bluetooth(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
            }
            try await rig.sim.handle(.reappear)
            try await rig.waitConnected()
            try await rig.wait("connected again") { $0.connection == .connected }
        }
    }

    @Test func adoptsALinkThatIsAlreadyUp() async throws {
        // bluetoothd keeps links after a client exits (bleak's note on bluez#89): the next client must use it.
        let daemon = try await DBusTestDaemon.start()
        var config = BlueZSimulator.Configuration()
        config.timeScale = 0
        config.deviceKnownAtStart = true
        let sim = BlueZSimulator(busAddress: daemon.address, configuration: config)
        try await sim.start()
        let other = try await DBusConnection.open(.address(daemon.address))
        _ = try await other.call(destination: "org.bluez", path: "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21",
                                 interface: "org.bluez.Device1", member: "Connect")
        try await eventually("services resolved") { await sim.statusLine.contains("resolved=true") }
        await other.close()
        try await sim.handle(.failConnects(count: 100, name: "org.bluez.Error.Failed", message: "must not be called"))
        let bus = try await DBusConnection.open(.address(daemon.address))
        let client = CurtainClient(bus: bus, configuration: Rig.fastClient())
        let run = Task { _ = try? await client.run() }
        try await eventually("connected") { await client.snapshot.connection == .connected }
        #expect(await client.snapshot.lastError == nil)
        run.cancel()
        _ = await run.value
        await sim.stop()
        await bus.close()
        await daemon.stop()
    }

    @Test func reconnectForcesANewSearch() async throws {
        try await Rig.with { rig in
            try await rig.waitConnected()
            // The log hears of events after the snapshot changes: wait for the first connection's
            // event before clearing, or it can arrive after the clear (it did in a CI run).
            try await rig.waitLogConnected()
            await rig.log.clear()
            await rig.client.reconnect()
            #expect(await rig.client.snapshot.connection == .searching)
            await #expect(throws: CurtainError.notConnected) { try await rig.client.open() }
            try await rig.wait("reconnected") { $0.connection == .connected }
            try await rig.waitLogConnected()
            let states = await rig.log.connectionStates
            #expect(states.first == .searching && states.last == .connected)
        }
    }

    @Test(arguments: [
        ("org.bluez.Error.Failed", "le-connection-abort-by-local"),
        ("org.bluez.Error.Failed", "br-connection-canceled"),
        ("org.bluez.Error.InProgress", "In Progress"),
    ])
    func transientConnectFailuresAreRetried(name: String, message: String) async throws {
        try await Rig.with({ $0.deviceKnownAtStart = true }, startSimulator: false) { rig in
            try await rig.sim.handle(.failConnects(count: 3, name: name, message: message))
            try await rig.sim.start()
            try await rig.waitConnected()
            try await rig.waitLogConnected()
            let errors = await rig.log.events.filter { if case .error = $0 { true } else { false } }
            #expect(errors.count == 3)
            let states = await rig.log.connectionStates
            // Three failed attempts and the successful one; under load an attempt can also be
            // reported twice (the InterfacesAdded that re-announces the device), never fewer.
            #expect(states.filter { $0 == .connecting }.count >= 4)
        }
    }

    @Test func runEndsWithAnErrorWhenTheBusDies() async throws {
        let daemon = try await DBusTestDaemon.start()
        var config = BlueZSimulator.Configuration()
        config.timeScale = 0
        let sim = BlueZSimulator(busAddress: daemon.address, configuration: config)
        try await sim.start()
        let bus = try await DBusConnection.open(.address(daemon.address))
        let client = CurtainClient(bus: bus, configuration: Rig.fastClient())
        let run = Task { () -> Bool in
            do { try await client.run(); return false } catch { return true }
        }
        try await eventually("connected") { await client.snapshot.connection == .connected }
        await daemon.kill()
        #expect(await run.value) // run() threw instead of spinning
        #expect(await client.snapshot.connection == .disconnected)
        await sim.stop()
    }

    @Test func bluetoothdNotRunningIsReported() async throws {
        try await Rig.with(startSimulator: false) { rig in
            try await rig.wait("unavailable") { $0.adapter == .serviceUnavailable && $0.connection == .disconnected }
            await #expect(throws: CurtainError.notConnected) { try await rig.client.open() }
            try await rig.sim.start()
            try await rig.waitConnected()
        }
    }
}

@Suite(.serialized) struct DoctorChecksTests {
    @Test func blueZChecksAgainstTheSimulator() async throws {
        try await Rig.with({ $0.deviceKnownAtStart = true }) { rig in
            var checks = await BluetoothDiagnostics.blueZChecks(bus: rig.bus, adapterName: "hci0",
                                                                deviceAddress: "c4:7c:8d:6a:3e:21")
            #expect(checks.map(\.status) == [.ok, .ok, .ok])
            try await rig.sim.handle(.power(false))
            checks = await BluetoothDiagnostics.blueZChecks(bus: rig.bus, adapterName: nil, deviceAddress: nil)
            #expect(checks.last?.status == .failed)
            #expect(checks.last?.fix?.contains("power on") == true)
            checks = await BluetoothDiagnostics.blueZChecks(bus: rig.bus, adapterName: "hci1", deviceAddress: nil)
            #expect(checks.last?.status == .failed && checks.last?.detail.contains("hci1 not found") == true)
            await rig.sim.stop()
            // The bus drops the simulator's name once it has seen its connection close, after stop() returned (as
            // for bluetoothd's exit): the checks see it gone from then on.
            try await eventually("the checks report bluetoothd not running") {
                let gone = await BluetoothDiagnostics.blueZChecks(bus: rig.bus, adapterName: nil, deviceAddress: nil)
                return gone.count == 1 && gone[0].status == .failed
            }
        }
    }
}

@Suite struct ForwardToSystemStateTests {
    @Test func systemStateFollowsTheDevice() async throws {
        let daemon = try await DBusTestDaemon.start()
        var config = BlueZSimulator.Configuration()
        config.timeScale = 0
        config.initialSchedule = morning
        let sim = BlueZSimulator(busAddress: daemon.address, configuration: config)
        try await sim.start()
        let bus = try await DBusConnection.open(.address(daemon.address))
        let client = CurtainClient(bus: bus, configuration: Rig.fastClient())
        let state = SystemState(curtain: RoomBridgeCore.CurtainState(connection: .disconnected))
        let forward = Task { await client.forward(to: state) }
        let run = Task { _ = try? await client.run() }
        try await eventually("the device's state in SystemState") {
            let c = await state.curtainState()
            return c.connection == .connected && c.openSchedule?.time.description == "07:00" && c.position == 0
        }
        try await client.move(to: 30)
        for _ in 0..<20 { await sim.advanceClock(by: 0.5) }
        try await eventually("at 30 in SystemState") { await state.curtainState().position == 30 }
        let c = await state.curtainState()
        #expect(c.position == 30 && c.motion == .idle && c.address == "C4:7C:8D:6A:3E:21")
        run.cancel()
        _ = await run.value
        await forward.value // ends with the event stream
        await sim.stop()
        await bus.close()
        await daemon.stop()
    }
}
