import Foundation
import GRDB
import Lending

// Lending, returning, and the rental queries (active, overdue, history).
extension SQLiteInventoryStore {
    // MARK: Rentals

    /// One `INSERT … SELECT` copies the device's and the user's facts into the rental; the
    /// schema refuses what the rules forbid (a second active rental: the partial unique index
    /// `rentals_one_active_per_device`; a device that is not normal: the trigger
    /// `rentals_only_normal_devices`), and the refusal is mapped to the domain's error.
    public func lend(_ request: LendRequest) async throws -> Rental {
        try StoreConventions.requireDueAfterLend(request)
        let routes = outboxRoutes
        return try await write { db in
            if let limit = request.maxActivePerUser, let user = try User.fetchOne(db, key: request.userId) {
                let active = try String.fetchAll(db, sql: """
                    SELECT device_id FROM rentals INDEXED BY rentals_active_by_user
                    WHERE returned_at IS NULL AND user_id = ? ORDER BY rented_at, id
                    """, arguments: [request.userId])
                try LendingRules.checkLimit(userId: user.id, userName: user.name, active: active, limit: limit)
            }
            let admission = try BookingRules.admit(request, next: try Self.nextBooking(db, deviceId: request.deviceId, at: request.at))
            do {
                try db.execute(sql: """
                    INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name,
                                         rented_at, due_at, location, lent_by)
                    SELECT d.id, d.model, d.os_version, d.serial_number, u.id, u.name, ?, ?, ?, ?
                    FROM devices d, users u WHERE d.id = ? AND u.id = ?
                    """, arguments: [
                        Millis.from(request.at), admission.dueAt.map(Millis.from), request.location, request.lentBy?.text,
                        request.deviceId, request.userId,
                    ])
            } catch let error as DatabaseError {
                throw try Self.lendRefusal(db, error, request)
            }
            guard db.changesCount == 1 else {
                if try Self.fetchDevice(db, id: request.deviceId) == nil { throw LendingError.noSuchDevice(request.deviceId) }
                throw LendingError.noSuchUser(request.userId)
            }
            let id = db.lastInsertedRowID
            // The unique index is the final arbiter; a damaged index page would let a second
            // rental through. Count again without it before committing.
            let active = try Self.activeRentalCountWithoutUniqueIndex(db, deviceId: request.deviceId)
            if active != 1 {
                throw StoreIntegrityViolation(detail: "device \(request.deviceId) would have \(active) active rentals; the index rentals_one_active_per_device is damaged")
            }
            guard let rental = try Rental.fetchOne(db, key: id) else {
                throw LendingError.noSuchDevice(request.deviceId)
            }
            if let booking = admission.fulfils { try Self.fulfil(db, booking: booking, rental: id) }
            try Self.writeOutbox(db, .lend, rental, at: request.at, routes: routes)
            return rental
        }
    }

    /// The domain error for a rental the schema refused.
    static func lendRefusal(_ db: Database, _ error: DatabaseError, _ request: LendRequest) throws -> any Error {
        guard error.resultCode == .SQLITE_CONSTRAINT else { return error }
        if let active = try fetchActiveRental(db, deviceId: request.deviceId) {
            return LendingError.alreadyLent(request.deviceId, userId: active.userId, userName: active.userName,
                                            since: active.rentedAt)
        }
        if error.message == Schema.Constraint.deviceNotLendable, let device = try fetchDevice(db, id: request.deviceId) {
            return LendingError.notLendable(device.id, status: device.status)
        }
        return error
    }

    public func returnDevice(_ request: ReturnRequest) async throws -> Rental {
        if let note = request.note { try Validation.returnNote(note) }
        let routes = outboxRoutes
        return try await write { db in
            guard var rental = try Self.fetchActiveRental(db, deviceId: request.deviceId) else {
                if try Self.exists(db, "SELECT 1 FROM devices WHERE id = ?", [request.deviceId]) {
                    throw LendingError.notLent(request.deviceId)
                }
                throw LendingError.noSuchDevice(request.deviceId)
            }
            // Clocks of two readers may disagree: never record a return before the lend.
            let returnedAt = max(Millis.from(request.at), Millis.from(rental.rentedAt))
            try db.execute(sql: """
                UPDATE rentals SET returned_at = ?, returned_by = ?, return_location = ?, return_note = ?
                WHERE id = ? AND returned_at IS NULL
                """, arguments: [returnedAt, request.returnedBy?.text, request.location, request.note, rental.id])
            if db.changesCount != 1 { throw LendingError.notLent(request.deviceId) }
            // Only a normal device becomes broken; a disposed one stays disposed.
            if request.markBroken, var device = try Self.fetchDevice(db, id: request.deviceId), device.status == .normal {
                let old = device.status
                device.status = .broken
                try device.update(db)
                _ = try Self.log(db, device.id, .update, "status", old.rawValue, DeviceStatus.broken.rawValue, request.at,
                                 request.returnedBy)
            }
            rental.returnedAt = Millis.date(returnedAt)
            rental.returnedBy = request.returnedBy?.text
            rental.returnLocation = request.location
            rental.returnNote = request.note
            try Self.writeOutbox(db, .return, rental, at: request.at, routes: routes)
            return rental
        }
    }

    public func renew(deviceId: DeviceID, dueAt: Date, at: Date, by actor: ChangeActor?) async throws -> Rental {
        if dueAt <= at {
            throw LendingError.invalidField("dueAt", reason: "\(LendingFormat.iso8601(dueAt)) is not in the future; give a later date")
        }
        let routes = outboxRoutes
        return try await write { db in
            guard var rental = try Self.fetchActiveRental(db, deviceId: deviceId) else {
                if try Self.exists(db, "SELECT 1 FROM devices WHERE id = ?", [deviceId]) { throw LendingError.notLent(deviceId) }
                throw LendingError.noSuchDevice(deviceId)
            }
            try BookingRules.checkRenewal(deviceId: deviceId, dueAt: dueAt, borrower: rental.userId,
                                          next: try Self.nextBooking(db, deviceId: deviceId, at: at))
            try db.execute(sql: "UPDATE rentals SET due_at = ? WHERE id = ? AND returned_at IS NULL",
                           arguments: [Millis.from(dueAt), rental.id])
            _ = try Self.log(db, deviceId, .update, "dueAt", rental.dueAt.map(LendingFormat.iso8601),
                             LendingFormat.iso8601(dueAt), at, actor)
            rental.dueAt = Millis.date(Millis.from(dueAt))
            try Self.writeOutbox(db, .renew, rental, at: at, routes: routes)
            return rental
        }
    }

    public func activeRentals(userId: UserID?, page: PageRequest) async throws -> Page<Rental> {
        var clauses = ["r.returned_at IS NULL"]
        var arguments: StatementArguments = []
        if let userId { clauses.append("r.user_id = ?"); arguments += [userId] }
        if let cursor = page.cursor {
            let (t, id) = try Self.parseCursor(cursor)
            clauses.append("(r.rented_at, r.id) > (?, ?)")
            arguments += [t, id]
        }
        // Without statistics the planner prefers the full per-user history index; the
        // partial index only holds active rentals.
        let index = userId == nil ? "rentals_active_by_time" : "rentals_active_by_user"
        let sql = "SELECT \(Self.rentalColumns) FROM rentals r INDEXED BY \(index) \(Self.whereSQL(clauses)) ORDER BY r.rented_at, r.id LIMIT ?"
        arguments += [page.limit + 1]
        let rentals = try await fetchRentals(sql, arguments)
        return Self.page(rentals, limit: page.limit) { "\(Millis.from($0.rentedAt)).\($0.id)" }
    }

    public func overdueRentals(at now: Date, page: PageRequest) async throws -> Page<Rental> {
        var clauses = ["r.returned_at IS NULL", "r.due_at IS NOT NULL", "r.due_at < ?"]
        var arguments: StatementArguments = [Millis.from(now)]
        if let cursor = page.cursor {
            let (t, id) = try Self.parseCursor(cursor)
            clauses.append("(r.due_at, r.id) > (?, ?)")
            arguments += [t, id]
        }
        let sql = "SELECT \(Self.rentalColumns) FROM rentals r \(Self.whereSQL(clauses)) ORDER BY r.due_at, r.id LIMIT ?"
        arguments += [page.limit + 1]
        let rentals = try await fetchRentals(sql, arguments)
        return Self.page(rentals, limit: page.limit) { "\(Millis.from($0.dueAt ?? $0.rentedAt)).\($0.id)" }
    }

    public func history(_ query: HistoryQuery, page: PageRequest) async throws -> Page<Rental> {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let device = query.deviceId { clauses.append("r.device_id = ?"); arguments += [device] }
        if let user = query.userId { clauses.append("r.user_id = ?"); arguments += [user] }
        if let since = query.since {
            clauses.append(query.overlapping ? "(r.returned_at IS NULL OR r.returned_at >= ?)" : "r.rented_at >= ?")
            arguments += [Millis.from(since)]
        }
        if let until = query.until { clauses.append("r.rented_at < ?"); arguments += [Millis.from(until)] }
        if !query.includeActive { clauses.append("r.returned_at IS NOT NULL") }
        if let cursor = page.cursor {
            let (t, id) = try Self.parseCursor(cursor)
            clauses.append("(r.rented_at, r.id) < (?, ?)")
            arguments += [t, id]
        }
        let sql = "SELECT \(Self.rentalColumns) FROM rentals r \(Self.whereSQL(clauses)) ORDER BY r.rented_at DESC, r.id DESC LIMIT ?"
        arguments += [page.limit + 1]
        let rentals = try await fetchRentals(sql, arguments)
        return Self.page(rentals, limit: page.limit) { "\(Millis.from($0.rentedAt)).\($0.id)" }
    }

    private func fetchRentals(_ sql: String, _ arguments: StatementArguments) async throws -> [Rental] {
        try await read { db in
            try Rental.fetchAll(db, sql: sql, arguments: arguments)
        }
    }
}
