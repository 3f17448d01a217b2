import Foundation
import GRDB

/// What `roombridgectl doctor` needs to know about the database, read without changing it.
public struct StoreInspection: Sendable, Hashable {
    public enum SchemaState: Sendable, Hashable {
        /// No database file yet: roombridged creates it on first start.
        case absent
        /// Every migration this binary knows is applied.
        case current
        /// Migrations are missing: roombridged applies them at its next start.
        case older(missing: [String])
        /// roombridged would refuse to open it (newer than this binary, corrupt, foreign, unreadable).
        case refused(StoreOpenError)
    }
    public var path: String
    public var schema: SchemaState
    /// The file and its directory (or, when absent, the nearest existing directory) can be
    /// written by the calling user.
    public var writable: Bool
}

extension SQLiteInventoryStore {
    /// Inspects the database at `path` through a read-only connection, with the same checks
    /// ``open(_:)`` makes before it writes: nothing is created, migrated or changed.
    /// Blocking (file I/O): call it from a thread, not the cooperative pool.
    public static func inspect(path: String) -> StoreInspection {
        let fm = FileManager.default
        guard let size = try? fm.attributesOfItem(atPath: path)[.size] as? Int, size > 0 else {
            var dir = (path as NSString).deletingLastPathComponent
            while !dir.isEmpty, dir != "/", !fm.fileExists(atPath: dir) { dir = (dir as NSString).deletingLastPathComponent }
            return StoreInspection(path: path, schema: .absent, writable: access(dir.isEmpty ? "." : dir, W_OK) == 0)
        }
        let directory = (path as NSString).deletingLastPathComponent
        let writable = access(path, R_OK | W_OK) == 0 && access(directory.isEmpty ? "." : directory, W_OK | X_OK) == 0
        var readOnly = Configuration()
        readOnly.readonly = true
        do {
            let missing: [String] = try leavingNoTrace(of: path) {
                let queue = try DatabaseQueue(path: path, configuration: readOnly)
                defer { try? queue.close() }
                return try queue.read { db in
                    try check(db, path: path, configuration: StoreConfiguration(path: path))
                    let applied = try db.tableExists("grdb_migrations") ? try Schema.migrator.appliedIdentifiers(db) : []
                    return Schema.migrator.migrations.filter { !applied.contains($0) }
                }
            }
            return StoreInspection(path: path, schema: missing.isEmpty ? .current : .older(missing: missing), writable: writable)
        } catch let error as StoreOpenError {
            return StoreInspection(path: path, schema: .refused(error), writable: writable)
        } catch let error as DatabaseError {
            return StoreInspection(path: path, schema: .refused(mapOpenError(error, path: path)), writable: writable)
        } catch {
            return StoreInspection(path: path, schema: .refused(.openFailed(path: path, detail: "\(error)")), writable: writable)
        }
    }
}
