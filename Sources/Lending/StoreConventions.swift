#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What every ``InventoryStore`` backend does the same way, so that SQLite and PostgreSQL give
/// the same answers: time stored as milliseconds, the check on card UIDs and due dates, keyset
/// page cursors, and `LIKE` escaping.
public enum StoreConventions {
    /// Milliseconds since 1970-01-01 UTC, rounded: how a backend stores a date (compact, exact,
    /// ordered for range queries).
    public static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The date a stored millisecond count stands for.
    public static func date(millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }

    /// `date` as it reads back from a store (rounded to the millisecond).
    public static func stored(_ date: Date) -> Date { self.date(millis: millis(date)) }

    /// A due date before the lend time is refused.
    public static func requireDueAfterLend(_ request: LendRequest) throws(LendingError) {
        if let due = request.dueAt, due < request.at {
            throw .invalidField("dueAt", reason: "\(LendingFormat.iso8601(due)) is before the lend time")
        }
    }

    /// `text` with `\`, `%` and `_` escaped for `LIKE … ESCAPE '\'`.
    public static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }

    /// Parses a cursor `"<millis>.<id>"` for (time, id) keyset paging.
    public static func parseCursor(_ cursor: String) throws(LendingError) -> (Int64, Int64) {
        let parts = cursor.split(separator: ".")
        guard parts.count == 2, let t = Int64(parts[0]), let id = Int64(parts[1]) else {
            throw .invalidCursor(cursor)
        }
        return (t, id)
    }

    /// The cursor after a rental, keyed by `time` (its lend or due time) and its ID.
    public static func cursor(time: Date, id: Int64) -> String { "\(millis(time)).\(id)" }

    /// Cuts the `limit + 1` rows fetched into a page and the cursor of its last item.
    public static func page<T: Sendable>(_ rows: [T], limit: Int, cursor: (T) -> String) -> Page<T> {
        guard rows.count > limit else { return Page(items: rows, nextCursor: nil) }
        let items = Array(rows.prefix(limit))
        return Page(items: items, nextCursor: items.last.map(cursor))
    }
}
