#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO

// The dashboard's facts: aggregates and range queries over indexes, in one transaction (one snapshot).
extension PostgresInventoryStore {
    public func dashboardFacts(from: Date, until: Date, now: Date) async throws -> DashboardFacts {
        let logger = self.logger
        let (start, end, at) = (StoreConventions.millis(from), StoreConventions.millis(until), StoreConventions.millis(now))
        let (top, listed) = (LendingDashboard.topCount, LendingDashboard.listed)
        return try await transaction { c in
            try await c.query("SET TRANSACTION READ ONLY", logger: logger)
            let groups = try await Self.rows(c, """
                SELECT d.group_id, coalesce(min(g.name), d.group_id), count(*),
                       count(r.id),
                       count(*) FILTER (WHERE r.due_at IS NOT NULL AND r.due_at < \(at)),
                       count(*) FILTER (WHERE r.id IS NULL AND d.status = 'normal'),
                       count(*) FILTER (WHERE r.id IS NULL AND d.status = 'broken')
                FROM devices d
                LEFT JOIN rentals r ON r.device_id = d.id AND r.returned_at IS NULL
                LEFT JOIN device_groups g ON g.id = d.group_id
                WHERE d.status <> 'disposed' OR r.id IS NOT NULL
                GROUP BY d.group_id ORDER BY min(coalesce(g.sort_order, 0)), d.group_id COLLATE "C"
                """, logger: logger) { row in
                var cells = Cells(row)
                let id: String = try cells.next(), name: String = try cells.next()
                let devices: Int64 = try cells.next(), lent: Int64 = try cells.next(), overdue: Int64 = try cells.next()
                let available: Int64 = try cells.next(), broken: Int64 = try cells.next()
                return LendingDashboard.GroupLoad(groupId: id, name: name, devices: Int(devices), lent: Int(lent), overdue: Int(overdue),
                                                  available: Int(available), broken: Int(broken))
            }
            // rentals_by_time, rentals_by_due and rentals_by_return (v14) serve the three ranges.
            let lentAt = try await Self.rows(c, "SELECT rented_at FROM rentals WHERE rented_at >= \(start) AND rented_at < \(end)",
                                             logger: logger) { StoreConventions.date(millis: try $0[0].decode(Int64.self)) }
            let due = try await Self.rows(c, "SELECT due_at, returned_at FROM rentals WHERE due_at >= \(start) AND due_at < \(end)",
                                          logger: logger) { row in
                DashboardFacts.Due(dueAt: StoreConventions.date(millis: try row[0].decode(Int64.self)),
                                   returnedAt: try row[1].decode(Int64?.self).map { StoreConventions.date(millis: $0) })
            }
            let lengths = try await Self.rows(c, """
                SELECT returned_at - rented_at FROM rentals WHERE returned_at >= \(start) AND returned_at < \(end)
                """, logger: logger) { Double(try $0[0].decode(Int64.self)) / 1000 }
            let busiest = try await Self.rows(c, """
                SELECT device_id, max(model), count(*) AS lends FROM rentals WHERE rented_at >= \(start) AND rented_at < \(end)
                GROUP BY device_id ORDER BY lends DESC, device_id COLLATE "C" LIMIT \(top)
                """, logger: logger) { row in
                MonthlyLendingReport.DeviceCount(deviceId: try row[0].decode(String.self), model: try row[1].decode(String.self),
                                                 lends: Int(try row[2].decode(Int64.self)))
            }
            let neverCount = try await Self.rows(c, """
                SELECT count(*) FROM devices d
                WHERE d.status <> 'disposed' AND NOT EXISTS (SELECT 1 FROM rentals r WHERE r.device_id = d.id)
                """, logger: logger) { Int(try $0[0].decode(Int64.self)) }.first ?? 0
            let neverLent = try await Self.rows(c, """
                SELECT d.id, d.model, d.registered_at FROM devices d
                WHERE d.status <> 'disposed' AND NOT EXISTS (SELECT 1 FROM rentals r WHERE r.device_id = d.id)
                ORDER BY d.id COLLATE "C" LIMIT \(listed)
                """, logger: logger) { row in
                LendingDashboard.IdleDevice(deviceId: try row[0].decode(String.self), model: try row[1].decode(String.self),
                                            registeredAt: StoreConventions.date(millis: try row[2].decode(Int64.self)))
            }
            return DashboardFacts(groups: groups, lentAt: lentAt, due: due, rentalLengths: lengths, topDevices: busiest,
                                  neverLentCount: neverCount, neverLent: neverLent)
        }
    }
}
