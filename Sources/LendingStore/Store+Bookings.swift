import Foundation
import GRDB
import Lending

// Bookings: made, cancelled and listed; the lend's and renewal's checks against them.
extension SQLiteInventoryStore {
    /// "No overlap" is a check inside the write transaction: SQLite lets one writer in at a
    /// time, so two bookings of the same slot (from this daemon or another sharing the file)
    /// are checked one after the other and the second sees the first.
    public func book(_ request: BookingRequest) async throws -> Booking {
        try BookingRules.validate(request)
        return try await write { db in
            guard let device = try Self.fetchDevice(db, id: request.deviceId) else {
                throw LendingError.noSuchDevice(request.deviceId)
            }
            guard let user = try User.fetchOne(db, key: request.userId) else { throw LendingError.noSuchUser(request.userId) }
            try BookingRules.checkRental(try Self.fetchActiveRental(db, deviceId: device.id), for: request)
            if let other = try Booking.fetchOne(db, sql: """
                SELECT * FROM bookings WHERE device_id = ? AND state <> 'cancelled' AND starts_at < ? AND ends_at > ?
                ORDER BY starts_at LIMIT 1
                """, arguments: [device.id, Millis.from(request.endsAt), Millis.from(request.startsAt)]) {
                throw LendingError.bookingOverlaps(device.id, existing: other.id, userName: other.userName,
                                                   startsAt: other.startsAt, endsAt: other.endsAt)
            }
            try db.execute(sql: """
                INSERT INTO bookings (device_id, model, user_id, user_name, starts_at, ends_at, booked_at, booked_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [device.id, device.model, user.id, user.name, Millis.from(request.startsAt),
                                 Millis.from(request.endsAt), Millis.from(request.at), request.by?.text])
            guard let booking = try Booking.fetchOne(db, key: db.lastInsertedRowID) else {
                throw LendingError.noSuchBooking(db.lastInsertedRowID)
            }
            return booking
        }
    }

    public func cancelBooking(id: BookingID, at: Date, by actor: ChangeActor?) async throws -> Booking {
        try await write { db in
            guard let booking = try Booking.fetchOne(db, key: id) else { throw LendingError.noSuchBooking(id) }
            guard booking.state == .booked else { throw LendingError.bookingNotCancellable(id, state: booking.state) }
            try db.execute(sql: "UPDATE bookings SET state = 'cancelled', cancelled_at = ?, cancelled_by = ? WHERE id = ?",
                           arguments: [Millis.from(at), actor?.text, id])
            guard let cancelled = try Booking.fetchOne(db, key: id) else { throw LendingError.noSuchBooking(id) }
            return cancelled
        }
    }

    /// Cancels the bookings of a deleted device or user (`column`: `device_id` or `user_id`)
    /// that are still booked and end after `at`; those already over stay as they were.
    static func cancelBookingsToCome(_ db: Database, column: String, _ id: String, at: Date, by actor: ChangeActor?) throws {
        try db.execute(sql: """
            UPDATE bookings SET state = 'cancelled', cancelled_at = ?, cancelled_by = ?
            WHERE \(column) = ? AND state = 'booked' AND ends_at > ?
            """, arguments: [Millis.from(at), actor?.text, id, Millis.from(at)])
    }

    public func booking(id: BookingID) async throws -> Booking? {
        try await read { db in try Booking.fetchOne(db, key: id) }
    }

    public func bookings(_ query: BookingQuery, page: PageRequest) async throws -> Page<Booking> {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let device = query.deviceId { clauses.append("device_id = ?"); arguments += [device] }
        if let user = query.userId { clauses.append("user_id = ?"); arguments += [user] }
        if let from = query.from { clauses.append("ends_at > ?"); arguments += [Millis.from(from)] }
        if let until = query.until { clauses.append("starts_at < ?"); arguments += [Millis.from(until)] }
        if !query.includeCancelled { clauses.append("state <> 'cancelled'") }
        if let cursor = page.cursor {
            let (t, id) = try Self.parseCursor(cursor)
            clauses.append("(starts_at, id) > (?, ?)")
            arguments += [t, id]
        }
        let sql = "SELECT * FROM bookings \(Self.whereSQL(clauses)) ORDER BY starts_at, id LIMIT ?"
        arguments += [page.limit + 1]
        let rows = try await read { [arguments] db in try Booking.fetchAll(db, sql: sql, arguments: arguments) }
        return Self.page(rows, limit: page.limit) { "\(Millis.from($0.startsAt)).\($0.id)" }
    }

    /// The device's first booking still `booked` that has not ended at `at`.
    static func nextBooking(_ db: Database, deviceId: DeviceID, at: Date) throws -> Booking? {
        try Booking.fetchOne(db, sql: """
            SELECT * FROM bookings WHERE device_id = ? AND state = 'booked' AND ends_at > ? ORDER BY starts_at LIMIT 1
            """, arguments: [deviceId, Millis.from(at)])
    }

    /// Marks a booking fulfilled by a rental.
    static func fulfil(_ db: Database, booking: BookingID, rental: Int64) throws {
        try db.execute(sql: "UPDATE bookings SET state = 'fulfilled', rental_id = ? WHERE id = ? AND state = 'booked'",
                       arguments: [rental, booking])
    }
}
