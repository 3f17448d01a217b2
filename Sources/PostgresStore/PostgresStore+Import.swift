#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO

// CSV import: the records of ``InventoryImport`` applied in one transaction, idempotent by ID.
extension PostgresInventoryStore {
    /// As the SQLite store's: adds the records that are new, updates those that differ (keeping
    /// their registration time; a device's changes are logged with `actor`), and leaves equal
    /// ones alone. Each line runs in a savepoint, so a line the store refuses (an unknown group
    /// or user, an ID differing only in case, …) becomes a problem and the others go on. Nothing
    /// is written when `dryRun`, or when any line is bad unless `partial`.
    public func importLines(_ lines: [ImportLine], problems: [ImportProblem], dryRun: Bool, partial: Bool,
                            at: Date, by actor: ChangeActor?) async throws -> ImportReport {
        let logger = self.logger
        return try await ImportReport.run {
            try await transaction { c in
                var report = ImportReport(problems: problems)
                for line in lines {
                    try await c.query("SAVEPOINT import_line", logger: logger)
                    do {
                        try await Self.apply(c, line.item, to: &report, at: at, by: actor, logger: logger)
                        try await c.query("RELEASE SAVEPOINT import_line", logger: logger)
                    } catch let error as LendingError {
                        try await c.query("ROLLBACK TO SAVEPOINT import_line", logger: logger)
                        report.refused(line, error)
                    }
                }
                return try report.committed(dryRun: dryRun, partial: partial)
            }
        }
    }

    private static func apply(_ c: PostgresConnection, _ item: ImportLine.Item, to report: inout ImportReport, at: Date,
                              by actor: ChangeActor?, logger: Logger) async throws {
        switch item {
        case .user(let user):
            guard let old = try await rows(c, "SELECT \(unescaped: Columns.user) FROM users WHERE id = \(user.id) FOR UPDATE",
                                           logger: logger, Decode.user).first else {
                try await insertUser(c, user, logger: logger)
                return report.added.append(user.id)
            }
            guard let user = ImportMerge.user(user, onto: old) else { return report.unchanged.append(user.id) }
            try await c.query("UPDATE users SET name = \(user.name) WHERE id = \(user.id)", logger: logger)
            report.updated.append(user.id)
        case .badge(let badge):
            guard let old = try await rows(c, """
                SELECT \(unescaped: Columns.badge) FROM badges WHERE identifier = \(badge.identifier) FOR UPDATE
                """, logger: logger, Decode.badge).first else {
                try await insertBadge(c, badge, logger: logger)
                return report.added.append(badge.identifier)
            }
            guard let badge = ImportMerge.badge(badge, onto: old) else { return report.unchanged.append(badge.identifier) }
            if badge.userId != old.userId,
               try await !exists(c, "SELECT 1 FROM users WHERE id = \(badge.userId) FOR KEY SHARE", logger: logger) {
                throw LendingError.noSuchUser(badge.userId)
            }
            try await c.query("""
                UPDATE badges SET kind = \(badge.kind.rawValue), user_id = \(badge.userId), label = \(badge.label)
                WHERE identifier = \(badge.identifier)
                """, logger: logger)
            report.updated.append(badge.identifier)
        case .device(let device):
            guard let old = try await fetchDevice(c, id: device.id, lock: "FOR UPDATE", logger: logger) else {
                try await insertDevice(c, device, at: at, by: actor, logger: logger)
                return report.added.append(device.id)
            }
            guard let device = ImportMerge.device(device, onto: old) else { return report.unchanged.append(device.id) }
            _ = try await updateDevice(c, from: old, to: device, at: at, by: actor, logger: logger)
            report.updated.append(device.id)
        }
    }
}
