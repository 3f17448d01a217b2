#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import PostgresNIO

// Lending, returning, and the rental queries (active, overdue, history).
extension PostgresInventoryStore {
    // MARK: Rentals

    /// One `INSERT … SELECT … ON CONFLICT DO NOTHING` copies the device's and the user's facts
    /// into the rental. The partial unique index `rentals_one_active_per_device` decides a race
    /// between kiosks: PostgreSQL makes the second insert wait for the first to commit, then
    /// inserts nothing, and the winner's rental is read back for ``LendingError/alreadyLent``.
    /// The trigger `rentals_only_normal_devices` refuses a device that is not normal.
    public func lend(_ request: LendRequest) async throws -> Rental {
        try StoreConventions.requireDueAfterLend(request)
        let logger = self.logger
        let (at, due) = (StoreConventions.millis(request.at), request.dueAt.map(StoreConventions.millis))
        do {
            return try await transaction { c in
                // Share locks: deleting the device or the user, or changing the device's status,
                // waits until this lend has committed (and then sees its rental).
                let found = try await Self.rows(c, """
                    SELECT (SELECT true FROM devices WHERE id = \(request.deviceId) FOR SHARE),
                           (SELECT true FROM users WHERE id = \(request.userId) FOR SHARE)
                    """, logger: logger) { (try $0[0].decode(Bool?.self), try $0[1].decode(Bool?.self)) }.first
                guard found?.0 == true else { throw LendingError.noSuchDevice(request.deviceId) }
                guard found?.1 == true else { throw LendingError.noSuchUser(request.userId) }
                // The winner of a race may return the device before we read its rental: then try again.
                for _ in 0..<3 {
                    let inserted: [Rental]
                    do {
                        inserted = try await Self.rows(c, """
                            INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name,
                                                 rented_at, due_at, location, lent_by)
                            SELECT d.id, d.model, d.os_version, d.serial_number, u.id, u.name, \(at), \(due), \(request.location),
                                   \(request.lentBy?.text)
                            FROM devices d, users u WHERE d.id = \(request.deviceId) AND u.id = \(request.userId)
                            ON CONFLICT (device_id) WHERE returned_at IS NULL DO NOTHING
                            RETURNING \(unescaped: Columns.rental.replacingOccurrences(of: "r.", with: ""))
                            """, logger: logger) { try Decode.rental($0) }
                    } catch let error where Self.serverError(error)?.message == PostgresSchema.Constraint.deviceNotLendable {
                        throw NotLendable()
                    }
                    if let rental = inserted.first { return rental }
                    if let winner = try await Self.fetchActiveRental(c, deviceId: request.deviceId, logger: logger) {
                        throw LendingError.alreadyLent(request.deviceId, userId: winner.userId, userName: winner.userName,
                                                       since: winner.rentedAt)
                    }
                }
                throw LendingError.alreadyLent(request.deviceId, userId: "?", userName: "another kiosk", since: request.at)
            }
        } catch is NotLendable {
            // A lent device that broke meanwhile is reported as lent, as SQLite's store does.
            let record = try await device(id: request.deviceId)
            if let active = record?.activeRental {
                throw LendingError.alreadyLent(request.deviceId, userId: active.userId, userName: active.userName,
                                               since: active.rentedAt)
            }
            throw LendingError.notLendable(request.deviceId, status: record?.device.status ?? .broken)
        }
    }

    /// The trigger refused the lend; the transaction is aborted, so the status is read after it.
    private struct NotLendable: Error {}

    /// One `UPDATE … RETURNING`: of two kiosks returning the same device, the second waits for
    /// the first's row lock, then finds the rental returned and reports ``LendingError/notLent``.
    public func returnDevice(_ request: ReturnRequest) async throws -> Rental {
        let logger = self.logger
        let at = StoreConventions.millis(request.at)
        return try await transaction { c in
            // Clocks of two readers may disagree: never record a return before the lend.
            let returned = try await Self.rows(c, """
                UPDATE rentals SET returned_at = GREATEST(\(at), rented_at), returned_by = \(request.returnedBy?.text),
                                   return_location = \(request.location)
                WHERE device_id = \(request.deviceId) AND returned_at IS NULL
                RETURNING \(unescaped: Columns.rental.replacingOccurrences(of: "r.", with: ""))
                """, logger: logger) { try Decode.rental($0) }
            if let rental = returned.first { return rental }
            if try await Self.exists(c, "SELECT 1 FROM devices WHERE id = \(request.deviceId)", logger: logger) {
                throw LendingError.notLent(request.deviceId)
            }
            throw LendingError.noSuchDevice(request.deviceId)
        }
    }

    public func activeRentals(userId: UserID?, page: PageRequest) async throws -> Page<Rental> {
        var s = Statement("SELECT \(Columns.rental) FROM rentals r")
        var clauses = ["r.returned_at IS NULL"]
        if let userId { clauses.append("r.user_id = \(s.bind(userId))") }
        if let cursor = page.cursor {
            let (t, id) = try StoreConventions.parseCursor(cursor)
            clauses.append("(r.rented_at, r.id) > (\(s.bind(t)), \(s.bind(id)))")
        }
        s.sql += " \(Statement.whereSQL(clauses)) ORDER BY r.rented_at, r.id LIMIT \(s.bind(Int64(page.limit + 1)))"
        let rentals = try await fetch(s.query) { try Decode.rental($0) }
        return StoreConventions.page(rentals, limit: page.limit) { StoreConventions.cursor(time: $0.rentedAt, id: $0.id) }
    }

    public func overdueRentals(at now: Date, page: PageRequest) async throws -> Page<Rental> {
        var s = Statement("SELECT \(Columns.rental) FROM rentals r")
        var clauses = ["r.returned_at IS NULL", "r.due_at IS NOT NULL"]
        clauses.append("r.due_at < \(s.bind(StoreConventions.millis(now)))")
        if let cursor = page.cursor {
            let (t, id) = try StoreConventions.parseCursor(cursor)
            clauses.append("(r.due_at, r.id) > (\(s.bind(t)), \(s.bind(id)))")
        }
        s.sql += " \(Statement.whereSQL(clauses)) ORDER BY r.due_at, r.id LIMIT \(s.bind(Int64(page.limit + 1)))"
        let rentals = try await fetch(s.query) { try Decode.rental($0) }
        return StoreConventions.page(rentals, limit: page.limit) {
            StoreConventions.cursor(time: $0.dueAt ?? $0.rentedAt, id: $0.id)
        }
    }

    public func history(_ query: HistoryQuery, page: PageRequest) async throws -> Page<Rental> {
        var s = Statement("SELECT \(Columns.rental) FROM rentals r")
        var clauses: [String] = []
        if let device = query.deviceId { clauses.append("r.device_id = \(s.bind(device))") }
        if let user = query.userId { clauses.append("r.user_id = \(s.bind(user))") }
        if let since = query.since { clauses.append("r.rented_at >= \(s.bind(StoreConventions.millis(since)))") }
        if let until = query.until { clauses.append("r.rented_at < \(s.bind(StoreConventions.millis(until)))") }
        if !query.includeActive { clauses.append("r.returned_at IS NOT NULL") }
        if let cursor = page.cursor {
            let (t, id) = try StoreConventions.parseCursor(cursor)
            clauses.append("(r.rented_at, r.id) < (\(s.bind(t)), \(s.bind(id)))")
        }
        s.sql += " \(Statement.whereSQL(clauses)) ORDER BY r.rented_at DESC, r.id DESC LIMIT \(s.bind(Int64(page.limit + 1)))"
        let rentals = try await fetch(s.query) { try Decode.rental($0) }
        return StoreConventions.page(rentals, limit: page.limit) { StoreConventions.cursor(time: $0.rentedAt, id: $0.id) }
    }
}
