import ArgumentParser
import Foundation
import Lending
import RoomBridgeAPI
import Varlink
import VarlinkNIO

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import users, badges or devices from a CSV file.",
        discussion: """
            The file is UTF-8 CSV with a header row (a byte order mark is accepted). Columns: users: id, name; \
            badges: identifier, user_id[, kind, label]; devices: id, group_id, model[, serial_number, os_version, \
            status, connector_type, note]. Idempotent by ID: new records are added, differing ones updated, equal \
            ones left alone. Every bad line is reported with its line number, and nothing is written unless all \
            lines are good (or with --partial). The whole file goes in one call: at most the daemon's \
            socket.max_message_size (64 KiB by default); split a larger file.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("What the file holds: users, badges or devices.", valueName: "KIND")) var kind: String
    @Argument(help: ArgumentHelp("The CSV file.", valueName: "FILE")) var file: String
    @Flag(name: .long, help: "Show what would change; write nothing.") var dryRun = false
    @Flag(name: .long, help: "Write the good lines even if some are bad.") var partial = false

    static let kinds = ImportKind.allCases.map(\.rawValue)

    func validate() throws {
        guard Self.kinds.contains(kind) else {
            throw ValidationError("'\(kind)' is not something to import; use one of \(Self.kinds.joined(separator: ", "))")
        }
        _ = try text()
    }

    /// The file's text; a usage error when it cannot be read or is not UTF-8.
    func text() throws -> String {
        guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ValidationError("\(file) is not UTF-8 text; save it as \"CSV UTF-8\"")
        }
        return text
    }

    func run() async throws {
        let text = try text()
        // validate() checked the kind.
        guard let importKind = ImportKind(rawValue: kind) else { return }
        let p = InventoryAPI.Import.Parameters(kind: importKind, csv: text, dryRun: dryRun ? true : nil, partial: partial ? true : nil)
        try await withClient(options) { client in
            let answer = try await call(client, InventoryAPI.Import.self, p)
            if options.json { emit(JSONValue.object(answer.sent).serialized()) }
            let reply = answer.value
            let problems = reply.problems
            for problem in problems {
                Output.err("\(file):\(problem.line): \(problem.reason)\n")
            }
            let written = reply.written
            if !options.json {
                let verb = written ? "" : "would be "
                for (ids, label) in [(reply.added, "added"), (reply.updated, "updated")] where !ids.isEmpty {
                    emit("\(verb)\(label): \(ids.joined(separator: ", "))")
                }
                var summary = "\(reply.added.count) \(verb)added, \(reply.updated.count) \(verb)updated, "
                    + "\(reply.unchanged.count) unchanged"
                if !problems.isEmpty { summary += ", \(problems.count) bad line\(problems.count == 1 ? "" : "s")" }
                if written {
                    summary += problems.isEmpty ? "" : " (skipped)"
                } else if dryRun {
                    summary += "; dry run: nothing written"
                } else {
                    summary += "; nothing written: fix the lines above, or use --partial to write the good ones"
                }
                emit(summary)
            }
            if !written && !dryRun { throw ExitCode(CtlExit.refused.rawValue) }
        }
    }
}
