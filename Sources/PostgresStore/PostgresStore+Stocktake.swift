#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import struct RoomBridgeCore.TagUID
import Logging
import PostgresNIO

// Stocktakes: opened, tapped (at any kiosk on the database), closed into their four lists, read back.
extension PostgresInventoryStore {
    /// The unique `is_open` decides two kiosks starting at once: the second insert waits for the
    /// first to commit, then inserts nothing (`ON CONFLICT DO NOTHING`) and reports the open stocktake.
    public func startStocktake(_ scope: StocktakeScope, at: Date, by actor: ChangeActor?) async throws -> Stocktake {
        let logger = self.logger
        let (when, who, kind, value) = (StoreConventions.millis(at), actor?.text, scope.kind, scope.value)
        return try await transaction { c in
            if case .group(let id) = scope,
               try await !Self.exists(c, "SELECT 1 FROM device_groups WHERE id = \(id)", logger: logger) {
                throw LendingError.noSuchGroup(id)
            }
            guard let id = try await Self.rows(c, """
                INSERT INTO stocktakes (scope, scope_value, started_at, started_by, is_open) VALUES (\(kind), \(value), \(when), \(who), 1)
                ON CONFLICT (is_open) DO NOTHING RETURNING id
                """, logger: logger, { try $0[0].decode(Int64.self) }).first else {
                let open = try await Self.rows(c, "SELECT id FROM stocktakes WHERE is_open = 1", logger: logger) {
                    try $0[0].decode(Int64.self)
                }.first
                throw LendingError.stocktakeOpen(open ?? 0)
            }
            return Stocktake(id: id, scope: scope, startedAt: StoreConventions.date(millis: when), startedBy: who)
        }
    }

    public func openStocktake() async throws -> Stocktake? {
        try await fetch("\(unescaped: Self.stocktakeSelect) WHERE s.is_open = 1") { try Self.stocktake($0) }.first
    }

    public func recordStocktakeTap(stocktake id: StocktakeID, uid: TagUID, deviceId: DeviceID?, at: Date,
                                   location: String?) async throws -> StocktakeTapResult {
        let logger = self.logger
        let when = StoreConventions.millis(at)
        return try await transaction { c in
            // A share lock: the close (which updates the row) waits for this tap, or this tap sees it closed.
            guard let open = try await Self.rows(c, "SELECT is_open FROM stocktakes WHERE id = \(id) FOR SHARE", logger: logger, {
                try $0[0].decode(Int32?.self)
            }).first else { throw LendingError.noSuchStocktake(id) }
            guard open == 1 else { throw LendingError.stocktakeClosed(id) }
            var again = false
            if let deviceId {
                again = try await Self.exists(c, "SELECT 1 FROM stocktake_taps WHERE stocktake_id = \(id) AND device_id = \(deviceId)",
                                              logger: logger)
            }
            try await c.query("""
                INSERT INTO stocktake_taps (stocktake_id, uid, device_id, at, location) VALUES (\(id), \(uid.hex), \(deviceId), \(when), \(location))
                ON CONFLICT (stocktake_id, uid) DO NOTHING
                """, logger: logger)
            return deviceId == nil ? .unexpected : .counted(again: again)
        }
    }

    public func closeStocktake(id: StocktakeID, at: Date, by actor: ChangeActor?) async throws -> StocktakeReport {
        let logger = self.logger
        let (when, who) = (StoreConventions.millis(at), actor?.text)
        return try await transaction { c in
            guard let stocktake = try await Self.rows(c, "\(unescaped: Self.stocktakeSelect) WHERE s.id = \(id) FOR UPDATE OF s", logger: logger, {
                try Self.stocktake($0)
            }).first else { throw LendingError.noSuchStocktake(id) }
            guard stocktake.isOpen else { throw LendingError.stocktakeClosed(id) }
            var s = Statement("")
            let scopeSQL = Self.scopeClause(stocktake.scope, &s)
            let scope = "SELECT d.id, d.model, d.serial_number FROM devices d WHERE d.status <> 'disposed' AND \(scopeSQL)"
            let idParameter = s.bind(id)
            s.sql = """
                WITH scope AS (\(scope)),
                tapped AS (SELECT device_id, MIN(uid) AS uid, MIN(at) AS at, MIN(location) AS location FROM stocktake_taps
                           WHERE stocktake_id = \(idParameter) AND device_id IS NOT NULL GROUP BY device_id),
                inscope AS (
                    INSERT INTO stocktake_entries (stocktake_id, list, device_id, model, serial_number, user_id, user_name, uid,
                                                   tapped_at, location)
                    SELECT \(idParameter), CASE WHEN t.device_id IS NOT NULL THEN 'found' WHEN r.id IS NOT NULL THEN 'lent' ELSE 'missing' END,
                           s.id, s.model, s.serial_number,
                           CASE WHEN t.device_id IS NULL THEN r.user_id END, CASE WHEN t.device_id IS NULL THEN r.user_name END,
                           t.uid, t.at, t.location
                    FROM scope s LEFT JOIN tapped t ON t.device_id = s.id
                         LEFT JOIN rentals r ON r.device_id = s.id AND r.returned_at IS NULL
                    RETURNING 1)
                INSERT INTO stocktake_entries (stocktake_id, list, device_id, model, serial_number, uid, tapped_at, location)
                SELECT \(idParameter), 'unexpected', t.device_id, d.model, d.serial_number, t.uid, t.at, t.location
                FROM stocktake_taps t LEFT JOIN devices d ON d.id = t.device_id
                WHERE t.stocktake_id = \(idParameter) AND (t.device_id IS NULL OR t.device_id NOT IN (SELECT id FROM scope))
                """
            try await c.query(s.query, logger: logger)
            try await c.query("UPDATE stocktakes SET closed_at = \(when), closed_by = \(who), is_open = NULL WHERE id = \(id)",
                              logger: logger)
            guard let closed = try await Self.rows(c, "\(unescaped: Self.stocktakeSelect) WHERE s.id = \(id)", logger: logger, {
                try Self.stocktake($0)
            }).first else { throw LendingError.noSuchStocktake(id) }
            return StocktakeReport(stocktake: closed, entries: try await Self.rows(c, Self.entriesQuery(id), logger: logger) {
                try Self.entry($0)
            })
        }
    }

    public func stocktakeReport(id: StocktakeID) async throws -> StocktakeReport? {
        guard let stocktake = try await fetch("\(unescaped: Self.stocktakeSelect) WHERE s.id = \(id)", { try Self.stocktake($0) }).first else {
            return nil
        }
        return StocktakeReport(stocktake: stocktake, entries: try await fetch(Self.entriesQuery(id)) { try Self.entry($0) })
    }

    public func stocktakes(page: PageRequest) async throws -> Page<Stocktake> {
        var before = Int64.max
        if let cursor = page.cursor { before = try StoreConventions.parseCursor(cursor).1 }
        let limit = Int64(page.limit + 1)
        let rows = try await fetch("\(unescaped: Self.stocktakeSelect) WHERE s.id < \(before) ORDER BY s.id DESC LIMIT \(limit)") {
            try Self.stocktake($0)
        }
        return StoreConventions.page(rows, limit: page.limit) { "0.\($0.id)" }
    }

    static func scopeClause(_ scope: StocktakeScope, _ s: inout Statement) -> String {
        switch scope {
        case .all: "true"
        case .group(let id): "d.group_id = \(s.bind(id))"
        case .location(let name):
            """
            (SELECT COALESCE(r2.return_location, r2.location) FROM rentals r2 WHERE r2.device_id = d.id
             ORDER BY r2.rented_at DESC, r2.id DESC LIMIT 1) = \(s.bind(name))
            """
        }
    }

    static let stocktakeSelect = """
        SELECT s.id, s.scope, s.scope_value, s.started_at, s.started_by, s.closed_at, s.closed_by,
               (SELECT COUNT(DISTINCT device_id) FROM stocktake_taps t WHERE t.stocktake_id = s.id AND t.device_id IS NOT NULL),
               (SELECT COUNT(*) FROM stocktake_taps t WHERE t.stocktake_id = s.id AND t.device_id IS NULL)
        FROM stocktakes s
        """

    static func entriesQuery(_ id: StocktakeID) -> PostgresQuery {
        """
        SELECT list, device_id, model, serial_number, user_id, user_name, uid, tapped_at, location FROM stocktake_entries
        WHERE stocktake_id = \(id)
        ORDER BY CASE list WHEN 'found' THEN 0 WHEN 'missing' THEN 1 WHEN 'lent' THEN 2 ELSE 3 END, device_id, uid
        """
    }

    static func stocktake(_ row: PostgresRandomAccessRow) throws -> Stocktake {
        var c = Cells(row)
        let id: Int64 = try c.next(), kind: String = try c.next(), value: String? = try c.next()
        let started = try c.date(), startedBy: String? = try c.next(), closed = try c.optionalDate(), closedBy: String? = try c.next()
        let tapped: Int64 = try c.next(), unexpected: Int64 = try c.next()
        return Stocktake(id: id, scope: StocktakeScope(kind: kind, value: value) ?? .all, startedAt: started, startedBy: startedBy,
                         closedAt: closed, closedBy: closedBy, counted: Int(tapped), unexpected: Int(unexpected))
    }

    static func entry(_ row: PostgresRandomAccessRow) throws -> StocktakeEntry {
        var c = Cells(row)
        let list: String = try c.next(), device: String? = try c.next(), model: String? = try c.next()
        let serial: String? = try c.next(), user: String? = try c.next(), name: String? = try c.next()
        let uid = try c.optionalUID(), tapped = try c.optionalDate(), location: String? = try c.next()
        return StocktakeEntry(list: StocktakeEntry.List(rawValue: list) ?? .unexpected, deviceId: device, model: model,
                              serialNumber: serial, userId: user, userName: name, uid: uid, tappedAt: tapped, location: location)
    }
}
