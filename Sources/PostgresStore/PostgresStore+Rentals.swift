#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
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
        let at = StoreConventions.millis(request.at)
        let routes = outboxRoutes
        do {
            return try await transaction { c in
                if let limit = request.maxActivePerUser {
                    try await Self.checkLimit(c, userId: request.userId, limit: limit, logger: logger)
                }
                // Share locks: deleting the device or the user, or changing the device's status,
                // waits until this lend has committed (and then sees its rental).
                let found = try await Self.rows(c, """
                    SELECT (SELECT true FROM devices WHERE id = \(request.deviceId) FOR SHARE),
                           (SELECT true FROM users WHERE id = \(request.userId) FOR SHARE)
                    """, logger: logger) { (try $0[0].decode(Bool?.self), try $0[1].decode(Bool?.self)) }.first
                guard found?.0 == true else { throw LendingError.noSuchDevice(request.deviceId) }
                guard found?.1 == true else { throw LendingError.noSuchUser(request.userId) }
                // After the device's share lock: a booking of it (which locks the row) waits or has committed.
                let next = try await Self.nextBooking(c, deviceId: request.deviceId, at: request.at, logger: logger)
                let admission = try BookingRules.admit(request, next: next)
                let due = admission.dueAt.map(StoreConventions.millis)
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
                    if let rental = inserted.first {
                        if let booking = admission.fulfils {
                            try await Self.fulfil(c, booking: booking, rental: rental.id, logger: logger)
                        }
                        try await Self.writeOutbox(c, .lend, rental, at: request.at, routes: routes, logger: logger)
                        return rental
                    }
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

    /// Refuses a lend past `lending.max_active_per_user` (``LendingRules/checkLimit(userId:userName:active:limit:)``).
    /// The user's row is locked (`FOR NO KEY UPDATE`) until the lend commits: a second lend for the
    /// same user, from any daemon, waits here and then counts the first one's rental (each
    /// statement of a READ COMMITTED transaction sees what committed before it). An unknown user
    /// is left to the lend, which reports it.
    static func checkLimit(_ c: PostgresConnection, userId: UserID, limit: Int, logger: Logger) async throws {
        guard let name = try await rows(c, "SELECT name FROM users WHERE id = \(userId) FOR NO KEY UPDATE", logger: logger, {
            try $0[0].decode(String.self)
        }).first else { return }
        let active = try await rows(c, """
            SELECT device_id FROM rentals WHERE returned_at IS NULL AND user_id = \(userId) ORDER BY rented_at, id
            """, logger: logger) { try $0[0].decode(String.self) }
        try LendingRules.checkLimit(userId: userId, userName: name, active: active, limit: limit)
    }

    /// One `UPDATE … RETURNING`: of two kiosks returning the same device, the second waits for
    /// the first's row lock, then finds the rental returned and reports ``LendingError/notLent``.
    /// With `markBroken`, a normal device's status becomes broken in the same transaction (logged
    /// as the returner's change); a device of another status keeps it.
    public func returnDevice(_ request: ReturnRequest) async throws -> Rental {
        if let note = request.note { try Validation.returnNote(note) }
        let logger = self.logger
        let at = StoreConventions.millis(request.at)
        let routes = outboxRoutes
        return try await transaction { c in
            // Clocks of two readers may disagree: never record a return before the lend.
            let returned = try await Self.rows(c, """
                UPDATE rentals SET returned_at = GREATEST(\(at), rented_at), returned_by = \(request.returnedBy?.text),
                                   return_location = \(request.location), return_note = \(request.note)
                WHERE device_id = \(request.deviceId) AND returned_at IS NULL
                RETURNING \(unescaped: Columns.rental.replacingOccurrences(of: "r.", with: ""))
                """, logger: logger) { try Decode.rental($0) }
            if let rental = returned.first {
                if request.markBroken, try await Self.changed(c, """
                    UPDATE devices SET status = \(DeviceStatus.broken.rawValue)
                    WHERE id = \(request.deviceId) AND status = \(DeviceStatus.normal.rawValue) RETURNING 1
                    """, logger: logger) == 1 {
                    _ = try await Self.log(c, request.deviceId, .update, "status", DeviceStatus.normal.rawValue,
                                           DeviceStatus.broken.rawValue, request.at, request.returnedBy, logger: logger)
                }
                try await Self.writeOutbox(c, .return, rental, at: request.at, routes: routes, logger: logger)
                return rental
            }
            if try await Self.exists(c, "SELECT 1 FROM devices WHERE id = \(request.deviceId)", logger: logger) {
                throw LendingError.notLent(request.deviceId)
            }
            throw LendingError.noSuchDevice(request.deviceId)
        }
    }

    /// The active rental's row is locked while its due date moves: a return at the same moment
    /// either comes first (then this reports ``LendingError/notLent``) or waits.
    public func renew(deviceId: DeviceID, dueAt: Date, at: Date, by actor: ChangeActor?) async throws -> Rental {
        if dueAt <= at {
            throw LendingError.invalidField("dueAt", reason: "\(LendingFormat.iso8601(dueAt)) is not in the future; give a later date")
        }
        let logger = self.logger
        let due = StoreConventions.millis(dueAt)
        let routes = outboxRoutes
        return try await transaction { c in
            // The device's share lock orders the renewal with a booking of the device (see book(_:)).
            try await c.query("SELECT 1 FROM devices WHERE id = \(deviceId) FOR SHARE", logger: logger)
            guard var rental = try await Self.rows(c, """
                SELECT \(unescaped: Columns.rental) FROM rentals r WHERE r.device_id = \(deviceId) AND r.returned_at IS NULL
                FOR UPDATE
                """, logger: logger, { try Decode.rental($0) }).first else {
                if try await Self.exists(c, "SELECT 1 FROM devices WHERE id = \(deviceId)", logger: logger) {
                    throw LendingError.notLent(deviceId)
                }
                throw LendingError.noSuchDevice(deviceId)
            }
            try BookingRules.checkRenewal(deviceId: deviceId, dueAt: dueAt, borrower: rental.userId,
                                          next: try await Self.nextBooking(c, deviceId: deviceId, at: at, logger: logger))
            try await c.query("UPDATE rentals SET due_at = \(due) WHERE id = \(rental.id)", logger: logger)
            _ = try await Self.log(c, deviceId, .update, "dueAt", rental.dueAt.map(LendingFormat.iso8601),
                                   LendingFormat.iso8601(dueAt), at, actor, logger: logger)
            rental.dueAt = StoreConventions.date(millis: due)
            try await Self.writeOutbox(c, .renew, rental, at: at, routes: routes, logger: logger)
            return rental
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
        if let since = query.since {
            let t = s.bind(StoreConventions.millis(since))
            clauses.append(query.overlapping ? "(r.returned_at IS NULL OR r.returned_at >= \(t))" : "r.rented_at >= \(t)")
        }
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
