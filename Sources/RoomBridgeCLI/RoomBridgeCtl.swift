import ArgumentParser
import Diagnostics
import Foundation
import Synchronization
import RoomBridgeAPI
import RoomBridgeCore
import Varlink
import VarlinkNIO

/// Exit statuses of roombridgectl.
enum CtlExit: Int32 {
    case ok = 0
    case failure = 1
    /// roombridged is not running (no socket, or nobody listening).
    case notRunning = 3
    /// Not allowed: cannot open the socket, or the method needs the authorised group.
    case permissionDenied = 4
    /// The daemon refused the request (a Varlink error reply); the message says why.
    case refused = 5
    /// The connection broke or the daemon sent something unexpected.
    case protocolError = 6
    /// `doctor` found at least one problem.
    case checksFailed = 7
    /// Bad usage: an argument that cannot be right (as ArgumentParser's own usage errors).
    case usage = 64
    /// `db migrate-to`: the PostgreSQL server cannot be reached (sysexits' EX_UNAVAILABLE).
    case unavailable = 69
    /// `db migrate-to`: the PostgreSQL server does not let the user in (EX_NOPERM).
    case noPermission = 77
}

/// roombridged's socket when neither --socket nor ROOMBRIDGE_SOCKET names one.
let defaultSocketPath = "/run/roombridge/roombridge.sock"

/// $ROOMBRIDGE_SOCKET, unless unset or empty (`ROOMBRIDGE_SOCKET= roombridgectl …` means the default).
var socketFromEnvironment: String? {
    ProcessInfo.processInfo.environment["ROOMBRIDGE_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
}

/// A failure with the message to print and the exit status.
struct CtlError: Error, CustomStringConvertible {
    let exit: CtlExit
    let message: String

    var description: String { message }
}

struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Path of roombridged's socket.", valueName: "PATH"))
    var socket: String = socketFromEnvironment ?? defaultSocketPath

    @Flag(name: .long, help: "Print JSON, one object per line.")
    var json = false
}

/// roombridgectl's commands. The `roombridgectl` executable and the package's multi-call
/// `roombridge` program (run as `roombridgectl`) both start here.
public struct RoomBridgeCtl: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "roombridgectl",
        abstract: "Control and watch roombridged, the room's NFC lending and curtain daemon.",
        discussion: """
            Exit status: 0 ok, 1 failure, 3 roombridged not running, 4 permission denied, \
            5 refused by the daemon, 6 connection or protocol error, 7 doctor found problems, \
            64 bad usage; db migrate-to also 69 PostgreSQL cannot be reached, 77 PostgreSQL does not let the user in.

            Shell completions: roombridgectl --generate-completion-script bash|zsh|fish
            """,
        version: RoomBridgeVersion.string,
        subcommands: [Status.self, Watch.self, Tags.self, Devices.self, Groups.self, Users.self, Badges.self,
                      Lend.self, Return.self, Renew.self, Rentals.self, Book.self, Bookings.self, CancelBooking.self, StocktakeCommand.self, MonthReport.self, History.self, Import.self, Outbox.self, Curtain.self, Presence.self, LogLevel.self,
                      DoctorCommand.self, DatabaseCommands.self])
}

extension RoomBridgeCtl {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show readers, the last tap, the curtain, lending and who is here.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, StateAPI.GetState.self)
                if options.json {
                    emit(reply.sole.serialized())
                } else {
                    emit(Render.status(reply.value.state))
                }
            }
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print events as they happen, one line each, until interrupted.",
            discussion: """
                Outlives roombridged's restarts: when the daemon goes away, a line on stderr says so and \
                the watch waits for it to come back, then goes on after the last event it printed when the \
                daemon still has the ones missed meanwhile (else it says it started again).
                """)
        @OptionGroup var options: GlobalOptions

        @Flag(name: .long, help: "Print the whole state first.")
        var state = false

        /// Where the watch has got to: the daemon's run and the last event printed.
        struct Position: Sendable {
            var startedAt: Date?
            var seq: Int64?
        }

        func run() async throws {
            let path = options.socket
            // The first connection reports as every command does (exit status and what to do).
            try await withClient(options) { _ in }
            let link = ReconnectingVarlinkClient(path: path)
            let position = Mutex(Position())
            let events = link.resubscribing("io.roombridge.State.Watch", parameters: {
                // Resume only in the same daemon run: a restarted daemon numbers its events from 1 again.
                let (seq, run) = position.withLock { ($0.seq, $0.startedAt) }
                guard let seq, let run,
                      let now = try? await link.call(StateAPI.GetState.self, .init(), retry: .idempotent).state.startedAt,
                      now == run else { return [:] }
                return ["since": .int(seq)]
            }, retrying: { $0.name == "io.roombridge.State.ShuttingDown" })
            var curtains: [String: CurtainState] = [:]  // each curtain before the next event, to say what changed
            var interrupted = false
            var first = true
            do {
                try await KioskTime.$current.withValue(await KioskTime.of(link)) {
                    for try await item in events {
                        let reply: VarlinkClient.Parameters
                        switch item {
                        case .interrupted(let error, _):
                            if !interrupted {
                                Output.err("roombridgectl: lost roombridged (\(error)); waiting for it to come back (Ctrl-C to stop)\n")
                            }
                            interrupted = true
                            continue
                        case .reply(let r):
                            reply = r
                        }
                        // Typed (the contract's StateAPI.Watch); --json prints each part as the daemon sent it.
                        let typed = try decode(StateAPI.Watch.Reply.self, .object(reply))
                        if let s = typed.state {
                            position.withLock { $0 = Position(startedAt: s.startedAt, seq: Int64(s.seq)) }
                            if interrupted { Output.err("roombridgectl: roombridged is back; it started again, so events in between were not kept\n") }
                            defer { first = false; interrupted = false }
                            if options.json {
                                if state && first, let sent = reply["state"] { emit(sent.serialized()) }
                                continue
                            }
                            curtains = Dictionary(s.curtains.map { ($0.id ?? "", $0) }, uniquingKeysWith: { $1 })
                            if state && first { emit(Render.status(s)) }
                        } else if typed.resumedAfter != nil {
                            if interrupted { Output.err("roombridgectl: roombridged is back; going on after the last event shown\n") }
                            interrupted = false
                        } else if let e = typed.event {
                            position.withLock { $0.seq = Int64(e.seq) }
                            if options.json, let sent = reply["event"] { emit(sent.serialized()); continue }
                            var previous: CurtainState? = nil
                            if case .curtain(let c) = e.payload { previous = curtains[c.id ?? ""]; curtains[c.id ?? ""] = c }
                            emit(Render.event(e, previousCurtain: previous))
                        }
                    }
                }
            } catch let error as VarlinkError {
                let translated = translate(error)
                Output.err("roombridgectl: " + translated.message + "\n")
                throw ExitCode(translated.exit.rawValue)
            } catch let error as CtlError {
                Output.err("roombridgectl: " + error.message + "\n")
                throw ExitCode(error.exit.rawValue)
            }
        }
    }

    struct LogLevel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log-level",
            abstract: "Change roombridged's log level until it restarts (needs the authorised group).")
        @OptionGroup var options: GlobalOptions

        enum Level: String, ExpressibleByArgument, CaseIterable { case trace, debug, info, notice, warning, error, critical }

        @Argument(help: "trace, debug, info, notice, warning, error or critical")
        var level: Level

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, "io.roombridge.State.SetLogLevel", ["level": .string(level.rawValue)])
                if !options.json { emit("log level set to \(level.rawValue)") }
            }
        }
    }
}

extension RoomBridgeCtl {
    struct DoctorCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "doctor",
            abstract: "Check the configuration, the socket, the reader, Bluetooth and the database; print a fix for each problem.")

        @Option(name: .long, help: ArgumentHelp("roombridged's configuration file.", valueName: "PATH"))
        var config = "/etc/roombridge/roombridged.toml"

        @Option(name: .long, help: ArgumentHelp("Socket path (default: from the configuration).", valueName: "PATH"))
        var socket: String?

        @Flag(name: .long, help: "Print the findings as JSON, one object per line.")
        var json = false

        func run() async throws {
            let socketPath = socket ?? socketFromEnvironment
            let findings = await Doctor(configPath: config, socketPath: socketPath,
                                        probes: doctorProbes()).run()
            if json {
                for f in findings { emit(String(decoding: try JSONValueEncoder().encode(f).serializedBytes(), as: UTF8.self)) }
            } else {
                emit(Doctor.render(findings))
            }
            if findings.contains(where: { $0.status == .failed }) { throw ExitCode(CtlExit.checksFailed.rawValue) }
        }
    }
}

// MARK: Plumbing

/// Connects, runs `body`, and turns every failure into a message on stderr and an exit status.
func withClient(_ options: GlobalOptions, _ body: (VarlinkClient) async throws -> Void) async throws {
    do {
        let client = try await connect(options.socket)
        do {
            // Times are shown, and bare days read, in the kiosk's time zone.
            try await KioskTime.$current.withValue(await KioskTime.of(client)) { try await body(client) }
            await client.close()
        } catch {
            await client.close()
            throw error
        }
    } catch let error as CtlError {
        Output.err("roombridgectl: " + error.message + "\n")
        throw ExitCode(error.exit.rawValue)
    }
}

func connect(_ path: String) async throws -> VarlinkClient {
    if let kind = nonSocketKind(path) {
        throw CtlError(exit: .usage, message: "\(path) is not a socket (it is \(kind)); give roombridged's socket with --socket or ROOMBRIDGE_SOCKET (default \(defaultSocketPath))")
    }
    do {
        return try await VarlinkClient.connect(path: path)
    } catch let error as VarlinkClientError {
        switch error {
        case .socketNotFound:
            throw CtlError(exit: .notRunning, message: "no socket at \(path): roombridged is not running, or its socket is elsewhere (give it with --socket); check: systemctl status roombridged")
        case .connectionRefused:
            throw CtlError(exit: .notRunning, message: "nothing is listening on \(path): roombridged is not running; check: systemctl status roombridged")
        case .permissionDenied:
            throw CtlError(exit: .permissionDenied, message: "cannot connect to \(path): permission denied. Join the socket's group (ls -l \(path) shows it): sudo usermod -aG roombridge $USER, then log in again")
        case .connectFailed(_, let reason):
            throw CtlError(exit: .protocolError, message: "cannot connect to \(path): \(reason)")
        default:
            throw CtlError(exit: .protocolError, message: "cannot connect to \(path): \(error)")
        }
    }
}

func call(_ client: VarlinkClient, _ method: String, _ parameters: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
    do {
        return try await client.call(method, parameters: parameters)
    } catch let error as VarlinkError {
        throw translate(error)
    } catch let error as CtlError {
        throw error
    } catch {
        throw CtlError(exit: .protocolError, message: "\(method) failed: \(error)")
    }
}

/// A Varlink error reply as a message that says what to do.
func translate(_ error: VarlinkError) -> CtlError {
    let p = error.parameters
    switch error.name {
    case "io.roombridge.State.PermissionDenied":
        let group = p["group"]?.stringValue ?? "roombridge"
        let hint = p["hint"]?.stringValue ?? "join the group \(group)"
        return CtlError(exit: .permissionDenied, message: "permission denied: this needs membership of the group \(group); \(hint)")
    case "io.roombridge.State.SubscriberTooSlow":
        return CtlError(exit: .protocolError, message: "roombridged dropped this watch because it fell behind; run it again (pipe its output to something that keeps up)")
    case "io.roombridge.State.ShuttingDown":
        return CtlError(exit: .notRunning, message: "roombridged is shutting down")
    case VarlinkError.invalidParameterName:
        return CtlError(exit: .refused, message: "invalid parameter \(p["parameter"]?.stringValue ?? "?")")
    case VarlinkError.methodNotFoundName, VarlinkError.interfaceNotFoundName:
        return CtlError(exit: .refused, message: "roombridged does not know \(p["method"]?.stringValue ?? p["interface"]?.stringValue ?? "this request"); is it an older version? (roombridgectl \(RoomBridgeVersion.string))")
    default:
        // io.roombridge.Inventory and io.roombridge.Lending errors carry the text that says what to do.
        if let message = p["message"]?.stringValue { return CtlError(exit: .refused, message: message) }
        let detail = p.isEmpty ? "" : " " + JSONValue.object(p).serialized()
        return CtlError(exit: .refused, message: "\(error.name)\(detail)")
    }
}

func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue) throws -> T {
    do {
        return try JSONValueDecoder().decode(type, from: value)
    } catch {
        throw CtlError(exit: .protocolError, message: "unexpected reply from roombridged (\(error)); are roombridged and roombridgectl the same version?")
    }
}
