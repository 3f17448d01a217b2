import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle

/// roombridge-web's command line: the kiosk and the pages over roombridged's Varlink API
/// (docs/web.md). The `roombridge-web` executable and the package's multi-call `roombridge`
/// program (run as `roombridge-web`) both start here.
public struct RoomBridgeWeb: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "roombridge-web",
        abstract: "The lending desk's kiosk and the admin's pages, served from roombridged's Varlink API.",
        subcommands: [Serve.self, HashPassword.self, Token.self],
        defaultSubcommand: Serve.self)
}

extension RoomBridgeWeb {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve the pages (the default).")

        @Option(help: "Address to listen on. Anything but loopback belongs behind a TLS reverse proxy (docs/web.md).")
        var host = "127.0.0.1"
        @Option(help: "TCP port (0: any free port, printed at start).")
        var port = 8080
        @Option(help: ArgumentHelp("roombridged's Varlink socket.", valueName: "PATH"))
        var socket = ProcessInfo.processInfo.environment["ROOMBRIDGE_SOCKET"] ?? "/run/roombridge/roombridge.sock"
        @Option(help: ArgumentHelp("The time zone for dates, e.g. Asia/Tokyo (default: the daemon's, lending.time_zone).", valueName: "ZONE"))
        var timeZone: String?
        @Option(help: "Seconds an outcome stays on the kiosk before it returns to idle.")
        var idleSeconds = 6
        @Option(help: ArgumentHelp("Admin accounts file (lines from `roombridge-web hash-password`); without it nobody can sign in.",
                                   valueName: "PATH"))
        var accounts: String?
        @Option(help: ArgumentHelp("API tokens file (lines from `roombridge-web token add`); without it /api/v1 refuses every call.",
                                   valueName: "PATH"))
        var apiTokens: String?
        @Option(help: "API requests a token may make at once, before --api-per-second applies.")
        var apiBurst = 60
        @Option(help: "API requests per second a token may make after its burst.")
        var apiPerSecond = 20.0
        @Flag(help: "Mark cookies Secure (when browsers reach the pages over HTTPS through a proxy).")
        var secureCookies = false
        @Option(help: "Open HTTP connections at most; more are closed at once. Keep it below the open file limit (LimitNOFILE).")
        var maxConnections = 512
        @Option(help: "Seconds a connection may stay quiet, or take to send a request's head, before it is closed.")
        var connectionTimeout = 30
        @Option(help: "trace, debug, info, notice, warning, error or critical.")
        var logLevel = "info"

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
            guard idleSeconds > 0 else { throw ValidationError("--idle-seconds must be positive") }
            guard maxConnections > 0 else { throw ValidationError("--max-connections must be positive") }
            guard connectionTimeout > 0 else { throw ValidationError("--connection-timeout must be positive") }
            guard apiBurst > 0, apiPerSecond > 0 else { throw ValidationError("--api-burst and --api-per-second must be positive") }
            if let timeZone, TimeZone(identifier: timeZone) == nil {
                throw ValidationError("unknown time zone '\(timeZone)': use a tz database name such as Asia/Tokyo")
            }
            guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level '\(logLevel)'") }
        }

        func run() async throws {
            let level = Logger.Level(rawValue: logLevel) ?? .info
            LoggingSystem.bootstrap { label in WebServer.logHandler(label: label, level: level) }
            let logger = Logger(label: "roombridge-web")
            var loaded: Accounts?
            if let accounts {
                do {
                    loaded = try Accounts(text: String(contentsOfFile: accounts, encoding: .utf8))
                } catch let error as Accounts.ParseError {
                    throw ValidationError("\(accounts): \(error)")
                } catch {
                    throw ValidationError("cannot read the accounts file \(accounts): \(error.localizedDescription)")
                }
            }
            var tokens: APITokens?
            if let apiTokens {
                do {
                    tokens = try APITokens(text: String(contentsOfFile: apiTokens, encoding: .utf8))
                } catch let error as APITokens.ParseError {
                    throw ValidationError("\(apiTokens): \(error)")
                } catch {
                    throw ValidationError("cannot read the API tokens file \(apiTokens): \(error.localizedDescription)")
                }
            }
            let options = WebOptions(host: host, port: port, socketPath: socket,
                                     timeZone: timeZone.flatMap(TimeZone.init(identifier:)),
                                     idleSeconds: idleSeconds, accounts: loaded, secureCookies: secureCookies,
                                     maxConnections: maxConnections, connectionTimeout: .seconds(connectionTimeout),
                                     apiTokens: tokens, apiBurst: apiBurst, apiPerSecond: apiPerSecond)
            let group = ServiceGroup(configuration: .init(services: WebServer.services(options, logger: logger).map { .init(service: $0) },
                                                          gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }
    }

}

extension RoomBridgeWeb {
    struct HashPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an accounts-file line for NAME; the password is read from standard input (one line).")

        @Argument(help: "The sign-in name (no ':').")
        var name: String

        @Option(help: ArgumentHelp("Make a self-service account of this inventory user, which books for that user and changes nothing else; without it, an admin.",
                                   valueName: "USER-ID"))
        var user: String?

        func validate() throws {
            guard !name.isEmpty, !name.contains(":"), !name.contains(where: \.isWhitespace) else {
                throw ValidationError("the name must be non-empty, without ':' or spaces")
            }
            if let user, user.isEmpty || user.contains(":") || user.contains(where: \.isWhitespace) {
                throw ValidationError("the user ID must be non-empty, without ':' or spaces")
            }
        }

        func run() async throws {
            guard let password = readLine(strippingNewline: true), password.count >= 8 else {
                throw ValidationError("give a password of at least 8 characters on standard input")
            }
            guard let line = await PasswordHash.line(name: name, password: password, userId: user) else {
                throw ValidationError("hashing failed")
            }
            print(line)
        }
    }
}

extension RoomBridgeWeb {
    /// `token add|list|remove`: the API tokens file.
    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make, list and remove API tokens (docs/web.md, \"The HTTP API\").",
            subcommands: [Add.self, List.self, Remove.self])

        struct FileOption: ParsableArguments {
            @Option(help: ArgumentHelp("The API tokens file (serve's --api-tokens).", valueName: "PATH"))
            var file = "/etc/roombridge/web-tokens"
        }

        static func read(_ path: String) throws -> String {
            guard FileManager.default.fileExists(atPath: path) else { return "" }
            return try String(contentsOfFile: path, encoding: .utf8)
        }

        /// Writes the file readable by its owner only (it holds the hashes, not the tokens; still nobody else's).
        static func write(_ text: String, to path: String) throws {
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw ValidationError("cannot write \(path): check the directory exists and is writable")
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make a token for NAME and print it once (the file keeps only its hash).")
            @Argument(help: "The token's name, recorded as the actor of its changes (letters, digits, - _ .).")
            var name: String
            @Option(help: "read: every GET; write: also lend, return, change devices and move curtains.")
            var scope: String = "read"
            @OptionGroup var file: FileOption

            func validate() throws {
                guard APITokens.validName(name) else { throw ValidationError("the name may have letters, digits, - _ and . (at most 64)") }
                guard APITokens.Scope(rawValue: scope) != nil else { throw ValidationError("--scope is read or write") }
            }

            func run() async throws {
                let text = try Token.read(file.file)
                let existing = try APITokens(text: text)
                guard !existing.names.contains(name) else {
                    throw ValidationError("a token named \(name) exists; remove it first (roombridge-web token remove \(name))")
                }
                let made = APITokens.make(name: name, scope: APITokens.Scope(rawValue: scope) ?? .read)
                try Token.write(text + (text.isEmpty || text.hasSuffix("\n") ? "" : "\n") + made.line + "\n", to: file.file)
                print(made.token)
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List the tokens' names and scopes.")
            @OptionGroup var file: FileOption

            func run() async throws {
                for line in try Token.read(file.file).split(separator: "\n") where !line.hasPrefix("#") {
                    let f = line.split(separator: ":")
                    if f.count == 4 { print("\(f[0])  \(f[1])") }
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove NAME's token (serve reads the file at start: restart it).")
            @Argument var name: String
            @OptionGroup var file: FileOption

            func run() async throws {
                let lines = try Token.read(file.file).split(separator: "\n", omittingEmptySubsequences: false)
                let kept = lines.filter { !$0.hasPrefix(name + ":") }
                guard kept.count < lines.count else { throw ValidationError("no token named \(name) in \(file.file)") }
                try Token.write(kept.joined(separator: "\n"), to: file.file)
            }
        }
    }
}
