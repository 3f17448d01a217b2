#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Lending
import Logging
import PostgresNIO
import Synchronization

/// The PostgreSQL implementation of ``Lending/InventoryStore``, for several kiosks on one
/// inventory. Open it with ``open(_:logger:)``.
///
/// Connections come from a postgres-nio `PostgresClient` pool. Every mutation is one
/// transaction (READ COMMITTED); the database's constraints are the final arbiters (the partial
/// unique index `rentals_one_active_per_device`, foreign keys, triggers) and their refusals are
/// mapped to the same ``LendingError``s as the SQLite store's.
///
/// When the database cannot be reached, calls fail at once with
/// ``LendingError/storageOffline(since:)`` (nothing was recorded) while a background task
/// reconnects with backoff; see ``availability``.
public final class PostgresInventoryStore: InventoryStore {
    let client: PostgresClient
    public let configuration: PostgresStoreConfiguration
    let logger: Logger
    let connectivity: Connectivity
    /// This store's `application_name` on the server: tells its own rental changes from other daemons'.
    let origin: String
    private let runTask: Task<Void, Never>
    /// Where lending events go (``PostgresStoreConfiguration/outboxRoutes``, then ``setOutboxRoutes(_:)``).
    private let routes: Mutex<[OutboxRoute]>
    public var outboxRoutes: [OutboxRoute] { routes.withLock { $0 } }

    init(client: PostgresClient, configuration: PostgresStoreConfiguration, logger: Logger, origin: String = "roombridge") {
        self.client = client
        self.origin = origin
        self.configuration = configuration
        self.routes = Mutex(configuration.outboxRoutes)
        self.logger = logger
        self.runTask = Task { await client.run() }
        self.connectivity = Connectivity(client: client, timeout: configuration.connectTimeout,
                                         callTimeout: configuration.callTimeout, logger: logger)
    }

    deinit { runTask.cancel() }

    public func setOutboxRoutes(_ routes: [OutboxRoute]) { self.routes.withLock { $0 = routes } }

    /// Connects, checks the schema and migrates it. Refuses a database written by a newer
    /// RoomBridge or one holding other tables (``PostgresOpenError``), changing nothing.
    public static func open(_ configuration: PostgresStoreConfiguration,
                            logger: Logger = Logger(label: "roombridge.postgres")) async throws -> PostgresInventoryStore {
        // The pool logs every failed connection attempt at info; the store logs an offline
        // episode once (Connectivity).
        let background = Logger(label: logger.label) { _ in AtLeastWarning(logger.handler) }
        let origin = "roombridge-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let store = PostgresInventoryStore(client: PostgresClient(configuration: try clientConfiguration(configuration, applicationName: origin),
                                                                  backgroundLogger: background),
                                           configuration: configuration, logger: logger, origin: origin)
        do {
            try await store.migrate()
            return store
        } catch {
            store.close()
            throw error
        }
    }

    /// Closes the pool's connections; further calls fail.
    public func close() {
        connectivity.stop()
        runTask.cancel()
    }

    /// libpq's `require` and `prefer` encrypt without verifying the server's certificate.
    static var tlsConfiguration: TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        return tls
    }

    static func clientConfiguration(_ c: PostgresStoreConfiguration, applicationName: String = "roombridge") throws -> PostgresClient.Configuration {
        var config: PostgresClient.Configuration
        if let socket = c.unixSocketPath {
            config = .init(unixSocketPath: socket, username: c.username, password: c.password, database: c.database)
        } else {
            let tls: PostgresClient.Configuration.TLS = switch c.sslMode {
            case .disable: .disable
            case .prefer: .prefer(tlsConfiguration)
            case .require: .require(tlsConfiguration)
            }
            config = .init(host: c.host ?? "localhost", port: c.port, username: c.username, password: c.password,
                           database: c.database, tls: tls)
        }
        config.options.maximumConnections = max(1, c.maximumConnections)
        config.options.connectTimeout = c.connectTimeout
        config.options.additionalStartupParameters = [("application_name", applicationName)]
        return config
    }

    // MARK: Availability

    /// Whether the database answers, and since when it does not.
    public var availability: DatabaseAvailability { connectivity.availability }

    /// Calls `observer` whenever ``availability`` changes.
    public func observeAvailability(_ observer: @escaping @Sendable (DatabaseAvailability) -> Void) {
        connectivity.observe(observer)
    }

    // MARK: Running statements

    /// Runs `body` on a pooled connection. Offline: fails at once. A connection that cannot be had
    /// within the connect timeout, or one lost on the way, marks the database offline.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await connectivity.run(body)
    }

    /// Runs `body` in one transaction (BEGIN … COMMIT; ROLLBACK when it throws, rethrowing its
    /// error unchanged).
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            let result: T
            do {
                result = try await body(connection)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            do {
                try await connection.query("COMMIT", logger: logger)
            } catch let error as PSQLError where Connectivity.isConnectionLoss(error) {
                throw LendingError.storageOutcomeUnknown(detail: "\(error.code)")
            }
            return result
        }
    }

    /// All rows of `query`, each decoded by `decode`.
    static func rows<T>(_ connection: PostgresConnection, _ query: PostgresQuery, logger: Logger,
                        _ decode: (PostgresRandomAccessRow) throws -> T) async throws -> [T] {
        var result: [T] = []
        for try await row in try await connection.query(query, logger: logger) {
            result.append(try decode(row.makeRandomAccess()))
        }
        return result
    }

    /// The server's SQLSTATE and message of a failed statement.
    static func serverError(_ error: any Error) -> (state: String, message: String)? {
        guard let error = error as? PSQLError, let info = error.serverInfo,
              let state = info[.sqlState] else { return nil }
        return (state, info[.message] ?? "")
    }
}

/// Whether the PostgreSQL database answers.
public enum DatabaseAvailability: Sendable, Equatable {
    case online
    /// Unreachable since `since`; `reason` says what failed.
    case offline(since: Date, reason: String)
}

/// Why the PostgreSQL database could not be opened. Nothing was changed.
public enum PostgresOpenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The database has migrations this binary does not know: it was written by a newer RoomBridge.
    case newerThanBinary(database: String, unknownMigrations: [String])
    /// The database holds tables but no RoomBridge schema.
    case foreignDatabase(database: String, tables: [String])
    /// The server could not be reached or refused the connection; `problem` says which, for a
    /// message that names the fix.
    case connectFailed(database: String, detail: String, problem: ConnectProblem)

    public var description: String {
        switch self {
        case .newerThanBinary(let database, let unknown):
            return "\(database) was written by a newer RoomBridge (unknown schema migrations: \(unknown.joined(separator: ", "))); upgrade roombridged or point database.url at another database"
        case .foreignDatabase(let database, let tables):
            return "\(database) is not a RoomBridge database (it holds the tables \(tables.joined(separator: ", ")) but no schema_migrations); point database.url at an empty database"
        case .connectFailed(let database, let detail, _):
            return "cannot connect to \(database) (\(detail)); check that the server runs, database.url and the password file"
        }
    }
}

/// Why no connection to the server could be had.
public enum ConnectProblem: Sendable, Hashable {
    /// Nothing answered at the address: `reason` is the system's word ("connection refused",
    /// "no such socket", "the host name does not resolve", "no answer within 3 s").
    case unreachable(reason: String)
    /// The server asks for a password and none was given.
    case passwordRequired
    /// The server refused the login (a wrong password, or no pg_hba.conf line lets the user in).
    case loginRefused
    /// Anything else (TLS, a database that does not exist, …): the detail says what.
    case other

    /// The problem `error` (from connecting to the server) shows.
    static func of(_ error: any Error) -> ConnectProblem {
        guard let error = error as? PSQLError else { return .unreachable(reason: unreachableReason(error)) }
        switch error.code {
        case .authMechanismRequiresPassword:
            return .passwordRequired
        case .connectionError:
            return .unreachable(reason: unreachableReason(error.underlying))
        case .server:
            // 28P01 invalid_password, 28000 invalid_authorization_specification (no pg_hba.conf line, peer mismatch).
            let state = error.serverInfo?[.sqlState] ?? ""
            return state == "28P01" || state == "28000" ? .loginRefused : .other
        default:
            return .other
        }
    }

    private static func unreachableReason(_ error: (any Error)?) -> String {
        switch error {
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return unreachableReason(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name does not resolve" }
            return "no address to connect to"
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ENOENT: return "no such socket"
            case EACCES, EPERM: return "permission denied on the socket"
            case EHOSTUNREACH, ENETUNREACH: return "no route to the host"
            case ETIMEDOUT: return "connection timed out"
            default: return "\(error)"
            }
        case let error as ChannelError:
            if case .connectTimeout = error { return "no answer in time" }
            return "\(error)"
        case let error?:
            return "\(error)"
        case nil:
            return "no connection"
        }
    }
}

/// Passes on warnings and worse only, without touching the wrapped handler's level (a handler's
/// level may be shared: setting it on a copy of the daemon's logger would quieten the daemon).
struct AtLeastWarning: LogHandler {
    private var inner: any LogHandler

    init(_ inner: any LogHandler) { self.inner = inner }

    var logLevel: Logger.Level {
        get { max(inner.logLevel, .warning) }
        set {}  // fixed: the wrapped handler's level is left alone
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= logLevel else { return }
        inner.log(event: event)
    }
}
