import Foundation
import GRDB
import Lending

// CSV import: the records of ``InventoryImport`` applied in one transaction, idempotent by ID.
extension SQLiteInventoryStore {
    /// Adds the records that are new, updates those that differ (keeping their registration
    /// time; a device's changes are logged with `actor`), and leaves equal ones alone. A line
    /// the store refuses (an unknown group or user, an ID differing only in case, …) is a
    /// problem; `problems` from reading the file are carried over. Nothing is written when
    /// `dryRun`, or when any line is bad unless `partial` (then the good lines are written).
    public func importLines(_ lines: [ImportLine], problems: [ImportProblem], dryRun: Bool, partial: Bool,
                            at: Date, by actor: ChangeActor?) async throws -> ImportReport {
        try await ImportReport.run {
            try await write { db in
                var report = ImportReport(problems: problems)
                for line in lines {
                    do {
                        try db.inSavepoint {
                            try Self.apply(db, line.item, to: &report, at: at, by: actor)
                            return .commit
                        }
                    } catch let error as LendingError {
                        report.refused(line, error)
                    }
                }
                return try report.committed(dryRun: dryRun, partial: partial)
            }
        }
    }

    private static func apply(_ db: Database, _ item: ImportLine.Item, to report: inout ImportReport, at: Date,
                              by actor: ChangeActor?) throws {
        switch item {
        case .user(let user):
            guard let old = try fetchUser(db, id: user.id) else {
                try insertUser(db, user)
                return report.added.append(user.id)
            }
            guard let user = ImportMerge.user(user, onto: old) else { return report.unchanged.append(user.id) }
            try user.update(db)
            report.updated.append(user.id)
        case .badge(let badge):
            guard let old = try Badge.fetchOne(db, key: badge.identifier) else {
                try insertBadge(db, badge)
                return report.added.append(badge.identifier)
            }
            guard let badge = ImportMerge.badge(badge, onto: old) else { return report.unchanged.append(badge.identifier) }
            if badge.userId != old.userId, try fetchUser(db, id: badge.userId) == nil {
                throw LendingError.noSuchUser(badge.userId)
            }
            try badge.update(db)
            report.updated.append(badge.identifier)
        case .device(let device):
            guard let old = try fetchDevice(db, id: device.id) else {
                try insertDevice(db, device, at: at, by: actor)
                return report.added.append(device.id)
            }
            guard let device = ImportMerge.device(device, onto: old) else { return report.unchanged.append(device.id) }
            _ = try updateDevice(db, from: old, to: device, at: at, by: actor)
            report.updated.append(device.id)
        }
    }
}
