#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO

// Bookings: made, cancelled and listed; the lend's and renewal's checks against them.
extension PostgresInventoryStore {
    /// The exclusion constraint `bookings_no_overlap` is the final arbiter of two bookings of one
    /// slot. Before it, the device row is locked (`FOR NO KEY UPDATE`), so a lend or renewal of the
    /// device (which share-lock it) and a booking go one after the other and each sees the other's
    /// result; the user is share-locked first, in the order a lend takes its locks.
    public func book(_ request: BookingRequest) async throws -> Booking {
        try BookingRules.validate(request)
        let logger = self.logger
        let (starts, ends) = (StoreConventions.millis(request.startsAt), StoreConventions.millis(request.endsAt))
        let (at, by) = (StoreConventions.millis(request.at), request.by?.text)
        do {
            return try await transaction { c in
                guard let userName = try await Self.rows(c, "SELECT name FROM users WHERE id = \(request.userId) FOR SHARE",
                                                         logger: logger, { try $0[0].decode(String.self) }).first else {
                    throw LendingError.noSuchUser(request.userId)
                }
                guard let model = try await Self.rows(c, "SELECT model FROM devices WHERE id = \(request.deviceId) FOR NO KEY UPDATE",
                                                      logger: logger, { try $0[0].decode(String.self) }).first else {
                    throw LendingError.noSuchDevice(request.deviceId)
                }
                try BookingRules.checkRental(try await Self.fetchActiveRental(c, deviceId: request.deviceId, logger: logger),
                                             for: request)
                if let other = try await Self.overlapping(c, deviceId: request.deviceId, starts: starts, ends: ends, logger: logger) {
                    throw Self.overlap(other)
                }
                do {
                    let inserted = try await Self.rows(c, """
                        INSERT INTO bookings (device_id, model, user_id, user_name, starts_at, ends_at, booked_at, booked_by)
                        VALUES (\(request.deviceId), \(model), \(request.userId), \(userName), \(starts), \(ends), \(at), \(by))
                        RETURNING \(unescaped: Columns.booking)
                        """, logger: logger) { try Decode.booking($0) }
                    guard let booking = inserted.first else { throw LendingError.noSuchDevice(request.deviceId) }
                    return booking
                } catch let error where Self.serverError(error)?.state == "23P01" {
                    // exclusion_violation: only when the device lock was bypassed (another writer of the
                    // schema); the transaction is aborted, so the winner is read after it.
                    throw BookingConflict()
                }
            }
        } catch is BookingConflict {
            try await overlapAfterConflict(request)
        }
    }

    public func cancelBooking(id: BookingID, at: Date, by actor: ChangeActor?) async throws -> Booking {
        let logger = self.logger
        let (when, who) = (StoreConventions.millis(at), actor?.text)
        return try await transaction { c in
            guard let booking = try await Self.rows(c, "SELECT \(unescaped: Columns.booking) FROM bookings WHERE id = \(id) FOR UPDATE",
                                                    logger: logger, { try Decode.booking($0) }).first else {
                throw LendingError.noSuchBooking(id)
            }
            guard booking.state == .booked else { throw LendingError.bookingNotCancellable(id, state: booking.state) }
            guard let cancelled = try await Self.rows(c, """
                UPDATE bookings SET state = 'cancelled', cancelled_at = \(when), cancelled_by = \(who) WHERE id = \(id)
                RETURNING \(unescaped: Columns.booking)
                """, logger: logger, { try Decode.booking($0) }).first else { throw LendingError.noSuchBooking(id) }
            return cancelled
        }
    }

    public func booking(id: BookingID) async throws -> Booking? {
        try await fetch("SELECT \(unescaped: Columns.booking) FROM bookings WHERE id = \(id)") { try Decode.booking($0) }.first
    }

    public func bookings(_ query: BookingQuery, page: PageRequest) async throws -> Page<Booking> {
        var s = Statement("SELECT \(Columns.booking) FROM bookings")
        var clauses: [String] = []
        if let device = query.deviceId { clauses.append("device_id = \(s.bind(device))") }
        if let user = query.userId { clauses.append("user_id = \(s.bind(user))") }
        if let from = query.from { clauses.append("ends_at > \(s.bind(StoreConventions.millis(from)))") }
        if let until = query.until { clauses.append("starts_at < \(s.bind(StoreConventions.millis(until)))") }
        if !query.includeCancelled { clauses.append("state <> 'cancelled'") }
        if let cursor = page.cursor {
            let (t, id) = try StoreConventions.parseCursor(cursor)
            clauses.append("(starts_at, id) > (\(s.bind(t)), \(s.bind(id)))")
        }
        s.sql += " \(Statement.whereSQL(clauses)) ORDER BY starts_at, id LIMIT \(s.bind(Int64(page.limit + 1)))"
        let rows = try await fetch(s.query) { try Decode.booking($0) }
        return StoreConventions.page(rows, limit: page.limit) { StoreConventions.cursor(time: $0.startsAt, id: $0.id) }
    }

    /// The device's first booking still `booked` that has not ended at `at`.
    static func nextBooking(_ c: PostgresConnection, deviceId: DeviceID, at: Date, logger: Logger) async throws -> Booking? {
        try await rows(c, """
            SELECT \(unescaped: Columns.booking) FROM bookings
            WHERE device_id = \(deviceId) AND state = 'booked' AND ends_at > \(StoreConventions.millis(at))
            ORDER BY starts_at LIMIT 1
            """, logger: logger) { try Decode.booking($0) }.first
    }

    /// Marks a booking fulfilled by a rental.
    static func fulfil(_ c: PostgresConnection, booking: BookingID, rental: Int64, logger: Logger) async throws {
        try await c.query("UPDATE bookings SET state = 'fulfilled', rental_id = \(rental) WHERE id = \(booking) AND state = 'booked'",
                          logger: logger)
    }

    private static func overlapping(_ c: PostgresConnection, deviceId: DeviceID, starts: Int64, ends: Int64,
                                    logger: Logger) async throws -> Booking? {
        try await rows(c, """
            SELECT \(unescaped: Columns.booking) FROM bookings
            WHERE device_id = \(deviceId) AND state <> 'cancelled' AND starts_at < \(ends) AND ends_at > \(starts)
            ORDER BY starts_at LIMIT 1
            """, logger: logger) { try Decode.booking($0) }.first
    }

    private static func overlap(_ other: Booking) -> LendingError {
        .bookingOverlaps(other.deviceId, existing: other.id, userName: other.userName, startsAt: other.startsAt,
                         endsAt: other.endsAt)
    }

    /// The constraint refused the booking: the booking that won, read after the aborted transaction.
    private func overlapAfterConflict(_ request: BookingRequest) async throws -> Never {
        let logger = self.logger
        let (starts, ends) = (StoreConventions.millis(request.startsAt), StoreConventions.millis(request.endsAt))
        let other = try await withConnection { c in
            try await Self.overlapping(c, deviceId: request.deviceId, starts: starts, ends: ends, logger: logger)
        }
        guard let other else { throw LendingError.storageOutcomeUnknown(detail: "the booking conflicted with one that is gone now; try again") }
        throw Self.overlap(other)
    }

    private struct BookingConflict: Error {}
}
