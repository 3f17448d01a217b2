import Foundation
import GRDB
import Lending
import Synchronization

/// Something about the database's health that the operator should hear about once, not once
/// per call.
public enum StoreHealthEvent: Sendable, Equatable {
    /// A write failed because the disk is full (the first of an episode).
    case diskFull(directory: String)
    /// A write succeeded again after ``diskFull(directory:)``.
    case diskSpaceAvailable(directory: String)
    /// A full integrity check passed.
    case integrityConfirmed
    /// The database failed an integrity check; from now on writes are refused, reads still work.
    case integrityFailed(LendingError)
}

/// What writes need to know about the store's health.
struct StoreHealthState {
    /// Set once an integrity check failed: every write throws it.
    var refusal: LendingError?
    /// In a disk-full episode.
    var diskFull = false
    var observer: (@Sendable (StoreHealthEvent) -> Void)?
}

/// Thrown inside a write transaction when the data breaks an invariant its indexes should have
/// enforced; the transaction rolls back.
struct StoreIntegrityViolation: Error {
    let detail: String
}

extension SQLiteInventoryStore {
    /// The directory holding the database (the disk that can fill up).
    var directory: String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }

    /// Calls `observer` for every ``StoreHealthEvent`` from now on.
    public func observeHealth(_ observer: @escaping @Sendable (StoreHealthEvent) -> Void) {
        health.withLock { $0.observer = observer }
    }

    /// Why writes are refused (a failed integrity check), or nil.
    public var writeRefusal: LendingError? { health.withLock { $0.refusal } }

    /// Every change goes through here: refused after a failed integrity check, and a full disk
    /// becomes ``LendingError/storageFull(directory:)`` (SQLite reports `ENOSPC` as `SQLITE_FULL`,
    /// as it does a database at its `max_page_count`).
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if let refusal = writeRefusal { throw refusal }
        do {
            let result = try await pool.write(updates)
            let recovered = health.withLock { s in
                defer { s.diskFull = false }
                return s.diskFull ? s.observer : nil
            }
            recovered?(.diskSpaceAvailable(directory: directory))
            return result
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            let first = health.withLock { s in
                defer { s.diskFull = true }
                return s.diskFull ? nil : s.observer
            }
            first?(.diskFull(directory: directory))
            throw LendingError.storageFull(directory: directory)
        } catch let violation as StoreIntegrityViolation {
            throw refuseWrites(detail: violation.detail)
        }
    }

    /// Refuses writes from now on; returns the error writes get.
    @discardableResult
    func refuseWrites(detail: String) -> LendingError {
        let error = LendingError.storageCorrupt(path: path, detail: detail)
        let observer = health.withLock { s in
            let first = s.refusal == nil
            if first { s.refusal = error }
            return first ? s.observer : nil
        }
        observer?(.integrityFailed(error))
        return writeRefusal ?? error
    }

    /// Runs SQLite's full `integrity_check` (which, unlike `quick_check`, compares every index
    /// with its table) and checks "at most one active rental per device" with a scan that uses
    /// no index. On a reader connection: calls keep being served meanwhile. On failure writes
    /// are refused from now on (reads still work) and the error is returned.
    @discardableResult
    public func checkIntegrity() async throws -> LendingError? {
        let problems: [String] = try await read { db in
            var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check(10)").filter { $0 != "ok" }
            let doubled = try String.fetchAll(db, sql: """
                SELECT device_id FROM rentals NOT INDEXED WHERE returned_at IS NULL
                GROUP BY device_id HAVING COUNT(*) > 1 ORDER BY device_id LIMIT 10
                """)
            if !doubled.isEmpty {
                problems.append("more than one active rental for \(doubled.joined(separator: ", "))")
            }
            return problems
        }
        if problems.isEmpty {
            let observer = health.withLock { $0.observer }
            observer?(.integrityConfirmed)
            return nil
        }
        return refuseWrites(detail: problems.joined(separator: "; "))
    }

    /// Active rentals of a device, counted through `rentals_by_device` rather than the partial
    /// unique index whose damage this is meant to catch.
    static func activeRentalCountWithoutUniqueIndex(_ db: Database, deviceId: DeviceID) throws -> Int {
        try Int.fetchOne(db, sql: """
            SELECT COUNT(*) FROM rentals INDEXED BY rentals_by_device WHERE device_id = ? AND returned_at IS NULL
            """, arguments: [deviceId]) ?? 0
    }
}
