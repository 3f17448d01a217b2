import CurtainProtocol
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import PostgresNIO

// The schedules the daemon keeps for curtains that keep none themselves.
extension PostgresInventoryStore: CurtainScheduleStore {
    public func keptSchedule(curtain: String) async throws -> CurtainSchedule? {
        try await fetch("""
            SELECT open_minute, open_enabled, close_minute, close_enabled FROM curtain_schedules WHERE curtain = \(curtain)
            """) { row in
            CurtainSchedule(storedOpen: Int(try row[0].decode(Int32.self)), openEnabled: try row[1].decode(Bool.self),
                            close: Int(try row[2].decode(Int32.self)), closeEnabled: try row[3].decode(Bool.self))
        }.first ?? nil
    }

    public func keepSchedule(_ schedule: CurtainSchedule, curtain: String) async throws {
        let minutes = schedule.storedMinutes
        let (open, close) = (Int32(minutes.open), Int32(minutes.close))
        let now = StoreConventions.millis(Date())
        let logger = self.logger
        try await transaction { c in
            _ = try await Self.changed(c, """
                INSERT INTO curtain_schedules (curtain, open_minute, open_enabled, close_minute, close_enabled, updated_at)
                VALUES (\(curtain), \(open), \(schedule.openEnabled), \(close), \(schedule.closeEnabled), \(now))
                ON CONFLICT (curtain) DO UPDATE SET open_minute = excluded.open_minute, open_enabled = excluded.open_enabled,
                    close_minute = excluded.close_minute, close_enabled = excluded.close_enabled, updated_at = excluded.updated_at
                """, logger: logger)
        }
    }
}
