import Foundation
import GRDB
import Lending

// The dashboard's facts: aggregates and range queries over indexes, in one read transaction.
extension SQLiteInventoryStore {
    public func dashboardFacts(from: Date, until: Date, now: Date) async throws -> DashboardFacts {
        let (start, end, at) = (Millis.from(from), Millis.from(until), Millis.from(now))
        return try await read { db in
            let groups = try Row.fetchAll(db, sql: """
                SELECT d.group_id, coalesce(g.name, d.group_id) AS name, count(*) AS devices,
                       count(r.id) AS lent,
                       sum(r.due_at IS NOT NULL AND r.due_at < ?) AS overdue,
                       sum(r.id IS NULL AND d.status = 'normal') AS available,
                       sum(r.id IS NULL AND d.status = 'broken') AS broken
                FROM devices d
                LEFT JOIN rentals r ON r.device_id = d.id AND r.returned_at IS NULL
                LEFT JOIN device_groups g ON g.id = d.group_id
                WHERE d.status <> 'disposed' OR r.id IS NOT NULL
                GROUP BY d.group_id ORDER BY min(coalesce(g.sort_order, 0)), d.group_id
                """, arguments: [at]).map { row in
                LendingDashboard.GroupLoad(groupId: row["group_id"], name: row["name"], devices: row["devices"], lent: row["lent"],
                                           overdue: row["overdue"] ?? 0, available: row["available"] ?? 0, broken: row["broken"] ?? 0)
            }
            // rentals_by_time, rentals_by_due and rentals_by_return (v14) serve the three ranges.
            let lentAt = try Int64.fetchAll(db, sql: "SELECT rented_at FROM rentals WHERE rented_at >= ? AND rented_at < ?",
                                            arguments: [start, end]).map(Millis.date)
            let due = try Row.fetchAll(db, sql: "SELECT due_at, returned_at FROM rentals WHERE due_at >= ? AND due_at < ?",
                                       arguments: [start, end]).map { row in
                DashboardFacts.Due(dueAt: Millis.date(row["due_at"]), returnedAt: (row["returned_at"] as Int64?).map(Millis.date))
            }
            let lengths = try Int64.fetchAll(db, sql: """
                SELECT returned_at - rented_at FROM rentals WHERE returned_at >= ? AND returned_at < ?
                """, arguments: [start, end]).map { Double($0) / 1000 }
            let top = try Row.fetchAll(db, sql: """
                SELECT device_id, max(model) AS model, count(*) AS lends FROM rentals WHERE rented_at >= ? AND rented_at < ?
                GROUP BY device_id ORDER BY lends DESC, device_id LIMIT ?
                """, arguments: [start, end, LendingDashboard.topCount]).map { row in
                MonthlyLendingReport.DeviceCount(deviceId: row["device_id"], model: row["model"], lends: row["lends"])
            }
            let never = "FROM devices d WHERE d.status <> 'disposed' AND NOT EXISTS (SELECT 1 FROM rentals r WHERE r.device_id = d.id)"
            let neverCount = try Int.fetchOne(db, sql: "SELECT count(*) \(never)") ?? 0
            let neverLent = try Row.fetchAll(db, sql: "SELECT d.id, d.model, d.registered_at \(never) ORDER BY d.id LIMIT ?",
                                             arguments: [LendingDashboard.listed]).map { row in
                LendingDashboard.IdleDevice(deviceId: row["id"], model: row["model"], registeredAt: Millis.date(row["registered_at"]))
            }
            return DashboardFacts(groups: groups, lentAt: lentAt, due: due, rentalLengths: lengths, topDevices: top,
                                  neverLentCount: neverCount, neverLent: neverLent)
        }
    }
}
