import CurtainProtocol
import Foundation
import GRDB

// The schedules the daemon keeps for curtains that keep none themselves.
extension SQLiteInventoryStore: CurtainScheduleStore {
    public func keptSchedule(curtain: String) async throws -> CurtainSchedule? {
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT open_minute, open_enabled, close_minute, close_enabled FROM curtain_schedules WHERE curtain = ?
                """, arguments: [curtain]) else { return nil }
            return CurtainSchedule(storedOpen: row[0], openEnabled: row[1], close: row[2], closeEnabled: row[3])
        }
    }

    public func keepSchedule(_ schedule: CurtainSchedule, curtain: String) async throws {
        let minutes = schedule.storedMinutes
        let now = Millis.from(Date())
        try await write { db in
            try db.execute(sql: """
                INSERT INTO curtain_schedules (curtain, open_minute, open_enabled, close_minute, close_enabled, updated_at)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (curtain) DO UPDATE SET open_minute = excluded.open_minute, open_enabled = excluded.open_enabled,
                    close_minute = excluded.close_minute, close_enabled = excluded.close_enabled, updated_at = excluded.updated_at
                """, arguments: [curtain, minutes.open, schedule.openEnabled, minutes.close, schedule.closeEnabled, now])
        }
    }
}
