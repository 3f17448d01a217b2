import Foundation
import GRDB
import Lending
import struct RoomBridgeCore.TagUID

// Stocktakes: opened, tapped, closed into their four lists (stored by value), and read back.
extension SQLiteInventoryStore {
    public func startStocktake(_ scope: StocktakeScope, at: Date, by actor: ChangeActor?) async throws -> Stocktake {
        try await write { db in
            if let open = try Int64.fetchOne(db, sql: "SELECT id FROM stocktakes WHERE is_open = 1") {
                throw LendingError.stocktakeOpen(open)
            }
            if case .group(let id) = scope, try !Self.exists(db, "SELECT 1 FROM device_groups WHERE id = ?", [id]) {
                throw LendingError.noSuchGroup(id)
            }
            try db.execute(sql: """
                INSERT INTO stocktakes (scope, scope_value, started_at, started_by, is_open) VALUES (?, ?, ?, ?, 1)
                """, arguments: [scope.kind, scope.value, Millis.from(at), actor?.text])
            return Stocktake(id: db.lastInsertedRowID, scope: scope, startedAt: Millis.date(Millis.from(at)), startedBy: actor?.text)
        }
    }

    public func openStocktake() async throws -> Stocktake? {
        try await read { db in try Self.fetchStocktakes(db, "WHERE s.is_open = 1", []).first }
    }

    public func recordStocktakeTap(stocktake id: StocktakeID, uid: TagUID, deviceId: DeviceID?, at: Date,
                                   location: String?) async throws -> StocktakeTapResult {
        try await write { db in
            guard let open = try Int64?.fetchOne(db, sql: "SELECT is_open FROM stocktakes WHERE id = ?", arguments: [id]) else {
                throw LendingError.noSuchStocktake(id)
            }
            guard open == 1 else { throw LendingError.stocktakeClosed(id) }
            let again = try deviceId.map {
                try Self.exists(db, "SELECT 1 FROM stocktake_taps WHERE stocktake_id = ? AND device_id = ?", [id, $0])
            } ?? false
            try db.execute(sql: """
                INSERT INTO stocktake_taps (stocktake_id, uid, device_id, at, location) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (stocktake_id, uid) DO NOTHING
                """, arguments: [id, uid.hex, deviceId, Millis.from(at), location])
            return deviceId == nil ? .unexpected : .counted(again: again)
        }
    }

    /// Two `INSERT … SELECT`s write the report: one row per device in scope (found, lent or
    /// missing), one per tag tapped that the scope did not expect.
    public func closeStocktake(id: StocktakeID, at: Date, by actor: ChangeActor?) async throws -> StocktakeReport {
        try await write { db in
            guard let stocktake = try Self.fetchStocktakes(db, "WHERE s.id = ?", [id]).first else {
                throw LendingError.noSuchStocktake(id)
            }
            guard stocktake.isOpen else { throw LendingError.stocktakeClosed(id) }
            let (scopeSQL, scopeArguments) = Self.scopeClause(stocktake.scope)
            let scope = "SELECT d.id, d.model, d.serial_number FROM devices d WHERE d.status <> 'disposed' AND \(scopeSQL)"
            try db.execute(sql: """
                WITH scope AS (\(scope)),
                tapped AS (SELECT device_id, MIN(uid) AS uid, MIN(at) AS at, MIN(location) AS location FROM stocktake_taps
                           WHERE stocktake_id = ? AND device_id IS NOT NULL GROUP BY device_id)
                INSERT INTO stocktake_entries (stocktake_id, list, device_id, model, serial_number, user_id, user_name, uid,
                                               tapped_at, location)
                SELECT ?, CASE WHEN t.device_id IS NOT NULL THEN 'found' WHEN r.id IS NOT NULL THEN 'lent' ELSE 'missing' END,
                       s.id, s.model, s.serial_number,
                       CASE WHEN t.device_id IS NULL THEN r.user_id END, CASE WHEN t.device_id IS NULL THEN r.user_name END,
                       t.uid, t.at, t.location
                FROM scope s LEFT JOIN tapped t ON t.device_id = s.id
                     LEFT JOIN rentals r ON r.device_id = s.id AND r.returned_at IS NULL
                """, arguments: scopeArguments + [id, id])
            try db.execute(sql: """
                WITH scope AS (\(scope))
                INSERT INTO stocktake_entries (stocktake_id, list, device_id, model, serial_number, uid, tapped_at, location)
                SELECT ?, 'unexpected', t.device_id, d.model, d.serial_number, t.uid, t.at, t.location
                FROM stocktake_taps t LEFT JOIN devices d ON d.id = t.device_id
                WHERE t.stocktake_id = ? AND (t.device_id IS NULL OR t.device_id NOT IN (SELECT id FROM scope))
                """, arguments: scopeArguments + [id, id])
            try db.execute(sql: "UPDATE stocktakes SET closed_at = ?, closed_by = ?, is_open = NULL WHERE id = ?",
                           arguments: [Millis.from(at), actor?.text, id])
            guard let closed = try Self.fetchStocktakes(db, "WHERE s.id = ?", [id]).first else { throw LendingError.noSuchStocktake(id) }
            return StocktakeReport(stocktake: closed, entries: try Self.fetchEntries(db, id))
        }
    }

    public func stocktakeReport(id: StocktakeID) async throws -> StocktakeReport? {
        try await read { db in
            guard let stocktake = try Self.fetchStocktakes(db, "WHERE s.id = ?", [id]).first else { return nil }
            return StocktakeReport(stocktake: stocktake, entries: try Self.fetchEntries(db, id))
        }
    }

    public func stocktakes(page: PageRequest) async throws -> Page<Stocktake> {
        var clause = ""
        var arguments: StatementArguments = []
        if let cursor = page.cursor {
            let (_, id) = try Self.parseCursor(cursor)
            clause = "WHERE s.id < ?"
            arguments += [id]
        }
        let tail = "\(clause) ORDER BY s.id DESC LIMIT \(page.limit + 1)"
        let rows = try await read { [arguments] db in try Self.fetchStocktakes(db, tail, arguments) }
        return Self.page(rows, limit: page.limit) { "0.\($0.id)" }
    }

    /// The devices of a scope (beside `d.status <> 'disposed'`), with its arguments.
    static func scopeClause(_ scope: StocktakeScope) -> (String, StatementArguments) {
        switch scope {
        case .all: ("1 = 1", [])
        case .group(let id): ("d.group_id = ?", [id])
        case .location(let name):
            ("""
             (SELECT COALESCE(r2.return_location, r2.location) FROM rentals r2 WHERE r2.device_id = d.id
              ORDER BY r2.rented_at DESC, r2.id DESC LIMIT 1) = ?
             """, [name])
        }
    }

    static func fetchStocktakes(_ db: Database, _ tail: String, _ arguments: StatementArguments) throws -> [Stocktake] {
        try Row.fetchAll(db, sql: """
            SELECT s.id, s.scope, s.scope_value, s.started_at, s.started_by, s.closed_at, s.closed_by,
                   (SELECT COUNT(DISTINCT device_id) FROM stocktake_taps t WHERE t.stocktake_id = s.id AND t.device_id IS NOT NULL),
                   (SELECT COUNT(*) FROM stocktake_taps t WHERE t.stocktake_id = s.id AND t.device_id IS NULL)
            FROM stocktakes s \(tail)
            """, arguments: arguments).map { row in
            Stocktake(id: row[0], scope: StocktakeScope(kind: row[1], value: row[2]) ?? .all, startedAt: Millis.date(row[3]),
                      startedBy: row[4], closedAt: (row[5] as Int64?).map(Millis.date), closedBy: row[6], counted: row[7],
                      unexpected: row[8])
        }
    }

    static func fetchEntries(_ db: Database, _ id: StocktakeID) throws -> [StocktakeEntry] {
        try Row.fetchAll(db, sql: """
            SELECT list, device_id, model, serial_number, user_id, user_name, uid, tapped_at, location FROM stocktake_entries
            WHERE stocktake_id = ?
            ORDER BY CASE list WHEN 'found' THEN 0 WHEN 'missing' THEN 1 WHEN 'lent' THEN 2 ELSE 3 END, device_id, uid
            """, arguments: [id]).map { row in
            StocktakeEntry(list: StocktakeEntry.List(rawValue: row[0]) ?? .unexpected, deviceId: row[1], model: row[2],
                           serialNumber: row[3], userId: row[4], userName: row[5], uid: try (row[6] as String?).map(TagUID.stored),
                           tappedAt: (row[7] as Int64?).map(Millis.date), location: row[8])
        }
    }
}
