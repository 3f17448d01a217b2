#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO

// The outbox: entries written with the lending changes, and what the delivery service and an
// administrator do with them.
extension PostgresInventoryStore {
    static let outboxColumns = """
        seq, event_id, target, kind, device_id, payload, created_at, attempts, next_attempt_at, state, last_error, \
        delivered_at
        """

    /// Writes the outbox rows of one event, in the caller's transaction.
    static func writeOutbox(_ c: PostgresConnection, _ kind: OutboxEventKind, _ rental: Rental, at: Date,
                            routes: [OutboxRoute], logger: Logger) async throws {
        for row in OutboxEvent.inserts(kind, rental: rental, at: at, routes: routes) { _ = try await insertNew(c, row, logger: logger) }
    }

    /// Inserts a new entry (the store numbers it) unless its event and target are there; true when it was new.
    private static func insertNew(_ c: PostgresConnection, _ row: OutboxEntry, logger: Logger) async throws -> Bool {
        try await changed(c, """
            INSERT INTO outbox (event_id, target, kind, device_id, payload, created_at, next_attempt_at)
            VALUES (\(row.eventId.uuidString.lowercased()), \(row.target), \(row.kind.rawValue), \(row.deviceId),
                    \(String(decoding: row.payload, as: UTF8.self)), \(StoreConventions.millis(row.createdAt)),
                    \(StoreConventions.millis(row.nextAttemptAt)))
            ON CONFLICT (event_id, target) DO NOTHING RETURNING 1
            """, logger: logger) > 0
    }

    public func enqueueOutbox(_ entries: [OutboxEntry]) async throws -> Int {
        guard !entries.isEmpty else { return 0 }
        let logger = self.logger
        return try await transaction { c in
            var added = 0
            for entry in entries where try await Self.insertNew(c, entry, logger: logger) { added += 1 }
            return added
        }
    }

    static func decodeOutbox(_ row: PostgresRandomAccessRow) throws -> OutboxEntry {
        var c = Cells(row)
        let seq: Int64 = try c.next(), eventText: String = try c.next(), target: String = try c.next()
        let kindText: String = try c.next(), device: String = try c.next(), payload: String = try c.next()
        let created = try c.date(), attempts: Int32 = try c.next(), next = try c.date()
        let stateText: String = try c.next(), lastError: String? = try c.next(), delivered = try c.optionalDate()
        guard let eventId = UUID(uuidString: eventText), let kind = OutboxEventKind(rawValue: kindText),
              let state = OutboxState(rawValue: stateText) else {
            throw LendingError.invalidField("outbox entry \(seq)", reason: "it holds \(eventText)/\(kindText)/\(stateText)")
        }
        return OutboxEntry(seq: seq, eventId: eventId, target: target, kind: kind, deviceId: device,
                           payload: Array(payload.utf8), createdAt: created, attempts: Int(attempts), nextAttemptAt: next,
                           state: state, lastError: lastError, deliveredAt: delivered)
    }

    public func pendingOutbox(limit: Int, now: Date, targets: [String]?) async throws -> [OutboxEntry] {
        if targets?.isEmpty == true { return [] }
        return try await fetch("""
            SELECT \(unescaped: Self.outboxColumns) FROM outbox o
            WHERE o.state = 'pending' AND o.next_attempt_at <= \(StoreConventions.millis(now))
              AND (\(targets == nil) OR o.target = ANY(\(targets ?? [])))
              AND NOT EXISTS (SELECT 1 FROM outbox e WHERE e.state = 'pending' AND e.target = o.target
                              AND e.device_id = o.device_id AND e.seq < o.seq)
            ORDER BY o.seq LIMIT \(Int64(max(limit, 1)))
            """, Self.decodeOutbox)
    }

    public func markDelivered(seq: Int64, at: Date) async throws {
        let logger = self.logger
        _ = try await withConnection { c in
            try await c.query("""
                UPDATE outbox SET state = 'delivered', delivered_at = \(StoreConventions.millis(at)), last_error = NULL
                WHERE seq = \(seq) AND state = 'pending'
                """, logger: logger)
            return true
        }
    }

    public func markAttemptFailed(seq: Int64, next: Date, error: String) async throws {
        let logger = self.logger
        let message = String(error.prefix(OutboxLimits.errorLength))
        _ = try await withConnection { c in
            try await c.query("""
                UPDATE outbox SET attempts = attempts + 1, next_attempt_at = \(StoreConventions.millis(next)),
                                  last_error = \(message)
                WHERE seq = \(seq) AND state = 'pending'
                """, logger: logger)
            return true
        }
    }

    public func outboxCounts() async throws -> [OutboxCounts] {
        try await fetch("""
            SELECT target, COUNT(*) FILTER (WHERE state = 'pending'),
                   COUNT(*) FILTER (WHERE state = 'pending' AND attempts > 0),
                   COUNT(*) FILTER (WHERE state = 'delivered'), COUNT(*) FILTER (WHERE state = 'dropped')
            FROM outbox GROUP BY target ORDER BY target
            """) { row in
            var c = Cells(row)
            let target: String = try c.next()
            let pending: Int64 = try c.next(), failing: Int64 = try c.next()
            let delivered: Int64 = try c.next(), dropped: Int64 = try c.next()
            return OutboxCounts(target: target, pending: Int(pending), failing: Int(failing), delivered: Int(delivered),
                                dropped: Int(dropped))
        }
    }

    public func outboxEntries(state: OutboxState?, page: PageRequest) async throws -> Page<OutboxEntry> {
        var s = Statement("SELECT \(Self.outboxColumns) FROM outbox")
        var clauses: [String] = []
        if let state { clauses.append("state = \(s.bind(state.rawValue))") }
        if let cursor = page.cursor {
            guard let seq = Int64(cursor) else { throw LendingError.invalidCursor(cursor) }
            clauses.append("seq < \(s.bind(seq))")
        }
        s.sql += " \(Statement.whereSQL(clauses)) ORDER BY seq DESC LIMIT \(s.bind(Int64(page.limit + 1)))"
        let entries = try await fetch(s.query, Self.decodeOutbox)
        return StoreConventions.page(entries, limit: page.limit) { String($0.seq) }
    }

    public func retryOutbox(seq: Int64, now: Date) async throws {
        let logger = self.logger
        try await transaction { c in
            try OutboxLimits.requireNotDelivered(seq, try await Self.outboxState(c, seq, logger: logger), action: "retried")
            try await c.query("""
                UPDATE outbox SET state = 'pending', next_attempt_at = \(StoreConventions.millis(now)) WHERE seq = \(seq)
                """, logger: logger)
        }
    }

    public func dropOutbox(seq: Int64) async throws {
        let logger = self.logger
        try await transaction { c in
            try OutboxLimits.requireNotDelivered(seq, try await Self.outboxState(c, seq, logger: logger), action: "dropped")
            try await c.query("UPDATE outbox SET state = 'dropped' WHERE seq = \(seq)", logger: logger)
        }
    }

    public func pruneOutbox(before: Date) async throws -> Int {
        let logger = self.logger
        return try await transaction { c in
            try await Self.changed(c, """
                DELETE FROM outbox WHERE state IN ('delivered', 'dropped')
                  AND COALESCE(delivered_at, created_at) < \(StoreConventions.millis(before)) RETURNING 1
                """, logger: logger)
        }
    }

    /// The entry's state, its row locked until the transaction ends.
    private static func outboxState(_ c: PostgresConnection, _ seq: Int64, logger: Logger) async throws -> OutboxState? {
        try await rows(c, "SELECT state FROM outbox WHERE seq = \(seq) FOR UPDATE", logger: logger) {
            try $0[0].decode(String.self)
        }.first.flatMap(OutboxState.init(rawValue:))
    }
}
