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

    /// Calls `observer` for every ``StoreHealthEvent`` from now on; at once with
    /// ``StoreHealthEvent/integrityFailed(_:)`` when writes are already refused (the check at
    /// open found damage, see ``verifyWriteGuards(_:)``).
    public func observeHealth(_ observer: @escaping @Sendable (StoreHealthEvent) -> Void) {
        let refusal = health.withLock { s in
            s.observer = observer
            return s.refusal
        }
        if let refusal { observer(.integrityFailed(refusal)) }
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

    /// Checks, before the store accepts its first write, the indexes that the write path trusts
    /// to enforce lending's invariants, against the table itself (read with `NOT INDEXED`):
    /// - `rentals_one_active_per_device` (the unique index that refuses a second active rental)
    ///   must hold exactly the active rentals, each under its own device;
    /// - `rentals_by_device` (what the lend re-counts through before it commits) must find each
    ///   active rental under its device;
    /// - `rentals_active_by_user` (the per-user limit) must hold exactly the active rentals, each
    ///   under its own user;
    /// - and no device has more than one active rental.
    ///
    /// `quick_check` at open does not compare index contents with the table, and the full
    /// `integrity_check` runs after start on a reader, while writes are served: without this, a
    /// damaged index page lets a lend through before that check ends (a double lend). One scan
    /// of `rentals` plus a lookup per active rental; `docs/benchmarks.md` has its cost at open.
    /// Returns what is wrong, empty when nothing is.
    static func verifyWriteGuards(_ db: Database) throws -> [String] {
        // Values are compared as SQLite gives them: a damaged page may hold anything.
        struct Active: Hashable { let id: DatabaseValue; let key: DatabaseValue }
        func active(_ rows: [Row], _ key: String) -> Set<Active> {
            Set(rows.map { Active(id: $0["id"], key: $0[key]) })
        }
        func differing(_ a: Set<Active>, _ b: Set<Active>) -> String {
            a.symmetricDifference(b).map(\.key.description).sorted().prefix(10).joined(separator: ", ")
        }
        let table = try Row.fetchAll(db, sql: """
            SELECT id, device_id, user_id FROM rentals NOT INDEXED WHERE returned_at IS NULL
            """)
        var problems: [String] = []
        let byDevice = active(table, "device_id")
        let byUser = active(table, "user_id")
        let doubled = Dictionary(grouping: table.map { ($0["device_id"] as DatabaseValue).description }, by: { $0 })
            .filter { $0.value.count > 1 }.keys.sorted()
        if !doubled.isEmpty {
            problems.append("more than one active rental for \(doubled.prefix(10).joined(separator: ", "))")
        }
        let unique = active(try Row.fetchAll(db, sql: """
            SELECT id, device_id FROM rentals INDEXED BY rentals_one_active_per_device WHERE returned_at IS NULL
            """), "device_id")
        if unique != byDevice {
            problems.append("the index rentals_one_active_per_device does not match the active rentals (\(differing(unique, byDevice)))")
        }
        let perUser = active(try Row.fetchAll(db, sql: """
            SELECT id, user_id FROM rentals INDEXED BY rentals_active_by_user WHERE returned_at IS NULL
            """), "user_id")
        if perUser != byUser {
            problems.append("the index rentals_active_by_user does not match the active rentals (\(differing(perUser, byUser)))")
        }
        let lookup = try db.makeStatement(sql: """
            SELECT id FROM rentals INDEXED BY rentals_by_device WHERE device_id = ? AND returned_at IS NULL
            """)
        for rental in byDevice {
            let found = try DatabaseValue.fetchAll(lookup, arguments: [rental.key])
            if found != [rental.id] {
                problems.append("the index rentals_by_device does not find the active rental of \(rental.key.description)")
                break
            }
        }
        return problems
    }

    /// Active rentals of a device, counted through `rentals_by_device` rather than the partial
    /// unique index whose damage this is meant to catch.
    static func activeRentalCountWithoutUniqueIndex(_ db: Database, deviceId: DeviceID) throws -> Int {
        try Int.fetchOne(db, sql: """
            SELECT COUNT(*) FROM rentals INDEXED BY rentals_by_device WHERE device_id = ? AND returned_at IS NULL
            """, arguments: [deviceId]) ?? 0
    }
}
