#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO

// Overdue rentals: announcing each once (per due date), counting them, and when the next one
// falls due.
extension PostgresInventoryStore {
    /// One statement: the rentals due and not announced are inserted into
    /// `overdue_announcements` with `ON CONFLICT DO NOTHING`, and only those this call inserted
    /// are returned. Of two daemons claiming at once, the second's insert of the same key waits
    /// for the first to commit and then inserts (and returns) nothing.
    public func claimOverdueAnnouncements(at now: Date) async throws -> [Rental] {
        let logger = self.logger
        let t = StoreConventions.millis(now)
        let routes = outboxRoutes
        return try await transaction { c in
            let claimed = try await Self.rows(c, """
                WITH claimed AS (
                    INSERT INTO overdue_announcements (rental_id, due_at, announced_at)
                    SELECT r.id, r.due_at, \(t) FROM rentals r
                    WHERE r.returned_at IS NULL AND r.due_at IS NOT NULL AND r.due_at < \(t)
                      AND NOT EXISTS (SELECT 1 FROM overdue_announcements a WHERE a.rental_id = r.id AND a.due_at = r.due_at)
                    ON CONFLICT (rental_id, due_at) DO NOTHING
                    RETURNING rental_id
                )
                SELECT \(unescaped: Columns.rental) FROM rentals r JOIN claimed ON claimed.rental_id = r.id
                ORDER BY r.due_at, r.id
                """, logger: logger) { try Decode.rental($0) }
            for rental in claimed {
                try await Self.writeOutbox(c, .overdue, rental, at: now, routes: routes, logger: logger)
            }
            return claimed
        }
    }

    public func overdueCount(at now: Date) async throws -> Int {
        let count = try await fetch("""
            SELECT COUNT(*) FROM rentals WHERE returned_at IS NULL AND due_at IS NOT NULL AND due_at < \(StoreConventions.millis(now))
            """) { try $0[0].decode(Int64.self) }.first ?? 0
        return Int(count)
    }

    public func nextOverdueAnnouncement() async throws -> Date? {
        // In due date order along rentals_overdue, stopping at the first not announced.
        try await fetch("""
            SELECT r.due_at FROM rentals r
            WHERE r.returned_at IS NULL AND r.due_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM overdue_announcements a WHERE a.rental_id = r.id AND a.due_at = r.due_at)
            ORDER BY r.due_at LIMIT 1
            """) { StoreConventions.date(millis: try $0[0].decode(Int64.self)) }.first
    }
}
