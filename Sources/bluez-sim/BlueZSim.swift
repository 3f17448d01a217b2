import DBusTesting
import ArgumentParser
import BlueZSimulator
import CurtainProtocol
import DBus
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

@main
struct BlueZSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluez-sim",
        abstract: "A BlueZ (bluetoothd) stand-in with one adapter and one BLE curtain (roombridge, SwitchBot or AM43), on a private D-Bus bus.",
        subcommands: [Run.self, Ctl.self],
        defaultSubcommand: Run.self)
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the simulator (never on the machine's system bus).",
        discussion: """
        Without --bus-address a private dbus-daemon is started and its address printed as \
        DBUS_SYSTEM_BUS_ADDRESS=…; point roombridged or bluetoothctl at it with that variable.
        """)

    @Option(help: "Address of a private bus to join (e.g. unix:path=/tmp/x/bus).")
    var busAddress: String?
    @Option(help: "Path of the control socket.")
    var control: String = temporaryPath("bluez-sim.sock")
    @Option(help: "Simulated time of day at start, HH:MM.")
    var time: String = "08:00"
    @Option(help: "Motor speed in percent per second.")
    var speed: Double = 10
    @Option(help: "Simulated seconds per real second (0: clock only moves with `ctl advance`).")
    var timeScale: Double = 1
    @Option(help: "Initial position, percent open.")
    var position: Int = 0
    @Option(help: "Curtain address.")
    var deviceAddress: String = "C4:7C:8D:6A:3E:21"
    @Option(help: "Milliseconds between Device1.Disconnect and the link going down (bluetoothd's DISCONNECT_TIMER).")
    var disconnectDelay: Int = 2000
    @Flag(help: "Behave like BlueZ with [GATT] Cache = no (GATT objects removed on disconnect).")
    var noGattCache = false
    @Flag(help: "bluetoothd already knows the curtain at start.")
    var known = false
    @Option(help: "Curtain firmware: roombridge, switchbot or am43.")
    var profile: String = "roombridge"
    @Option(help: "AM43: the PIN the motor accepts.")
    var pin: UInt16 = 8888
    @Option(help: "SwitchBot: the password set in its app (requests must carry it).")
    var password: String?
    @Flag(help: "SwitchBot: the curtain is not calibrated (moves are refused).")
    var uncalibrated = false
    @Option(help: ArgumentHelp("on: the curtain keeps advertising while connected (the default); off: it stops "
                               + "until the link is down (`ctl advertise-while-connected on|off` switches at run time)."))
    var advertiseWhileConnected: String = "on"
    @Option(help: ArgumentHelp("A further curtain on the same adapter, PROFILE@ADDRESS[@POSITION] (repeat for more); "
                               + "`ctl device ADDRESS …` controls it.", valueName: "PROFILE@ADDRESS"))
    var curtain: [String] = []

    func run() async throws {
        let start: CurtainTime
        do { start = try CurtainTime(parsing: time) } catch { throw ValidationError("--time: \(error)") }
        guard (0...100).contains(position) else { throw ValidationError("--position must be 0…100") }
        guard disconnectDelay >= 0 else { throw ValidationError("--disconnect-delay must not be negative") }
        var config = BlueZSimulator.Configuration()
        config.startTimeOfDay = Double(start.minutesSinceMidnight * 60)
        config.speed = speed
        config.timeScale = timeScale
        config.initialPosition = position
        config.deviceAddress = deviceAddress.uppercased()
        config.gattCacheAlways = !noGattCache
        config.deviceKnownAtStart = known
        config.disconnectDelay = .milliseconds(disconnectDelay)
        guard ["on", "off"].contains(advertiseWhileConnected) else {
            throw ValidationError("--advertise-while-connected must be on or off")
        }
        config.advertisesWhileConnected = advertiseWhileConnected == "on"
        switch CurtainProfile.named(profile)?.id {
        case .roombridge?: config.device = .roombridge
        case .switchbot?:
            config.device = .switchbot(.init(password: password, calibrated: !uncalibrated))
            config.deviceName = "WoCurtain"
        case .am43?: config.device = .am43(.init(pin: pin))
        case nil: throw ValidationError("--profile must be roombridge, switchbot or am43")
        }

        var daemon: DBusTestDaemon?
        let address: String
        if let busAddress {
            guard !busAddress.contains("/run/dbus/system_bus_socket") else {
                throw ValidationError("refusing to join the machine's system bus: bluez-sim only runs on a private bus "
                                      + "(omit --bus-address to start one)")
            }
            address = busAddress
        } else {
            let d = try await DBusTestDaemon.start()
            daemon = d
            address = d.address
        }
        let sim = BlueZSimulator(busAddress: address, configuration: config)
        for extra in curtain {
            let parts = extra.split(separator: "@").map(String.init)
            guard (2...3).contains(parts.count), let profile = CurtainProfile.named(parts[0])?.id,
                  let position = parts.count == 3 ? Int(parts[2]) : self.position, (0...100).contains(position) else {
                throw ValidationError("--curtain \(extra): use PROFILE@ADDRESS[@POSITION], e.g. switchbot@C4:7C:8D:6A:3E:22@50")
            }
            var more = config
            more.deviceAddress = parts[1].uppercased()
            more.initialPosition = position
            more.deviceKnownAtStart = known
            switch profile {
            case .roombridge: more.device = .roombridge; more.deviceName = "Curtain-" + parts[1].suffix(5).replacingOccurrences(of: ":", with: "")
            case .switchbot: more.device = .switchbot(.init(password: password, calibrated: !uncalibrated)); more.deviceName = "WoCurtain"
            case .am43: more.device = .am43(.init(pin: pin)); more.deviceName = BlueZSimulator.Configuration().deviceName
            }
            _ = await sim.addCurtain(more)
        }
        try await sim.start()
        let server = try ControlServer(path: control, simulator: sim)
        print("DBUS_SYSTEM_BUS_ADDRESS=\(address)")
        print("control socket: \(control)")
        fflush(nil)
        await waitForTermination()
        server.stop()
        await sim.stop()
        await daemon?.stop()
    }
}

struct Ctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a control command to a running simulator.",
        discussion: """
        Commands: press open|close|stop; drop-link; end-notify; vanish; reappear; restart-bluetoothd [ms]; \
        power on|off; fail-writes N [NAME [TEXT]]; fail-connects N [NAME [TEXT]]; \
        schedule OPEN CLOSE (HH:MM, HH:MM/off or off); advance SECONDS; battery PERCENT; status.

        iBeacons: beacon add UUID MAJOR MINOR [tx=N] [rssi=N] [noise=N] [interval=MS] [address=A] | \
        rssi|noise ADDRESS N | vanish|appear|remove ADDRESS | apple-frame ADDRESS HEX|off | \
        temporary-timeout SECONDS | list.
        """)

    @Option(help: "Path of the control socket.")
    var control: String = temporaryPath("bluez-sim.sock")
    @Argument(parsing: .captureForPassthrough)
    var command: [String]

    func run() throws {
        let answer = try ControlServer.send(command.joined(separator: " "), to: control)
        print(answer)
        if answer.hasPrefix("error") { throw ExitCode.failure }
    }
}

/// Returns on SIGINT or SIGTERM.
func waitForTermination() async {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let queue = DispatchQueue(label: "bluez-sim.signals")
    let (stream, cont) = AsyncStream<Void>.makeStream()
    let sources = [SIGINT, SIGTERM].map { sig in
        let s = DispatchSource.makeSignalSource(signal: sig, queue: queue)
        s.setEventHandler { cont.yield() }
        s.resume()
        return s
    }
    for await _ in stream { break }
    sources.forEach { $0.cancel() }
}

/// A path in the temporary directory (`$TMPDIR`, else /tmp), for the simulator's defaults.
func temporaryPath(_ name: String) -> String {
    let dir = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    return dir.hasSuffix("/") ? dir + name : dir + "/" + name
}
