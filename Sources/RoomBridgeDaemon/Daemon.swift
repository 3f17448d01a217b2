import BlueZClient
import CurtainProtocol
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Lending
import LendingStore
import Logging
import NFCReader
import RoomBridgeConfig
import RoomBridgeCore
import RoomBridgeInterfaces
import RoomBridgeMetrics
import ServiceLifecycle
import Synchronization
import UnixSignals
import Varlink
import VarlinkNIO
import Webhooks

/// Exit statuses of roombridged (sysexits.h), so that systemd and scripts can tell failures apart.
public enum DaemonExit: Int32, Sendable {
    case ok = 0
    /// Something failed while running.
    case failure = 1
    /// Bad command line (`EX_USAGE`).
    case usage = 64
    /// The socket or another resource is unavailable, e.g. another roombridged answers on the socket (`EX_UNAVAILABLE`).
    case unavailable = 69
    /// The database cannot be used: newer than this binary, corrupt, foreign or not writable (`EX_CANTCREAT`).
    case database = 73
    /// Bad configuration (`EX_CONFIG`).
    case config = 78
}

/// The composition root: reads the configuration, builds the services and runs them until
/// SIGTERM/SIGINT.
public enum Daemon {
    /// The process's entry (the `roombridged` executable, and the multi-call `roombridge` run as
    /// `roombridged`): runs the daemon with the process's arguments and environment and exits
    /// with its status. `arguments` are those after the program's name.
    public static func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        // A SIGHUP (reload) that arrives while the daemon is still starting must not take the
        // default action (exit): ignored until the reload service traps it (it reads the
        // configuration anyway).
        signal(SIGHUP, SIG_IGN)
        exit(await run(arguments: arguments, environment: ProcessInfo.processInfo.environment))
    }

    /// Runs roombridged. Returns the process exit status.
    public static func run(arguments: [String], environment: [String: String]) async -> Int32 {
        let commandLine: DaemonCommandLine
        do {
            commandLine = try DaemonCommandLine(arguments: arguments)
        } catch {
            printError("roombridged: \(error)")
            return DaemonExit.usage.rawValue
        }
        if commandLine.showHelp {
            print(DaemonCommandLine.helpText())
            return DaemonExit.ok.rawValue
        }
        if commandLine.showVersion {
            print("roombridged \(RoomBridgeVersion.string)")
            return DaemonExit.ok.rawValue
        }
        let config: DaemonConfig
        do {
            config = try commandLine.load()
        } catch {
            printError("roombridged: \(error)")
            return DaemonExit.config.rawValue
        }
        if commandLine.printConfig {
            print(config.renderTOML(), terminator: "")
            return DaemonExit.ok.rawValue
        }

        let levels = LogLevelBox(Logger.Level(configName: config[.logLevel]) ?? .info)
        let journal = JournalAwareLogHandler.stderrIsJournal(environment: environment)
        LoggingSystem.bootstrap { label in
            JournalAwareLogHandler(label: label, levels: levels, journal: journal)
        }
        let logger = Logger(label: "roombridged")
        raiseOpenFileLimit(logger)

        do {
            let configPath = FileManager.default.fileExists(atPath: commandLine.configPath)
                ? URL(fileURLWithPath: commandLine.configPath).standardizedFileURL.path : nil
            return try await runServices(config: config, commandLine: commandLine, configPath: configPath,
                                         environment: environment, levels: levels, logger: logger)
        } catch let error as StartupError {
            logger.critical("\(error.message)")
            return error.exit.rawValue
        } catch {
            logger.critical("stopped: \(error)")
            return DaemonExit.failure.rawValue
        }
    }

    /// What io.roombridge.State.GetConfiguration reports.
    static func setup(_ config: DaemonConfig, configPath: String?) -> DaemonSetup {
        // The single curtain's address, or with [curtains.NAME] tables the first one's (State has them all).
        let address = CurtainEntry.all(in: config).first?.address ?? ""
        let url = config[.databaseURL]
        return DaemonSetup(configPath: configPath, databasePath: url.isEmpty ? config[.databasePath] : url,
                           socketPath: config[.socketPath], nfcEnabled: config[.nfcEnabled],
                           nfcReaders: config[.nfcReaders], curtainEnabled: config[.curtainEnabled],
                           curtainAddress: address.isEmpty ? nil : address)
    }

    private static func runServices(config: DaemonConfig, commandLine: DaemonCommandLine, configPath: String?,
                                    environment: [String: String],
                                    levels: LogLevelBox, logger: Logger) async throws -> Int32 {
        // SIGHUP reloads the configuration (see ReloadService); trapped before anything is
        // bound, so that a SIGHUP right after READY=1 never takes the default action (exit).
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let curtainEnabled = config[.curtainEnabled]
        let kioskZone = config.kioskTimeZoneName  // a name: a TimeZone is made where times are computed
        let state = SystemState(bufferLimit: config[.stateSubscriberBuffer], replayLimit: config[.stateReplayBuffer],
                                curtain: CurtainState(connection: .disabled), timeZone: kioskZone)
        let curtainSettings: [CurtainSettings]
        do {
            curtainSettings = try CurtainSettings.all(in: config, environment: environment)
        } catch {
            throw StartupError(.config, "\(error)")
        }
        await state.declareCurtains(curtainSettings.map(\.entry.name))  // so READY's status line names them
        await state.declareCurtainGroups(Self.groups(config))
        let curtain: CurtainFleet? = curtainEnabled ? CurtainFleet() : nil

        // The outbox's targets with their secrets (a secret that cannot be read stops the daemon, exit 78).
        let outboxTargets = try OutboxSetup.targets(config, environment: environment)

        // The database: opened and migrated before anything is bound, so a bad one stops the
        // daemon with a clear message and nothing listening.
        let database = try await DatabaseBackend.open(config, environment: environment, logger: logger)
        let store = database.store
        let settings = lendingSettings(config)
        let lending = LendingCoordinator(store: store, state: state, policy: settings.policy, location: settings.location)
        // Announces what fell due while the daemon was stopped (once: the store remembers), then
        // each rental as it falls due; the state carries the overdue count from now on.
        await lending.startOverdueWatch()
        // A stocktake left open when the daemon stopped: the kiosk is in stocktake mode from the start.
        do { try await lending.refreshStocktake() } catch {
            logger.warning("cannot read the open stocktake (\(error)); the kiosk shows it at the next tap")
        }

        // NFC readers (each polled on its own thread once the service group runs) and tag registration.
        var nfc: (readers: [NFCBridge.Reader], service: NFCReaderService, registrar: TagRegistrar)? = nil
        if config[.nfcEnabled] {
            let readers = ReaderEntry.all(in: config)
            await state.declareReaders(readers.map(\.name))  // so READY's status line names them
            let modulations = config[.nfcModulations].compactMap(PollModulation.init(rawValue:))
            let service = NFCReaderService(readers: readers.map { ReaderConfiguration(connstring: $0.connstring, modulations: modulations) },
                                           logger: Logger(label: "roombridged.nfc"))
            nfc = (readers, service, TagRegistrar(nfc: service, store: store, state: state, logger: Logger(label: "roombridged.tags")))
        }

        let authGroup = config[.authGroup]
        let authorizer = Authorizer(groupName: authGroup, gid: GroupDirectory.gid(named: authGroup),
                                    actorUsers: Set(config[.authActorUsers]), userName: UserDirectory.name(uid:))
        if authorizer.gid == nil {
            logger.warning("auth.group \(authGroup) does not exist: only root may call methods that change things; create it with: groupadd --system \(authGroup)")
        }

        let interfaces: [any VarlinkInterface] = [
            StateInterface(state: state, authorizer: authorizer, setup: setup(config, configPath: configPath), setLogLevel: { name in
                guard let level = Logger.Level(configName: name) else { return }
                levels.level = level
                Logger(label: "roombridged").notice("log level set to \(name)")
            }),
            TagsInterface(state: state, registrar: nfc?.registrar, authorizer: authorizer),
            InventoryInterface(store: store, authorizer: authorizer),
            LendingInterface(lending: lending, authorizer: authorizer, timeZone: kioskZone),
            CurtainInterface(state: state, controller: curtain, authorizer: authorizer),
            PresenceInterface(state: state),
            OutboxInterface(store: store, targets: store.outboxRoutes.map(\.target), authorizer: authorizer),
        ]
        let service: VarlinkService
        do {
            service = try VarlinkService(
                vendor: "RoomBridge", product: "roombridged", version: RoomBridgeVersion.string,
                url: "https://github.com/roombridge/roombridge", interfaces: interfaces,
                onUnexpectedError: { call, error in
                    Logger(label: "roombridged.varlink").error("\(call.method) failed: \(error)")
                })
        } catch {
            throw StartupError(.failure, "internal error in an interface description: \(error)")
        }

        // Bind before READY=1: a socket-activated socket if systemd passed one, else the path.
        let listen: VarlinkServerConfiguration.Listen
        if let activated = VarlinkServerConfiguration.Listen.systemdActivatedSocket() {
            listen = activated
        } else {
            let groupName = config[.socketGroup]
            var gid: UInt32? = nil
            if !groupName.isEmpty {
                gid = GroupDirectory.gid(named: groupName)
                if gid == nil {
                    logger.warning("socket.group \(groupName) does not exist; the socket keeps the daemon's group. Create it with: groupadd --system \(groupName)")
                }
            }
            listen = .path(config[.socketPath], mode: UInt32(config[.socketMode], radix: 8) ?? 0o660, group: gid)
        }
        let server: VarlinkServer
        do {
            server = try await VarlinkServer.bind(
                service: service,
                configuration: VarlinkServerConfiguration.answeringShutdown(
                    listen: listen,
                    maxMessageSize: config[.socketMaxMessageSize],
                    maxConnections: config[.socketMaxConnections],
                    maxConnectionsPerUser: config[.socketMaxConnectionsPerUser],
                    reservedConnections: config[.socketReservedConnections],
                    stallTimeout: .milliseconds(Int64(config[.socketStallTimeout] * 1000)),
                    idleTimeout: .milliseconds(Int64(config[.socketIdleTimeout] * 1000)),
                    isPrivileged: { authorizer.allows($0) }),
                logger: Logger(label: "roombridged.varlink"))
        } catch let error as VarlinkServerError {
            throw StartupError(.unavailable, "cannot listen: \(error)")
        }
        if case .inheritedSocket(let fd) = listen { logger.info("listening on the socket passed by systemd (fd \(fd))") }

        // Shutdown runs in reverse order: STOPPING=1 first, then the hardware is released, and
        // the socket last (Watch clients are told, connections closed, the socket file removed).
        var services: [any Service] = [
            database.service(config: config, state: state, lending: lending),
            VarlinkSocketService(server: server, state: state, logger: logger),
            StocktakeWatch(lending: lending),
        ]
        let bridge = nfc.map { nfc in
            NFCBridge(readers: nfc.readers, service: nfc.service, state: state,
                      handler: TapRouter(registrar: nfc.registrar, lending: LendingTapHandler(lending: lending)),
                      logger: logger)
        }
        if let bridge { services.append(bridge) }
        let (curtainReconfigurations, reconfigureCurtains) = AsyncStream.makeStream(
            of: [CurtainSettings].self, bufferingPolicy: .bufferingNewest(1))
        if let curtain {
            services.append(CurtainFleetService(fleet: curtain, state: state, schedules: database.curtainSchedules,
                                                settings: curtainSettings,
                                                reconfigurations: curtainReconfigurations,
                                                onBattery: { notice in
                                                    await state.recordBattery(notice)
                                                    await Self.enqueueBattery(notice, store: store, logger: logger)
                                                },
                                                logger: Logger(label: "roombridged.curtain")))
        }
        if let presence = PresenceService.configured(config, state: state, inventory: store) { services.append(presence) }
        if let address = MetricsAddress(config[.metricsListen]) {
            let probes = DaemonMetrics.Probes(
                outbox: { (try? await store.outboxCounts().map { ($0.target, $0.pending, $0.failing) }) ?? [] },
                socket: { server.statistics })
            services.append(MetricsService(host: address.host, port: address.port, metrics: DaemonMetrics(), state: state,
                                           probes: probes, logger: Logger(label: "roombridged.metrics")))
        }
        let digestAt = ReminderSchedule.secondsOfDay(config[.remindersDigestAt])
        let dueNoticeAt = ReminderSchedule.secondsOfDay(config[.remindersDueNoticeAt])
        if digestAt != nil || dueNoticeAt != nil {
            let reminders = ReminderSchedule(digestAt: digestAt, dueNoticeAt: dueNoticeAt, timeZone: config.kioskTimeZone)
            // Runs without targets too, writing nothing, so that targets added by a reload get reminders.
            services.append(ReminderService(store: store, schedule: reminders, logger: Logger(label: "roombridged.reminders")))
        }
        // Runs without targets too (no HTTP client until there is one), so that a reload can add them.
        let delivery = OutboxDelivery(store: store, targets: outboxTargets, settings: OutboxSetup.settings(config),
                                      logger: Logger(label: "roombridged.outbox"),
                                      onAlert: { await state.recordOutbox(OutboxSetup.notice($0)) })
        services.append(delivery)
        let reloadLogger = Logger(label: "roombridged.reload")
        services.append(ReloadService(
            signals: hangups, commandLine: commandLine, current: config, logger: reloadLogger,
            // The reader list can change only while NFC runs, the curtain settings only while the curtain
            // runs (nfc.enabled and curtain.enabled themselves need a restart).
            reloadable: { [nfcRuns = bridge != nil, curtainRuns = curtain != nil] key in
                DaemonConfig.isReloadable(key) && (key != "nfc.readers" || nfcRuns)
                    && (!key.hasPrefix("curtain") || curtainRuns)
            },
            notifier: SystemdNotifier(environment: environment),
            apply: { [bridge] new, changed in
                if let level = Logger.Level(configName: new[.logLevel]) { levels.level = level }
                let settings = lendingSettings(new)
                await lending.reconfigure(policy: settings.policy, location: settings.location)
                if changed.contains("nfc.readers") { await bridge?.reconfigure(ReaderEntry.all(in: new)) }
                // The outbox targets, with their secrets read again (a rotated secret file applies too).
                do {
                    let targets = try OutboxSetup.targets(new, environment: environment)
                    store.setOutboxRoutes(OutboxSetup.routes(new))
                    delivery.replaceTargets(targets)
                } catch {
                    reloadLogger.error("SIGHUP: the outbox keeps its current targets: \(error)")
                }
                if changed.contains("curtain.groups") { await state.declareCurtainGroups(Self.groups(new)) }
                if changed.contains(where: { $0.hasPrefix("curtain") }) {
                    do {
                        reconfigureCurtains.yield(try CurtainSettings.all(in: new, environment: environment))
                    } catch {
                        reloadLogger.error("SIGHUP: the curtains keep their current settings: \(error)")
                    }
                }
            }))
        services.append(SystemdService(notifier: SystemdNotifier(environment: environment), state: state,
                                       watchdogInterval: SystemdNotifier.watchdogInterval(environment: environment),
                                       logger: logger))
        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        logger.info("stopped")
        return DaemonExit.ok.rawValue
    }

    /// The lending policy and location a configuration asks for.
    /// A curtain's low battery into the outbox, for the targets that take `battery`.
    static func enqueueBattery(_ notice: BatteryNotice, store: some InventoryStore, logger: Logger) async {
        let entries = OutboxEvent.battery(notice, at: Date(), routes: store.outboxRoutes)
        do {
            _ = try await store.enqueueOutbox(entries)
        } catch {
            logger.error("the outbox did not take the notice that \(notice.sentence): \(error)")
        }
    }

    /// The curtain groups as `SystemState` keeps them (none while the curtain is disabled).
    static func groups(_ config: DaemonConfig) -> [CurtainGroup] {
        config[.curtainEnabled] ? config.curtainGroups : []
    }

    static func lendingSettings(_ config: DaemonConfig) -> (policy: LendingPolicy, location: String) {
        let loanDays = config[.lendingLoanDays]
        let limit = config[.lendingMaxActivePerUser]
        let location = config[.lendingLocation].isEmpty ? ProcessInfo.processInfo.hostName : config[.lendingLocation]
        return (LendingPolicy(armDuration: TimeInterval(config[.lendingArmSeconds]),
                              defaultLoanPeriod: loanDays > 0 ? TimeInterval(loanDays * 86400) : nil,
                              repeatWindow: config[.lendingRepeatWindow],
                              maxActivePerUser: limit > 0 ? limit : nil,
                              bookingGuard: TimeInterval(config[.lendingBookingGuard] * 60)),
                location)
    }

    /// Raises the soft limit on open files to the hard limit (at most 65536), as servers that
    /// hold many client connections do; systemd sets a soft limit of 1024 by default.
    private static func raiseOpenFileLimit(_ logger: Logger) {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 65536)
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted
            if setrlimit(resource, &limit) != 0 {
                logger.debug("could not raise the open-file limit: \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func printError(_ message: String) {
        var text = message + "\n"
        text.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
    }
}

/// A failure before the daemon could start serving, with the exit status to use.
struct StartupError: Error {
    let exit: DaemonExit
    let message: String
    init(_ exit: DaemonExit, _ message: String) {
        self.exit = exit
        self.message = message
    }
}

extension VarlinkServerConfiguration {
    /// The daemon's socket settings: a call that comes while the daemon stops gets
    /// `io.roombridge.State.ShuttingDown`, not an end of file.
    static func answeringShutdown(
        listen: Listen, maxMessageSize: Int, maxConnections: Int, maxConnectionsPerUser: Int, reservedConnections: Int,
        stallTimeout: Duration, idleTimeout: Duration, isPrivileged: @escaping @Sendable (PeerCredentials) -> Bool
    ) -> VarlinkServerConfiguration {
        var c = VarlinkServerConfiguration(listen: listen, maxMessageSize: maxMessageSize, maxConnections: maxConnections,
                                           maxConnectionsPerUser: maxConnectionsPerUser, reservedConnections: reservedConnections,
                                           stallTimeout: stallTimeout, idleTimeout: idleTimeout, isPrivileged: isPrivileged)
        c.shuttingDownReply = VarlinkError("io.roombridge.State.ShuttingDown")
        return c
    }
}

/// Serves the Varlink socket until shutdown; on shutdown it first ends every `Watch` (clients get
/// `io.roombridge.State.ShuttingDown`), then closes connections and removes the socket file
/// (unless systemd owns it).
struct VarlinkSocketService: Service {
    let server: VarlinkServer
    let state: SystemState
    let logger: Logger

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await server.run()
        } onGracefulShutdown: {
            Task {
                // End every Watch first (its client gets ShuttingDown); the server lets calls in
                // progress send that final reply, then closes the connections and the listener.
                await state.shutdown()
                await server.shutdown(gracePeriod: .milliseconds(500))
            }
        }
    }
}

/// Group lookups (`getgrnam_r`).
enum GroupDirectory {
    static func gid(named name: String) -> UInt32? {
        var group = group()
        var result: UnsafeMutablePointer<group>? = nil
        var buffer = [CChar](repeating: 0, count: 16384)
        let rc = getgrnam_r(name, &group, &buffer, buffer.count, &result)
        guard rc == 0, result != nil else { return nil }
        return group.gr_gid
    }
}

/// User name lookups (`getpwuid_r`), remembered per UID: names are recorded as who made a
/// change, and a call must not wait on the user database more than once per user.
enum UserDirectory {
    private static let names = Mutex<[UInt32: String]>([:])

    @Sendable static func name(uid: UInt32) -> String? {
        if let known = names.withLock({ $0[uid] }) { return known }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>? = nil
        var buffer = [CChar](repeating: 0, count: 16384)
        let rc = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
        guard rc == 0, result != nil, let pointer = entry.pw_name else { return nil }
        let name = String(cString: pointer)
        names.withLock { $0[uid] = name }
        return name
    }
}

extension Logger.Level {
    /// Parses a `log.level` name (`notice` included).
    init?(configName: String) {
        switch configName {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning": self = .warning
        case "error": self = .error
        case "critical": self = .critical
        default: return nil
        }
    }
}
