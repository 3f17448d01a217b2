import Foundation
import GRDB
import Lending
import Synchronization

/// The SQLite (GRDB `DatabasePool`, WAL, `synchronous=FULL`) implementation of
/// ``Lending/InventoryStore``. Open it with ``open(_:)``.
///
/// SQLite never runs on the cooperative pool. Writes use GRDB's async APIs (GRDB's writer
/// queue); reads run GRDB's synchronous read on the store's own read queue (``read(_:)``), one
/// thread hop each way: GRDB's async read also hops through its reader pool's queues, which
/// made a point lookup several times slower (docs/benchmarks.md, "Store at scale", measures
/// both against the same query read synchronously). Every mutation is one
/// `BEGIN IMMEDIATE` transaction; SQLite's single-writer lock plus the busy timeout serialize
/// writers across processes, and the partial unique index
/// `rentals_one_active_per_device` is the final arbiter of "one active rental per device".
public final class SQLiteInventoryStore: InventoryStore {
    let pool: DatabasePool
    /// The database file.
    public let path: String
    let health = Mutex(StoreHealthState())
    /// Where lending events go (``StoreConfiguration/outboxRoutes``, then ``setOutboxRoutes(_:)``).
    private let routes: Mutex<[OutboxRoute]>
    public var outboxRoutes: [OutboxRoute] { routes.withLock { $0 } }

    init(pool: DatabasePool, path: String, outboxRoutes: [OutboxRoute] = []) {
        self.pool = pool
        self.path = path
        self.routes = Mutex(outboxRoutes)
    }

    public func setOutboxRoutes(_ routes: [OutboxRoute]) { self.routes.withLock { $0 = routes } }

    /// Where reads run: concurrent, so reads still run side by side on the pool's readers. A
    /// libdispatch queue, not threads of our own: the worker that ran a read resumes the awaiting
    /// task itself, so the pool pays no wake-up (four threads of our own, the one idle last taking
    /// the next read, were measured: the store's lookup 94–117 µs against 57 here, since each
    /// resume then woke a pool thread; GetDevice, offloaded, no faster beyond the VM's noise).
    private let readQueue = DispatchQueue(label: "roombridge.store.read", attributes: .concurrent)

    /// Runs `body` in a read transaction of the pool, on the read queue's threads.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            readQueue.async { [pool] in
                continuation.resume(with: Result { try pool.read(body) })
            }
        }
    }

    public var blockingReads: (any BlockingInventoryReads)? { SQLiteBlockingReads(pool: pool, queue: readQueue) }

    /// Closes the connections (further calls fail). Blocks until running accesses finish;
    /// call it once at shutdown, off the cooperative pool if accesses may be long.
    /// Closes the database, the writer last: the last connection to a WAL database that
    /// closes checkpoints the WAL and deletes it, but only a connection that can write can do
    /// that. GRDB's `DatabasePool.close()` closes its writer first and its readers after it, so
    /// after any read the `-wal` (with everything since the last checkpoint) was left behind.
    /// The idle readers are closed first here, so that a clean stop leaves only the database file.
    public func close() throws {
        pool.invalidateReadOnlyConnections()
        try pool.close()
    }
}

/// ``SQLiteInventoryStore``'s reads made synchronously on its read queue.
struct SQLiteBlockingReads: BlockingInventoryReads {
    let pool: DatabasePool
    let queue: DispatchQueue

    func schedule(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }

    func deviceDetail(id: DeviceID) throws -> DeviceDetail? {
        try pool.read { db in try SQLiteInventoryStore.deviceDetail(db, id: id) }
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
