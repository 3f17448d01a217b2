import Lending
import Logging
import PostgresNIO

extension PostgresInventoryStore {
    /// The schema migration identifiers this binary knows, oldest first.
    public static var knownMigrations: [String] { PostgresSchema.knownMigrations }

    /// The migrations applied to the database, in order.
    public func appliedMigrations() async throws -> [String] {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.rows(connection, "SELECT identifier FROM schema_migrations ORDER BY applied_at, identifier",
                                logger: logger) { try $0[0].decode(String.self) }
        }
    }

    /// Applies the missing migrations in one transaction under an advisory lock (two daemons
    /// starting together apply each once). A database with migrations this binary does not know,
    /// or with tables but no `schema_migrations`, is refused and left unchanged.
    func migrate() async throws {
        let (logger, database) = (logger, configuration.displayURL)
        do {
            try await transaction { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", logger: logger)
                let tables = try await Self.rows(connection, """
                    SELECT table_name::text FROM information_schema.tables
                    WHERE table_schema = current_schema() ORDER BY table_name
                    """, logger: logger) { try $0[0].decode(String.self) }
                var applied: [String] = []
                if tables.contains("schema_migrations") {
                    applied = try await Self.rows(connection, "SELECT identifier FROM schema_migrations", logger: logger) {
                        try $0[0].decode(String.self)
                    }
                } else if !tables.isEmpty {
                    throw PostgresOpenError.foreignDatabase(database: database, tables: Array(tables.prefix(5)))
                } else {
                    try await connection.query("""
                        CREATE TABLE schema_migrations (
                            identifier TEXT PRIMARY KEY,
                            applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
                        )
                        """, logger: logger)
                }
                let unknown = Set(applied).subtracting(PostgresSchema.knownMigrations).sorted()
                if !unknown.isEmpty {
                    throw PostgresOpenError.newerThanBinary(database: database, unknownMigrations: unknown)
                }
                for migration in PostgresSchema.migrations where !applied.contains(migration.id) {
                    for statement in PostgresSchema.statements(migration.sql) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query("INSERT INTO schema_migrations (identifier) VALUES (\(migration.id))", logger: logger)
                    logger.info("database schema migration \(migration.id) applied", metadata: ["database": "\(database)"])
                }
            }
        } catch LendingError.storageOffline {
            let (detail, problem) = await connectFailure()
            throw PostgresOpenError.connectFailed(database: database, detail: detail, problem: problem)
        }
    }

    /// Why no connection could be had: the pool only says it had none in time, so one connection
    /// is made directly to hear the server's (or the network's) own answer.
    private func connectFailure() async -> (detail: String, problem: ConnectProblem) {
        let c = configuration
        var config: PostgresConnection.Configuration
        do {
            if let socket = c.unixSocketPath {
                config = .init(unixSocketPath: socket, username: c.username, password: c.password, database: c.database)
            } else {
                let tls: PostgresConnection.Configuration.TLS = switch c.sslMode {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: Self.tlsConfiguration))
                case .require: .require(try NIOSSLContext(configuration: Self.tlsConfiguration))
                }
                config = .init(host: c.host ?? "localhost", port: c.port, username: c.username, password: c.password,
                               database: c.database, tls: tls)
            }
            config.options.connectTimeout = .seconds(c.connectTimeout.components.seconds)
            let connection = try await PostgresConnection.connect(configuration: config, id: 0, logger: logger)
            try? await connection.close()
            return ("the server answered only now; try again", .other)
        } catch {
            return (Connectivity.describe(error), ConnectProblem.of(error))
        }
    }
}
