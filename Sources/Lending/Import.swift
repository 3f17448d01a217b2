#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a CSV import brings in.
public enum ImportKind: String, Sendable, Hashable, CaseIterable, Codable {
    case users, badges, devices

    /// The columns a file of this kind must have, then those it may have.
    public var columns: (required: [String], optional: [String]) {
        switch self {
        case .users: (["id", "name"], [])
        case .badges: (["identifier", "user_id"], ["kind", "label"])
        case .devices: (["id", "group_id", "model"], ["serial_number", "os_version", "status", "connector_type", "note"])
        }
    }
}

/// One record to import, from the line of the file it was read on.
public struct ImportLine: Sendable, Hashable {
    public enum Item: Sendable, Hashable {
        case user(User)
        case badge(Badge)
        case device(Device)

        /// The ID the import is idempotent by.
        public var id: String {
            switch self {
            case .user(let u): u.id
            case .badge(let b): b.identifier
            case .device(let d): d.id
            }
        }
    }
    public var line: Int
    public var item: Item

    public init(line: Int, item: Item) {
        self.line = line
        self.item = item
    }
}

/// A line that cannot be imported, and why.
public struct ImportProblem: Sendable, Hashable, Codable {
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }
}

/// What an import did (or, in a dry run or when a line was bad, would have done).
public struct ImportReport: Sendable, Hashable {
    public var added: [String] = []
    public var updated: [String] = []
    public var unchanged: [String] = []
    public var problems: [ImportProblem] = []
    /// True when the changes were committed.
    public var written = false

    public init() {}

    /// A report starting from the problems found while reading the file.
    public init(problems: [ImportProblem]) { self.problems = problems }

    /// A line the store refused: a problem of that line.
    public mutating func refused(_ line: ImportLine, _ error: LendingError) {
        problems.append(ImportProblem(line: line.line, reason: error.description))
    }

    /// Ends the import: the problems in line order, and whether to commit — never on a dry run,
    /// and with a bad line only when `partial`. `written` says the same.
    public mutating func finish(dryRun: Bool, partial: Bool) -> Bool {
        problems.sort { $0.line < $1.line }
        written = !dryRun && (problems.isEmpty || partial)
        return written
    }

    /// Ends the import inside its transaction (``finish(dryRun:partial:)``): the report to commit with, or
    /// ``ImportRollback`` carrying it, which rolls the transaction back.
    public func committed(dryRun: Bool, partial: Bool) throws(ImportRollback) -> ImportReport {
        var report = self
        guard report.finish(dryRun: dryRun, partial: partial) else { throw ImportRollback(report: report) }
        return report
    }

    /// Every store's import: `transaction` applies each line (a refused one becomes a problem) and ends with
    /// ``committed(dryRun:partial:)``; a rolled-back import still answers with its report.
    public static func run(_ transaction: () async throws -> ImportReport) async throws -> ImportReport {
        do {
            return try await transaction()
        } catch let rollback as ImportRollback {
            return rollback.report
        }
    }
}

/// Thrown inside an import's transaction to roll it back (a dry run, or a bad line without `partial`) while
/// keeping the report.
public struct ImportRollback: Error, Sendable {
    public let report: ImportReport
}

/// What an import line does to the record already stored under its ID: the stored record keeps
/// its registration time (and a device its NFC registration, which only tag binding changes);
/// `nil` when nothing else differs, so the line leaves it unchanged.
public enum ImportMerge {
    public static func user(_ new: User, onto old: User) -> User? {
        var merged = new
        merged.registeredAt = old.registeredAt
        return merged == old ? nil : merged
    }

    public static func badge(_ new: Badge, onto old: Badge) -> Badge? {
        var merged = new
        merged.registeredAt = old.registeredAt
        return merged == old ? nil : merged
    }

    public static func device(_ new: Device, onto old: Device) -> Device? {
        var merged = new
        merged.registeredAt = old.registeredAt
        merged.isNFCRegistered = old.isNFCRegistered
        return merged == old ? nil : merged
    }
}

/// Reading an import file into records, line by line, with the inventory's validation rules;
/// the store then applies them in one transaction, idempotent by ID.
public enum InventoryImport {
    /// The records of `text` and the problems of its bad lines (line numbers of the file;
    /// line 1 is the header). `at` is the registration time of new records.
    public static func read(_ kind: ImportKind, csv text: String, at: Date) -> (lines: [ImportLine], problems: [ImportProblem]) {
        let table: CSVReader.Table
        do {
            table = try CSVReader.parse(text)
        } catch {
            let line = switch error { case .unterminatedQuote(let l), .strayQuote(let l): l; case .empty: 1 }
            return ([], [ImportProblem(line: line, reason: error.description)])
        }
        let header = table.header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let (required, optional) = kind.columns
        var headerProblems: [String] = []
        let missing = required.filter { !header.contains($0) }
        if !missing.isEmpty { headerProblems.append("missing column\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", "))") }
        let unknown = header.filter { !required.contains($0) && !optional.contains($0) }
        if !unknown.isEmpty {
            headerProblems.append("unknown column\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", "))")
        }
        let repeated = Set(header.filter { name in header.filter { $0 == name }.count > 1 })
        if !repeated.isEmpty { headerProblems.append("repeated column \(repeated.sorted().joined(separator: ", "))") }
        if !headerProblems.isEmpty {
            let known = (required + optional).joined(separator: ", ")
            return ([], [ImportProblem(line: 1, reason: headerProblems.joined(separator: "; ") + " (the header of a \(kind.rawValue) file: \(known); the first \(required.count) are required)")])
        }

        var lines: [ImportLine] = []
        var problems: [ImportProblem] = []
        var seen: [String: Int] = [:]
        for record in table.records {
            guard record.fields.count == header.count else {
                problems.append(ImportProblem(line: record.line, reason: "has \(record.fields.count) fields; the header has \(header.count)"))
                continue
            }
            let row = Dictionary(uniqueKeysWithValues: zip(header, record.fields))
            do {
                let item = try self.item(kind, row, at: at)
                if let first = seen[item.id] {
                    problems.append(ImportProblem(line: record.line, reason: "\(item.id) is already on line \(first); each ID once"))
                    continue
                }
                seen[item.id] = record.line
                lines.append(ImportLine(line: record.line, item: item))
            } catch {
                problems.append(ImportProblem(line: record.line, reason: error.description))
            }
        }
        return (lines, problems)
    }

    /// One row as a record, validated as the inventory's own changes are.
    static func item(_ kind: ImportKind, _ row: [String: String], at: Date) throws(LendingError) -> ImportLine.Item {
        func value(_ column: String) -> String? {
            guard let v = row[column]?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
            return v
        }
        switch kind {
        case .users:
            let user = User(id: value("id") ?? "", name: value("name") ?? "", registeredAt: at)
            try Validation.user(user, isNew: true)
            return .user(user)
        case .badges:
            var badgeKind = BadgeKind.iso14443a
            if let text = value("kind") {
                guard let k = BadgeKind(rawValue: text) else {
                    throw .invalidField("kind", reason: "'\(text)' is not a badge kind; use one of \(BadgeKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                badgeKind = k
            }
            let identifier = try CardIdentifier.normalize(value("identifier") ?? "", kind: badgeKind)
            let userId = value("user_id") ?? ""
            try Validation.id(userId, field: "user ID")
            return .badge(Badge(identifier: identifier, kind: badgeKind, userId: userId, registeredAt: at, label: value("label")))
        case .devices:
            let device = Device(id: value("id") ?? "", groupId: value("group_id") ?? "", model: value("model") ?? "",
                                serialNumber: value("serial_number") ?? "", osVersion: value("os_version") ?? "",
                                status: try value("status").map(Validation.status) ?? .normal,
                                connectorType: value("connector_type") ?? "", registeredAt: at, note: row["note"].flatMap { $0.isEmpty ? nil : $0 })
            try Validation.id(device.groupId, field: "group ID")
            try Validation.device(device, isNew: true)
            return .device(device)
        }
    }
}
