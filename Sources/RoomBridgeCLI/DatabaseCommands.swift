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
            // The store's own log lines are the daemon's (an offline episode, reconnecting): this
            // command says what went wrong itself, once.
            let logger = Logger(label: "roombridgectl.db") { _ in SwiftLogNoOpLogHandler() }
            let target: PostgresInventoryStore
            do {
                target = try await PostgresInventoryStore.open(configuration, logger: logger)
            } catch PostgresOpenError.connectFailed(_, let detail, let problem) {
                throw Self.connectError(configuration, detail: detail, problem: problem, passwordGiven: password != nil)
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

        /// What went wrong connecting, and what to do about it (exit 69: the server is not there;
        /// 77: it is there but does not let us in).
        static func connectError(_ c: PostgresStoreConfiguration, detail: String, problem: ConnectProblem,
                                 passwordGiven: Bool) -> CtlError {
            let place = c.unixSocketDirectory.map { "the socket in \($0) (port \(c.port))" } ?? "\(c.host ?? "localhost"):\(c.port)"
            switch problem {
            case .unreachable(let reason):
                return CtlError(exit: .unavailable, message: "cannot reach PostgreSQL at \(place) (\(reason)): is the server running "
                                + "there? Check the host and port in the URL")
            case .passwordRequired:
                return CtlError(exit: .noPermission, message: "PostgreSQL at \(place) asks for a password for the user "
                                + "\(c.username): give it with --password-file FILE (the file database.password_file names), "
                                + "or let the user in by trust or peer authentication in pg_hba.conf")
            case .loginRefused:
                let fix = passwordGiven
                    ? "check the password in the --password-file and the user name in the URL"
                    : "give the password with --password-file FILE, or check the user name in the URL"
                return CtlError(exit: .noPermission, message: "PostgreSQL at \(place) refused the login of \(c.username) "
                                + "(\(detail)): \(fix); pg_hba.conf says who may log in how")
            case .other:
                return CtlError(exit: .failure, message: "cannot use the PostgreSQL database \(c.displayURL): \(detail)")
            }
        }
    }
}
