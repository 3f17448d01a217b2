import CurtainProtocol
import Lending
import LendingStore
import Logging
import PostgresStore
import RoomBridgeConfig
import RoomBridgeCore
import ServiceLifecycle

/// The lending database the configuration names: the SQLite file `database.path`, or PostgreSQL
/// when `database.url` is set (its password from `database.password_file` or the systemd
/// credential `database.password`, never from the configuration; with neither, no password:
/// the server's trust or peer authentication).
enum DatabaseBackend {
    case sqlite(SQLiteInventoryStore)
    case postgresql(PostgresInventoryStore)

    var store: any InventoryStore {
        switch self {
        case .sqlite(let store): store
        case .postgresql(let store): store
        }
    }

    /// Where the daemon keeps the schedules of curtains that keep none themselves: the same database.
    var curtainSchedules: any CurtainScheduleStore {
        switch self {
        case .sqlite(let store): store
        case .postgresql(let store): store
        }
    }

    /// Opens and migrates the configured database before anything is bound. A database that
    /// cannot be used stops the daemon (exit 73), bad settings too (78); a PostgreSQL server that
    /// does not answer yet is a plain failure, which systemd retries.
    static func open(_ config: DaemonConfig, environment: [String: String], logger: Logger) async throws -> DatabaseBackend {
        let url = config[.databaseURL]
        if url.isEmpty {
            do {
                let store = try await SQLiteInventoryStore.open(StoreConfiguration(path: config[.databasePath],
                                                                                   outboxRoutes: OutboxSetup.routes(config)))
                logger.info("database \(config[.databasePath]) open")
                return .sqlite(store)
            } catch let error as StoreOpenError {
                throw StartupError(.database, "database: \(error)")
            }
        }
        let configuration: PostgresStoreConfiguration
        do {
            let password = try Secrets.value(of: .databasePassword, in: config, environment: environment)
            var c = try PostgresStoreConfiguration(url: url, password: password)
            c.outboxRoutes = OutboxSetup.routes(config)
            configuration = c
        } catch {
            throw StartupError(.config, "\(error)")
        }
        do {
            let store = try await PostgresInventoryStore.open(configuration, logger: Logger(label: "roombridged.database"))
            logger.info("database \(configuration.displayURL) open (\(Self.authentication(configuration)))")
            return .postgresql(store)
        } catch let error as PostgresOpenError {
            if case .connectFailed = error { throw StartupError(.failure, "database: \(error)") }
            throw StartupError(.database, "database: \(error)")
        }
    }

    /// How the daemon authenticated to PostgreSQL, for the log: with a password (from `database.password_file` or
    /// the credential), else without one, which the server accepts only with `trust` or `peer` (a Unix socket
    /// whose peer is the role's namesake user) in pg_hba.conf.
    static func authentication(_ configuration: PostgresStoreConfiguration) -> String {
        configuration.password == nil ? "no password: trust or peer" : "password authentication"
    }

    /// The service that keeps the database for the daemon's life and closes it last.
    func service(config: DaemonConfig, state: SystemState, lending: LendingCoordinator) -> any Service {
        let logger = Logger(label: "roombridged.database")
        switch self {
        case .sqlite(let store):
            return StoreService(store: store,
                                integrityCheckInterval: .milliseconds(Int64(config[.databaseIntegrityCheckHours] * 3_600_000)),
                                logger: logger)
        case .postgresql(let store):
            return PostgresStoreService(store: store, state: state, lending: lending)
        }
    }
}

/// Keeps the PostgreSQL pool for the daemon's life: mirrors the database's availability into
/// `SystemState` (state and `status` show `database: offline since …`; the store itself logs the
/// episode and reconnects with backoff), reports the other kiosks' lends and returns (the store's
/// rental feed, LISTEN/NOTIFY) and closes the pool at shutdown.
struct PostgresStoreService: Service {
    let store: PostgresInventoryStore
    let state: SystemState
    let lending: LendingCoordinator

    func run() async throws {
        let (store, state) = (store, state)
        let (changes, continuation) = AsyncStream.makeStream(of: DatabaseAvailability.self, bufferingPolicy: .bufferingNewest(1))
        store.observeAvailability { continuation.yield($0) }
        continuation.yield(store.availability)
        await state.updateDatabase(DatabaseState(backend: .postgresql))
        let feed = Task { [store, lending] in
            for await change in await store.rentalChanges() { await lending.announceRemote(change) }
        }
        defer { feed.cancel() }
        await cancelWhenGracefulShutdown {
            for await availability in changes {
                switch availability {
                case .online:
                    await state.updateDatabase(DatabaseState(backend: .postgresql))
                case .offline(let since, let reason):
                    await state.updateDatabase(DatabaseState(backend: .postgresql, offlineSince: since, offlineReason: reason))
                }
            }
        }
        continuation.finish()
        store.close()
    }
}
