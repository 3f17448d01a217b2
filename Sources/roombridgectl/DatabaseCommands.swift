import ArgumentParser
import Foundation
import Lending
import LendingStore
import Logging
import PostgresStore
import VarlinkNIO

/// `roombridgectl db`: moving an installation between backends.
struct DatabaseCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Move the inventory to another database.", subcommands: [MigrateTo.self])

    struct MigrateTo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate-to",
            abstract: "Copy the SQLite inventory, with its history and change logs, into an empty PostgreSQL database.",
            discussion: """
                Stop roombridged first (sudo systemctl stop roombridged.socket roombridged), so that no tap \
                happens after the copy. Everything is copied in one transaction and the rows of every table are \
                counted on both sides; on any error nothing is kept. The SQLite file is only read. Then set \
                database.url (and database.password_file) in roombridged.toml and start roombridged again.
                """)

        @Argument(help: ArgumentHelp("The PostgreSQL database (postgresql://USER@HOST[:PORT]/DB[?sslmode=…]).", valueName: "URL"))
        var url: String
        @Option(name: .long, help: ArgumentHelp("The SQLite file to copy.", valueName: "PATH"))
        var from = "/var/lib/roombridge/roombridge.sqlite"
        @Option(name: .long, help: ArgumentHelp("A file holding the PostgreSQL password (not needed with trust or peer authentication).",
                                                valueName: "FILE"))
        var passwordFile: String?
        @Option(name: .long, help: ArgumentHelp("roombridged's socket, to check that it is stopped.", valueName: "PATH"))
        var socket: String = socketFromEnvironment ?? defaultSocketPath

        func run() async throws {
            do {
                try await migrate()
            } catch let error as CtlError {
                Output.err("roombridgectl: " + error.message + "\n")
                throw ExitCode(error.exit.rawValue)
            }
        }

        private func migrate() async throws {
            if let client = try? await VarlinkClient.connect(path: socket) {
                await client.close()
                throw CtlError(exit: .failure, message: "roombridged is running (\(socket) answers): stop it first, so that "
                               + "no tap happens after the copy: sudo systemctl stop roombridged.socket roombridged")
            }
            guard FileManager.default.fileExists(atPath: from) else {
                throw CtlError(exit: .usage, message: "no SQLite database at \(from): give its path with --from (database.path in roombridged.toml)")
            }
            let password: String?
            if let passwordFile {
                guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                    throw CtlError(exit: .usage, message: "cannot read the password file \(passwordFile)")
                }
                password = text.trimmingCharacters(in: .newlines)
            } else {
                password = nil
            }
            var configuration: PostgresStoreConfiguration
            do {
                configuration = try PostgresStoreConfiguration(url: url, password: password)
            } catch {
                throw CtlError(exit: .usage, message: "\(error)")
            }
            // One transaction carries the whole inventory: the daemon's per-call bound is for taps, not this.
            configuration.callTimeout = .seconds(3600)
            let source: SQLiteInventoryStore
            do {
                source = try await SQLiteInventoryStore.open(StoreConfiguration(path: from))
            } catch {
                throw CtlError(exit: .failure, message: "cannot open \(from): \(error)")
            }
            defer { try? source.close() }
            let copy = try await source.copyAll()
            var logger = Logger(label: "roombridgectl.db")
            logger.logLevel = .warning
            let target: PostgresInventoryStore
            do {
                target = try await PostgresInventoryStore.open(configuration, logger: logger)
            } catch {
                throw CtlError(exit: .failure, message: "cannot use the PostgreSQL database: \(error)")
            }
            let counts: [String: Int]
            do {
                counts = try await target.restore(copy)
                target.close()
            } catch {
                target.close()
                throw CtlError(exit: .failure, message: "\(error)")
            }
            for table in counts.keys.sorted() { emit("\(table): \(counts[table] ?? 0) rows (the same as in \(from))") }
            emit("copied. Now set database.url = \"\(url)\" (and database.password_file) in roombridged.toml, then start roombridged.")
        }
    }
}
