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
        subcommands: [Serve.self, HashPassword.self],
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
            let options = WebOptions(host: host, port: port, socketPath: socket,
                                     timeZone: timeZone.flatMap(TimeZone.init(identifier:)),
                                     idleSeconds: idleSeconds, accounts: loaded, secureCookies: secureCookies,
                                     maxConnections: maxConnections, connectionTimeout: .seconds(connectionTimeout))
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

        @Argument(help: "The admin's sign-in name (no ':').")
        var name: String

        func validate() throws {
            guard !name.isEmpty, !name.contains(":"), !name.contains(where: \.isWhitespace) else {
                throw ValidationError("the name must be non-empty, without ':' or spaces")
            }
        }

        func run() async throws {
            guard let password = readLine(strippingNewline: true), password.count >= 8 else {
                throw ValidationError("give a password of at least 8 characters on standard input")
            }
            guard let line = await PasswordHash.line(name: name, password: password) else {
                throw ValidationError("hashing failed")
            }
            print(line)
        }
    }
}
