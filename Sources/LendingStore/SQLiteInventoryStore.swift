import Foundation
import GRDB
import Lending
import Synchronization

/// The SQLite (GRDB `DatabasePool`, WAL, `synchronous=FULL`) implementation of
/// ``Lending/InventoryStore``. Open it with ``open(_:)``.
///
/// Writes and every query that scans use GRDB's async APIs, which run on GRDB's own dispatch
/// queues, never blocking the cooperative pool. Single-row lookups by key are the exception
/// (``lookup(_:)``): they run on the calling thread. Every mutation is one
/// `BEGIN IMMEDIATE` transaction; SQLite's single-writer lock plus the busy timeout serialize
/// writers across processes, and the partial unique index
/// `rentals_one_active_per_device` is the final arbiter of "one active rental per device".
public final class SQLiteInventoryStore: InventoryStore {
    let pool: DatabasePool
    /// The database file.
    public let path: String
    let health = Mutex(StoreHealthState())
    /// A read-only connection for ``lookup(_:)``, used by one lookup at a time.
    let lookupConnection: Mutex<DatabaseQueue?>

    init(pool: DatabasePool, path: String, lookupConnection: DatabaseQueue?) {
        self.pool = pool
        self.path = path
        self.lookupConnection = Mutex(lookupConnection)
    }

    /// A single-row lookup by an indexed key. It reads on the calling thread, on a connection of
    /// its own, when that connection is free; with the pages cached that is a few tens of µs of
    /// CPU, less than the async read's two thread hops (cooperative pool → reader queue → back;
    /// docs/benchmarks.md, "Store at scale"). It never waits there: when the connection is in use
    /// by another lookup, or SQLite reports it busy (the connection does not retry), the lookup
    /// takes GRDB's async read instead. Nothing that scans goes through here.
    func lookup<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            let result: T?? = try lookupConnection.withLockIfAvailable { queue throws -> T? in
                guard let queue else { return nil }
                return try queue.read(body)
            }
            if let result = result ?? nil { return result }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            // Fall through to the pool.
        }
        return try await pool.read(body)
    }

    /// Closes the connections (further calls fail). Blocks until running accesses finish;
    /// call it once at shutdown, off the cooperative pool if accesses may be long.
    public func close() throws {
        try lookupConnection.withLock { queue in try queue?.close(); queue = nil }
        try pool.close()
    }
}

/// Settings of an open store, for status output and checks.
public struct StoreDiagnostics: Sendable, Hashable {
    public var path: String
    /// `wal` when open normally.
    public var journalMode: String
    /// 2 = FULL.
    public var synchronous: Int
    public var foreignKeys: Bool
    /// Schema migrations applied to the file, in order.
    public var appliedMigrations: [String]
    /// Schema migrations this binary knows.
    public var knownMigrations: [String]
}

extension SQLiteInventoryStore {
    /// The schema migration identifiers this binary knows, oldest first.
    public static var knownMigrations: [String] { Schema.migrator.migrations }

    /// The writer connection's settings and the schema version.
    public func diagnostics() async throws -> StoreDiagnostics {
        let path = self.path
        return try await pool.writeWithoutTransaction { db in
            StoreDiagnostics(
                path: path,
                journalMode: try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                synchronous: try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1,
                foreignKeys: try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false,
                appliedMigrations: try Schema.migrator.appliedMigrations(db),
                knownMigrations: Schema.migrator.migrations)
        }
    }
}
