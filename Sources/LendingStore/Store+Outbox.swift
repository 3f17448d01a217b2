import Foundation
import GRDB
import Lending

// The outbox: entries written with the lending changes, and what the delivery service and an
// administrator do with them.
extension SQLiteInventoryStore {
    static let outboxColumns = """
        seq, event_id, target, kind, device_id, payload, created_at, attempts, next_attempt_at, state, last_error, \
        delivered_at
        """

    /// Writes the outbox rows of one event, in the caller's transaction.
    static func writeOutbox(_ db: Database, _ kind: OutboxEventKind, _ rental: Rental, at: Date,
                            routes: [OutboxRoute]) throws {
        for row in OutboxEvent.inserts(kind, rental: rental, at: at, routes: routes) { _ = try insertNew(db, row) }
    }

    /// Inserts a new entry (the store numbers it) unless its event and target are there; true when it was new.
    private static func insertNew(_ db: Database, _ row: OutboxEntry) throws -> Bool {
        try db.execute(sql: """
            INSERT INTO outbox (event_id, target, kind, device_id, payload, created_at, next_attempt_at)
            VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id, target) DO NOTHING
            """, arguments: [row.eventId.uuidString.lowercased(), row.target, row.kind.rawValue, row.deviceId,
                             String(decoding: row.payload, as: UTF8.self), Millis.from(row.createdAt), Millis.from(row.nextAttemptAt)])
        return db.changesCount > 0
    }

    public func enqueueOutbox(_ entries: [OutboxEntry]) async throws -> Int {
        guard !entries.isEmpty else { return 0 }
        return try await write { db in try entries.filter { try Self.insertNew(db, $0) }.count }
    }

    /// Writes a whole entry, its `seq` included (copying a store).
    static func insertOutbox(_ db: Database, _ e: OutboxEntry) throws {
        try db.execute(sql: "INSERT INTO outbox (\(outboxColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", arguments: [
            e.seq, e.eventId.uuidString.lowercased(), e.target, e.kind.rawValue, e.deviceId,
            String(decoding: e.payload, as: UTF8.self), Millis.from(e.createdAt), e.attempts, Millis.from(e.nextAttemptAt),
            e.state.rawValue, e.lastError, e.deliveredAt.map(Millis.from),
        ])
    }

    static func decodeOutbox(_ row: Row) throws -> OutboxEntry {
        let text: String = row["event_id"]
        let kind: String = row["kind"]
        let state: String = row["state"]
        guard let eventId = UUID(uuidString: text), let k = OutboxEventKind(rawValue: kind),
              let s = OutboxState(rawValue: state) else {
            throw StoreIntegrityViolation(detail: "outbox row \(row["seq"] as Int64) holds \(text)/\(kind)/\(state)")
        }
        let payload: String = row["payload"]
        return OutboxEntry(seq: row["seq"], eventId: eventId, target: row["target"], kind: k, deviceId: row["device_id"],
                           payload: Array(payload.utf8), createdAt: Millis.date(row["created_at"]), attempts: row["attempts"],
                           nextAttemptAt: Millis.date(row["next_attempt_at"]), state: s, lastError: row["last_error"],
                           deliveredAt: (row["delivered_at"] as Int64?).map(Millis.date))
    }

    public func pendingOutbox(limit: Int, now: Date, targets: [String]?) async throws -> [OutboxEntry] {
        var arguments: StatementArguments = [Millis.from(now)]
        var only = ""
        if let targets {
            guard !targets.isEmpty else { return [] }
            only = "AND o.target IN (" + targets.map { _ in "?" }.joined(separator: ", ") + ")"
            arguments += StatementArguments(targets)
        }
        arguments += [max(limit, 1)]
        let sql = """
            SELECT \(Self.outboxColumns) FROM outbox o
            WHERE o.state = 'pending' AND o.next_attempt_at <= ? \(only)
              AND NOT EXISTS (SELECT 1 FROM outbox e WHERE e.state = 'pending' AND e.target = o.target
                              AND e.device_id = o.device_id AND e.seq < o.seq)
            ORDER BY o.seq LIMIT ?
            """
        let bound = arguments
        return try await read { db in try Row.fetchAll(db, sql: sql, arguments: bound).map(Self.decodeOutbox) }
    }

    public func markDelivered(seq: Int64, at: Date) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE outbox SET state = 'delivered', delivered_at = ?, last_error = NULL WHERE seq = ? AND state = 'pending'",
                           arguments: [Millis.from(at), seq])
        }
    }

    public func markAttemptFailed(seq: Int64, next: Date, error: String) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?
                WHERE seq = ? AND state = 'pending'
                """, arguments: [Millis.from(next), String(error.prefix(OutboxLimits.errorLength)), seq])
        }
    }

    public func outboxCounts() async throws -> [OutboxCounts] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT target,
                       SUM(state = 'pending'), SUM(state = 'pending' AND attempts > 0),
                       SUM(state = 'delivered'), SUM(state = 'dropped')
                FROM outbox GROUP BY target ORDER BY target
                """).map { row in
                OutboxCounts(target: row[0], pending: row[1], failing: row[2], delivered: row[3], dropped: row[4])
            }
        }
    }

    public func outboxEntries(state: OutboxState?, page: PageRequest) async throws -> Page<OutboxEntry> {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let state { clauses.append("state = ?"); arguments += [state.rawValue] }
        if let cursor = page.cursor {
            guard let seq = Int64(cursor) else { throw LendingError.invalidCursor(cursor) }
            clauses.append("seq < ?"); arguments += [seq]
        }
        arguments += [page.limit + 1]
        let sql = "SELECT \(Self.outboxColumns) FROM outbox \(Self.whereSQL(clauses)) ORDER BY seq DESC LIMIT ?"
        let bound = arguments
        let entries = try await read { db in try Row.fetchAll(db, sql: sql, arguments: bound).map(Self.decodeOutbox) }
        return Self.page(entries, limit: page.limit) { String($0.seq) }
    }

    public func retryOutbox(seq: Int64, now: Date) async throws {
        try await write { db in
            let state = try Self.outboxState(db, seq)
            try OutboxLimits.requireNotDelivered(seq, state, action: "retried")
            try db.execute(sql: "UPDATE outbox SET state = 'pending', next_attempt_at = ? WHERE seq = ?",
                           arguments: [Millis.from(now), seq])
        }
    }

    public func dropOutbox(seq: Int64) async throws {
        try await write { db in
            let state = try Self.outboxState(db, seq)
            try OutboxLimits.requireNotDelivered(seq, state, action: "dropped")
            try db.execute(sql: "UPDATE outbox SET state = 'dropped' WHERE seq = ?", arguments: [seq])
        }
    }

    public func pruneOutbox(before: Date) async throws -> Int {
        try await write { db in
            try db.execute(sql: """
                DELETE FROM outbox WHERE state IN ('delivered', 'dropped') AND COALESCE(delivered_at, created_at) < ?
                """, arguments: [Millis.from(before)])
            return db.changesCount
        }
    }

    private static func outboxState(_ db: Database, _ seq: Int64) throws -> OutboxState? {
        try String.fetchOne(db, sql: "SELECT state FROM outbox WHERE seq = ?", arguments: [seq]).flatMap(OutboxState.init)
    }
}
