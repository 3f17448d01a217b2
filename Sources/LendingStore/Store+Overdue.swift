import Foundation
import GRDB
import Lending

// Overdue rentals: announcing each once (per due date), counting them, and when the next one
// falls due.
extension SQLiteInventoryStore {
    public func claimOverdueAnnouncements(at now: Date) async throws -> [Rental] {
        let t = Millis.from(now)
        let routes = outboxRoutes
        return try await write { db in
            let due = try Rental.fetchAll(db, sql: """
                SELECT \(Self.rentalColumns) FROM rentals r
                WHERE r.returned_at IS NULL AND r.due_at IS NOT NULL AND r.due_at < ?
                  AND NOT EXISTS (SELECT 1 FROM overdue_announcements a WHERE a.rental_id = r.id AND a.due_at = r.due_at)
                ORDER BY r.due_at, r.id
                """, arguments: [t])
            for rental in due {
                try db.execute(sql: "INSERT INTO overdue_announcements (rental_id, due_at, announced_at) VALUES (?, ?, ?)",
                               arguments: [rental.id, rental.dueAt.map(Millis.from), t])
                try Self.writeOutbox(db, .overdue, rental, at: now, routes: routes)
            }
            return due
        }
    }

    public func overdueCount(at now: Date) async throws -> Int {
        try await read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM rentals WHERE returned_at IS NULL AND due_at IS NOT NULL AND due_at < ?
                """, arguments: [Millis.from(now)]) ?? 0
        }
    }

    public func nextOverdueAnnouncement() async throws -> Date? {
        try await read { db in
            // In due date order along rentals_overdue, stopping at the first not announced.
            try Int64.fetchOne(db, sql: """
                SELECT r.due_at FROM rentals r
                WHERE r.returned_at IS NULL AND r.due_at IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM overdue_announcements a WHERE a.rental_id = r.id AND a.due_at = r.due_at)
                ORDER BY r.due_at LIMIT 1
                """).map(Millis.date)
        }
    }
}
