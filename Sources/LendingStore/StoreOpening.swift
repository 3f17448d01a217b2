import Foundation
import GRDB
import Lending
#if canImport(Glibc)
import Glibc
#endif

/// Where and how to open the lending database.
public struct StoreConfiguration: Sendable, Hashable {
    /// How much checking to do at open.
    public enum IntegrityCheck: Sendable, Hashable {
        /// No check (fast start on huge files).
        case none
        /// `PRAGMA quick_check`: page and row structure, O(size) but skips index contents.
        case quick
        /// `PRAGMA integrity_check`: also verifies every index against its table.
        case full
    }

    /// Default database path.
    public static let defaultPath = "/var/lib/roombridge/roombridge.sqlite"

    /// Database file; its directory is created (mode 0750) if missing.
    public var path: String
    /// How long a write waits for another process (a second daemon) holding the lock.
    public var busyTimeout: TimeInterval
    public var integrityCheck: IntegrityCheck
    /// Concurrent read connections.
    public var maximumReaderCount: Int
    /// The outbox's delivery targets: lends, returns, renewals and overdue events write outbox
    /// entries for them. Empty (no targets configured): no entries are written. These are the
    /// routes at open; the store's `setOutboxRoutes(_:)` replaces them (a reloaded configuration).
    public var outboxRoutes: [OutboxRoute]

    public init(
        path: String = StoreConfiguration.defaultPath, busyTimeout: TimeInterval = 5,
        integrityCheck: IntegrityCheck = .quick, maximumReaderCount: Int = 4, outboxRoutes: [OutboxRoute] = []
    ) {
        self.outboxRoutes = outboxRoutes
        self.path = path
        self.busyTimeout = busyTimeout
        self.integrityCheck = integrityCheck
        self.maximumReaderCount = maximumReaderCount
    }
}

/// Why the database could not be opened. Nothing was modified when one of these is thrown.
public enum StoreOpenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The database has migrations this binary does not know: it was written by a newer
    /// RoomBridge.
    case newerThanBinary(path: String, unknownMigrations: [String])
    /// Not an SQLite database, or it fails the integrity check.
    case corrupt(path: String, detail: String)
    /// An SQLite database of another application.
    case foreignDatabase(path: String, detail: String)
    /// The file or its directory cannot be written.
    case notWritable(path: String, reason: String)
    /// The directory could not be created.
    case cannotCreateDirectory(path: String, reason: String)
    /// Any other SQLite failure at open.
    case openFailed(path: String, detail: String)

    public var description: String {
        switch self {
        case .newerThanBinary(let path, let unknown):
            return "\(path) was written by a newer RoomBridge (unknown schema migrations: \(unknown.joined(separator: ", "))); upgrade roombridged or point it at another database"
        case .corrupt(let path, let detail):
            return "\(path) is corrupt (\(detail)); restore it from a backup or move it aside to start empty"
        case .foreignDatabase(let path, let detail):
            return "\(path) is not a RoomBridge database (\(detail)); configure another database path"
        case .notWritable(let path, let reason):
            return "\(path) is not writable (\(reason)); fix its owner/permissions or configure another path"
        case .cannotCreateDirectory(let path, let reason):
            return "cannot create directory \(path) (\(reason)); create it or configure another database path"
        case .openFailed(let path, let detail):
            return "cannot open \(path) (\(detail))"
        }
    }
}

extension SQLiteInventoryStore {
    /// Opens (creating if needed) and migrates the database, refusing — without changing
    /// anything — a database that is newer than this binary, corrupt, foreign or not writable.
    /// The blocking work runs on a Dispatch queue, not on the cooperative pool.
    public static func open(_ configuration: StoreConfiguration = StoreConfiguration()) async throws -> SQLiteInventoryStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try openBlocking(configuration) })
            }
        }
    }

    /// Synchronous ``open(_:)`` for tools and tests that are not async.
    public static func openBlocking(_ configuration: StoreConfiguration) throws -> SQLiteInventoryStore {
        let path = configuration.path
        try preflight(path)

        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(configuration.busyTimeout)
        config.maximumReaderCount = max(1, configuration.maximumReaderCount)
        config.label = "roombridge.lending"
        // WAL + synchronous=FULL: the WAL is fsynced at every commit, so an acknowledged
        // lend survives a power cut (https://sqlite.org/pragma.html#pragma_synchronous);
        // NORMAL in WAL mode may lose the last commits. Set below, after GRDB's own setup.

        // Check an existing file through a read-only connection first: opening a
        // DatabasePool writes (GRDB's setUpWALMode switches to WAL and commits a dummy
        // CREATE/DROP TABLE so that the -wal file is not empty), which must not happen to a
        // corrupt, foreign or newer database.
        if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 {
            var readOnly = Configuration()
            readOnly.readonly = true
            readOnly.busyMode = .timeout(configuration.busyTimeout)
            try leavingNoTrace(of: path) {
                do {
                    let queue = try DatabaseQueue(path: path, configuration: readOnly)
                    defer { try? queue.close() }
                    try queue.read { db in try check(db, path: path, configuration: configuration) }
                } catch let error as DatabaseError {
                    throw mapOpenError(error, path: path)
                }
            }
        }

        let pool: DatabasePool
        do {
            pool = try openPool(path: path, configuration: config, busyTimeout: configuration.busyTimeout)
        } catch let error as DatabaseError {
            throw mapOpenError(error, path: path)
        }
        do {
            // GRDB sets synchronous=NORMAL on the writer after `prepareDatabase`
            // (Database.setUpWALMode); the writer connection lives as long as the pool, so
            // setting FULL once here holds for every write.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try migrate(pool)
        } catch let error as DatabaseError {
            try? pool.close()
            throw mapOpenError(error, path: path)
        } catch {
            try? pool.close()
            throw error
        }
        let store = SQLiteInventoryStore(pool: pool, path: path, outboxRoutes: configuration.outboxRoutes)
        // No write is accepted before the indexes that guard lending's invariants are known to
        // match the table (the full integrity check runs later, while calls are served).
        if configuration.integrityCheck != .none {
            let problems: [String]
            do {
                problems = try pool.read(verifyWriteGuards)
            } catch let error as DatabaseError {
                problems = ["checking the rentals' indexes failed: \(error.message ?? "\(error)")"]
            }
            if !problems.isEmpty { store.refuseWrites(detail: problems.joined(separator: "; ")) }
        }
        return store
    }

    /// File-level checks before SQLite touches anything.
    ///
    /// Only `access(2)` is used on the database files: opening and closing another descriptor
    /// of a file would drop every POSIX lock this process holds on it, including SQLite's
    /// (https://sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
    /// `access(W_OK)` also reports immutable files and read-only mounts for root.
    private static func preflight(_ path: String) throws {
        let fm = FileManager.default
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        if !fm.fileExists(atPath: directory) {
            do {
                try fm.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                       attributes: [.posixPermissions: 0o750])
            } catch {
                throw StoreOpenError.cannotCreateDirectory(path: directory, reason: "\(error.localizedDescription)")
            }
        }
        // WAL needs to create -wal and -shm beside the file.
        if access(directory, W_OK | X_OK) != 0 {
            throw StoreOpenError.notWritable(path: directory, reason: String(cString: strerror(errno)))
        }
        for file in [path, path + "-wal", path + "-shm"] where fm.fileExists(atPath: file) {
            if access(file, R_OK | W_OK) != 0 {
                throw StoreOpenError.notWritable(path: file, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Runs `body` (a read-only look at the database); if it throws (the database is refused),
    /// removes the `-wal` and `-shm` files that opening it created, so that the directory is
    /// left as it was found. A `-wal` that holds anything is never removed.
    static func leavingNoTrace<T>(of path: String, _ body: () throws -> T) throws -> T {
        let created = [path + "-wal", path + "-shm"].filter { !FileManager.default.fileExists(atPath: $0) }
        do {
            return try body()
        } catch {
            let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            if walSize == 0 {
                for file in created { unlink(file) }
            }
            throw error
        }
    }

    /// Integrity, ownership and version checks on an open connection (read-only).
    static func check(_ db: Database, path: String, configuration: StoreConfiguration) throws {
        let pragma: String? = switch configuration.integrityCheck {
        case .none: nil
        case .quick: "PRAGMA quick_check(10)"
        case .full: "PRAGMA integrity_check(10)"
        }
        if let pragma {
            let rows = try String.fetchAll(db, sql: pragma)
            if rows != ["ok"] {
                throw StoreOpenError.corrupt(path: path, detail: rows.joined(separator: "; "))
            }
        }
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        if applicationID != 0 && applicationID != Schema.applicationID {
            throw StoreOpenError.foreignDatabase(path: path, detail: "application_id \(applicationID)")
        }
        let hasMigrations = try db.tableExists("grdb_migrations")
        if !hasMigrations {
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' LIMIT 3")
            if !tables.isEmpty {
                throw StoreOpenError.foreignDatabase(path: path, detail: "unknown tables \(tables.joined(separator: ", "))")
            }
            return
        }
        let migrator = Schema.migrator
        if try migrator.hasBeenSuperseded(db) {
            let known = Set(migrator.migrations)
            let unknown = try migrator.appliedIdentifiers(db).subtracting(known).sorted()
            throw StoreOpenError.newerThanBinary(path: path, unknownMigrations: unknown)
        }
    }

    /// Runs the migrations. GRDB reads the applied identifiers outside the migrations'
    /// transactions, so two daemons starting together on a fresh file can both try the same
    /// migration; the loser's transaction rolls back and it tries again from the new state.
    private static func migrate(_ pool: DatabasePool) throws {
        let migrator = Schema.migrator
        var attempt = 0
        while true {
            do {
                try migrator.migrate(pool)
                return
            } catch let error as DatabaseError {
                attempt += 1
                if try pool.read(migrator.hasCompletedMigrations) { return }
                if attempt >= 5 { throw error }
            }
        }
    }

    /// Opens the pool, trying again while another process switches the same new file to WAL.
    /// `PRAGMA journal_mode = WAL` needs an exclusive lock; a connection that already holds a
    /// shared lock gets SQLITE_BUSY at once, without the busy handler (SQLite refuses to wait
    /// where two waiters could deadlock), so two daemons or tools opening a fresh file together
    /// could fail with "database is locked". Runs on a Dispatch thread (see ``open(_:)``).
    static func openPool(path: String, configuration: Configuration, busyTimeout: TimeInterval) throws -> DatabasePool {
        let deadline = ContinuousClock.now + .milliseconds(Int(busyTimeout * 1000))
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline {
                usleep(20_000)
            }
        }
    }

    static func mapOpenError(_ error: DatabaseError, path: String) -> StoreOpenError {
        switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return .corrupt(path: path, detail: error.message ?? "\(error)")
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
            return .notWritable(path: path, reason: error.message ?? "\(error)")
        default:
            return .openFailed(path: path, detail: "\(error)")
        }
    }
}

extension StoreOpenError: LocalizedError {
    /// Same as ``description``, so `localizedDescription` shows the actionable text.
    public var errorDescription: String? { description }
}
