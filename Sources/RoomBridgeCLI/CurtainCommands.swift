import ArgumentParser
import Foundation
import RoomBridgeAPI
import RoomBridgeCore
import Varlink
import VarlinkNIO
import CurtainProtocol

extension RoomBridgeCtl {
    /// `roombridgectl curtain …`: the BLE curtain through `io.roombridge.Curtain`.
    struct Curtain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "curtain",
            abstract: "The BLE curtain: state, motions, the controller's schedule.",
            discussion: """
                With several curtains configured, name one with --name (curtain status lists them), \
                a group of the configuration's [curtain.groups], or --name all for all at once; a group's \
                command reaches its curtains in parallel and shows what each did. Motions return once the controller accepted the command; with --wait they return \
                when the motion has ended. While the wall switch is moving the curtain, open, close, \
                stop and move are refused (the person at the switch wins); the schedule can still \
                be set. Commands need the authorised group.
                """,
            subcommands: [Status.self, Open.self, Close.self, Stop.self, Move.self, Schedule.self,
                          Sync.self, Reconnect.self])

        struct Status: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show the connection, motion, position and schedule (of every curtain, as a table, when there are several).")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget

            func run() async throws {
                try await withClient(options) { client in
                    let reply = try await curtainCall(client, CurtainAPI.GetState.self, .init(name: target.name))
                    typealias Field = CurtainAPI.GetState.Reply.CodingKeys
                    let all = reply.value.curtains
                    if all.count > 1, target.name == nil || target.name == "*" {
                        if options.json { emit(reply.sent(Field.curtains)?.serialized() ?? "[]"); return }
                        emit(Render.curtainTable(all))
                        return
                    }
                    if options.json { emit(reply.sent(Field.curtain)?.serialized() ?? "{}"); return }
                    emit(Render.curtain(reply.value.curtain))
                }
            }
        }

        struct MotionOptions: ParsableArguments {
            @Flag(name: .long, help: "Return only when the motion has ended.")
            var wait = false

            @Option(name: .long, help: ArgumentHelp("With --wait: give up after this many seconds.", valueName: "SECONDS"))
            var timeout: Double = 300

            func check(_ target: CurtainTarget) throws {
                if wait, target.name == "*" || target.name == "all" {
                    throw ValidationError("--wait follows one curtain: give --name NAME, or leave --wait out for every curtain")
                }
            }
        }

        struct Open: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Open the curtain fully.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget
            @OptionGroup var motion: MotionOptions

            func validate() throws { try motion.check(target) }

            func run() async throws {
                try await runMotion(options, motion, target, CurtainAPI.Open.self, target.command, destination: 100, done: "open")
            }
        }

        struct Close: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Close the curtain fully.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget
            @OptionGroup var motion: MotionOptions

            func validate() throws { try motion.check(target) }

            func run() async throws {
                try await runMotion(options, motion, target, CurtainAPI.Close.self, target.command, destination: 0, done: "closed")
            }
        }

        struct Stop: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Stop the curtain.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget
            @OptionGroup var motion: MotionOptions

            func validate() throws { try motion.check(target) }

            func run() async throws {
                try await runMotion(options, motion, target, CurtainAPI.Stop.self, target.command, destination: nil, done: "stopped")
            }
        }

        struct Move: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Move the curtain to a position, percent open.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget
            @OptionGroup var motion: MotionOptions
            // Taken as it is typed, so that `move -5` is answered as a position out of range rather
            // than as an unknown option.
            @Argument(parsing: .allUnrecognized, help: ArgumentHelp("0 (closed) to 100 (open).", valueName: "position"))
            var words: [String] = []

            var position: Int { words.count == 1 ? Int(words[0]) ?? -1 : -1 }

            func validate() throws {
                try motion.check(target)
                guard words.count == 1 else {
                    throw ValidationError(words.isEmpty ? "give the position: 0 (closed) to 100 (open)"
                                                        : "give one position, 0 (closed) to 100 (open), not \(words.joined(separator: " "))")
                }
                guard let n = Int(words[0]), (0...100).contains(n) else {
                    throw ValidationError("position \(words[0]) is out of range: use 0 (closed) to 100 (open)")
                }
            }

            func run() async throws {
                try await runMotion(options, motion, target, CurtainAPI.MoveTo.self, .init(position: position, name: target.name),
                                    destination: position, done: "at \(position)% open")
            }
        }

        struct Schedule: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Set the controller's schedule (it then opens and closes on its own).",
                discussion: "Omitted times keep the controller's current ones. The controller's clock is used.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget
            @Option(name: .customLong("open"), help: ArgumentHelp("Open time, HH:MM (24-hour).", valueName: "HH:MM"))
            var openTime: String?
            @Option(name: .customLong("close"), help: ArgumentHelp("Close time, HH:MM (24-hour).", valueName: "HH:MM"))
            var closeTime: String?
            @Flag(name: .customLong("no-open"), help: "Disable the open time.") var noOpen = false
            @Flag(name: .customLong("no-close"), help: "Disable the close time.") var noClose = false

            func validate() throws {
                for (name, value) in [("--open", openTime), ("--close", closeTime)] {
                    if let value, (try? CurtainTime(parsing: value)) == nil {
                        throw ValidationError("\(name) \(value) is not a time: use HH:MM (24-hour), e.g. 07:30")
                    }
                }
                if openTime == nil, closeTime == nil, !noOpen, !noClose {
                    throw ValidationError("give --open HH:MM and/or --close HH:MM (or --no-open / --no-close)")
                }
            }

            func run() async throws {
                try await withClient(options) { client in
                    // Unspecified parts keep what the controller reported.
                    var current: CurtainState? = nil
                    if target.name != "*" {
                        current = try await curtainCall(client, CurtainAPI.GetState.self, .init(name: target.name)).value.curtain
                    }
                    let open = openTime ?? current?.openSchedule?.time.description ?? "00:00"
                    let close = closeTime ?? current?.closeSchedule?.time.description ?? "00:00"
                    let openEnabled = noOpen ? false : (openTime != nil ? true : current?.openSchedule?.enabled ?? false)
                    let closeEnabled = noClose ? false : (closeTime != nil ? true : current?.closeSchedule?.enabled ?? false)
                    let r = try await curtainCall(client, CurtainAPI.SetSchedule.self, .init(
                        open: open, close: close, openEnabled: openEnabled, closeEnabled: closeEnabled, name: target.name))
                    if options.json { emit(JSONValue.object(r.sent).serialized()); return }
                    emit("Schedule sent: open \(open) (\(openEnabled ? "on" : "off")), close \(close) (\(closeEnabled ? "on" : "off")).")
                }
            }
        }

        struct Sync: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Ask the controller for its state and schedule again.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget

            func run() async throws {
                try await withClient(options) { client in
                    let r = try await curtainCall(client, CurtainAPI.Sync.self, target.command)
                    emit(options.json ? JSONValue.object(r.sent).serialized() : "Sync requested.")
                }
            }
        }

        struct Reconnect: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Drop the link and search for the curtain again.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var target: CurtainTarget

            func run() async throws {
                try await withClient(options) { client in
                    let r = try await curtainCall(client, CurtainAPI.Reconnect.self, target.command)
                    emit(options.json ? JSONValue.object(r.sent).serialized() : "Reconnecting; follow it with: roombridgectl curtain status")
                }
            }
        }
    }
}

// MARK: Plumbing

/// The method's name without its interface (`MoveTo`).
func shortName<M: VarlinkMethod>(_ method: M.Type) -> String {
    String(M.name.split(separator: ".").last ?? "")
}

/// Calls a method of `io.roombridge.Curtain`; the interface's errors become their message.
func curtainCall<M: VarlinkMethod>(_ client: VarlinkClient, _ method: M.Type, _ parameters: M.Parameters) async throws -> Answer<M> {
    do {
        return try Answer<M>(try await client.call(M.name, parameters: try JSONValueEncoder().encodeObject(parameters)))
    } catch let error as VarlinkError where error.name.hasPrefix("io.roombridge.Curtain.") {
        let reason = String(error.name.dropFirst("io.roombridge.Curtain.".count))
        let message = error.parameters["message"]?.stringValue ?? reason
        throw CtlError(exit: .refused, message: "curtain: \(message) [\(reason)]")
    } catch let error as VarlinkError {
        throw translate(error)
    } catch let error as CtlError {
        throw error
    } catch {
        throw CtlError(exit: .protocolError, message: "\(M.name) failed: \(error)")
    }
}

/// Prints a moving curtain's progress (``Render/progress(_:now:)``).
@Sendable func printProgress(_ c: CurtainState) {
    emit(Render.progress(c))
}

/// A group command's reply: each curtain's outcome; any refusal fails the command after all are shown.
func showOutcomes(_ sent: [String: JSONValue], _ options: GlobalOptions, _ method: String) throws {
    let outcomes = try decode(CurtainAPI.Outcomes.self, .object(sent)).outcomes ?? []
    emit(options.json ? JSONValue.object(sent).serialized() : Render.outcomes(outcomes, method))
    let refused = outcomes.filter { $0.outcome != .moving && $0.outcome != .done }
    if !refused.isEmpty {
        throw CtlError(exit: .refused, message: "curtain: " + refused.map(\.curtain).joined(separator: ", ")
                       + " did not take \(method)")
    }
}

/// Sends a motion command; with `--wait`, follows `io.roombridge.State.Watch` (opened before the
/// command, so no event is missed) until the motion has ended.
func runMotion<M: VarlinkMethod>(_ options: GlobalOptions, _ motion: RoomBridgeCtl.Curtain.MotionOptions, _ target: CurtainTarget,
                                 _ method: M.Type, _ parameters: M.Parameters, destination: Int?, done: String) async throws {
    try await withClient(options) { client in
        guard motion.wait else {
            let r = try await curtainCall(client, method, parameters)
            if r.sent["outcomes"] != nil {
                try showOutcomes(r.sent, options, shortName(method))
                return
            }
            let which = target.name.map { "curtain \($0)" } ?? "the curtain"
            emit(options.json ? JSONValue.object(r.sent).serialized() : "\(shortName(method)) accepted by \(which); follow it with: roombridgectl watch")
            return
        }
        let watcher = try await connect(options.socket)
        do {
            // Progress while it moves, a line per position: "40% → 100%, about 6 s to go".
            let progress = options.json ? nil : printProgress
            let final = try await waitForMotion(client: client, watcher: watcher, method: method, parameters: parameters,
                                                curtain: target.name, destination: destination, timeout: motion.timeout,
                                                progress: progress)
            await watcher.close()
            if options.json {
                emit(try JSONValueEncoder().encode(final).serialized())
            } else {
                // "Curtain at 40% open." says the position already; "open", "closed", "stopped" do not.
                let reached = final.position == destination || destination == nil
                let position = final.position.map { " (\($0)% open)" } ?? ""
                emit("Curtain \(reached ? done : "stopped")" + (reached && done.contains("%") ? "" : position) + ".")
            }
        } catch {
            await watcher.close()
            throw error
        }
    }
}

private func waitForMotion<M: VarlinkMethod>(client: VarlinkClient, watcher: VarlinkClient, method: M.Type, parameters: M.Parameters,
                                             curtain: String?, destination: Int?, timeout: Double,
                                             progress: (@Sendable (CurtainState) -> Void)?) async throws -> CurtainState {
    try await withThrowingTaskGroup(of: CurtainState?.self) { group in
        group.addTask {
            try await followMotion(client: client, watcher: watcher, method: method, parameters: parameters,
                                   curtain: curtain, destination: destination, progress: progress)
        }
        group.addTask {
            try await Task.sleep(for: .seconds(timeout))
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        guard let first else {
            throw CtlError(exit: .failure, message: "the motion did not end within \(Int(timeout)) s")
        }
        return first
    }
}

private func followMotion<M: VarlinkMethod>(client: VarlinkClient, watcher: VarlinkClient, method: M.Type, parameters: M.Parameters,
                                            curtain: String?, destination: Int?,
                                            progress: (@Sendable (CurtainState) -> Void)?) async throws -> CurtainState {
    var events = watcher.stream("io.roombridge.State.Watch").makeAsyncIterator()
    do {
        guard let first = try await events.next(), let state = try decode(StateAPI.Watch.Reply.self, .object(first)).state else {
            throw CtlError(exit: .protocolError, message: "Watch did not start with the state")
        }
        // Our request is the first curtain event whose lastRequest differs from the one before the call.
        // The named curtain, else the only one (the call itself refuses a missing name when there are several).
        let id = curtain ?? state.curtain.id
        if let curtain, !state.curtains.contains(where: { $0.id == curtain }) {
            throw CtlError(exit: .usage, message: "--wait follows one curtain, and \(curtain) is none: name one curtain, "
                           + "or leave --wait out for a group")
        }
        let before = state.curtains.first { $0.id == id }?.lastRequest ?? state.curtain.lastRequest
        _ = try await curtainCall(client, method, parameters)
        var sawRequest = false
        var sawMotion = false
        var shown: Int?
        // Events come in order: first our request (lastRequest set), then what the controller notifies.
        while let reply = try await events.next() {
            guard let event = try? decode(StateAPI.Watch.Reply.self, .object(reply)).event,
                  case .curtain(let c) = event.payload, id == nil || c.id == nil || c.id == id else { continue }
            if !sawRequest {
                guard let request = c.lastRequest, request != before,
                      request.kind.rawValue == requestKind(shortName(method)) else { continue }
                sawRequest = true
            }
            if !c.connection.acceptsCommands {
                throw CtlError(exit: .failure, message: "the curtain link was lost during the motion (\(c.summary))")
            }
            if c.motion != .idle {
                if c.position != shown {
                    shown = c.position
                    progress?(c)
                }
                sawMotion = true
                continue
            }
            if sawMotion || destination == nil || c.position == destination { return c }
        }
        throw CtlError(exit: .protocolError, message: "roombridged ended the stream")
    } catch let error as VarlinkError {
        throw translate(error)
    }
}

private func requestKind(_ method: String) -> String {
    method == "MoveTo" ? "moveTo" : method.lowercased()
}

/// `--name`: which curtain a command is for.
struct CurtainTarget: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The curtain (its name in the configuration), or a group of them ([curtain.groups]); needed when several are "
        + "configured. 'all' or '*': every curtain.",
        valueName: "NAME"))
    var name: String?

    /// The parameters of a command without arguments (`Open`, `Sync`, …).
    var command: CurtainAPI.Target { CurtainAPI.Target(name: name) }
}

extension Render {
    /// A moving curtain's progress: "40% → 100%, about 6 s to go" (the time once its speed is known).
    static func progress(_ c: CurtainState, now: Date = Date()) -> String {
        let at = c.position.map { "\($0)%" } ?? "?"
        let to = c.target.map { " → \($0)%" } ?? ""
        let left = c.finishesAt.map { ", about \(max(0, Int($0.timeIntervalSince(now).rounded()))) s to go" } ?? ""
        return "  \(c.motion) \(at)\(to)\(left)"
    }

    /// What a group command did, a line per curtain: "left      moving", "right     unreachable: …".
    static func outcomes(_ outcomes: [CurtainOutcome], _ method: String) -> String {
        let width = outcomes.map { DisplayWidth.of($0.curtain) }.max() ?? 0
        return outcomes.map { o in
            let battery = o.lowBattery ? " (battery low: \(o.battery ?? 0)%)" : ""
            let what = o.message.map { "\(o.outcome.rawValue): \($0)" } ?? o.outcome.rawValue
            return DisplayWidth.pad(o.curtain, to: width) + "  " + what + battery
        }.joined(separator: "\n")
    }

    /// The curtain in a few lines.
    static func curtain(_ c: CurtainState) -> String {
        var lines = ["Curtain:   " + c.summary + ((c.name ?? c.address).map { "  [\($0)]" } ?? "")]
        if c.connection.acceptsCommands, let t = c.target, c.motion != .idle { lines.append("  target    \(t)% open") }
        if c.openSchedule != nil || c.closeSchedule != nil {
            lines.append("  schedule  open \(entry(c.openSchedule))  close \(entry(c.closeSchedule))")
        }
        if let r = c.lastRequest {
            lines.append("  last request \(request(r)) at \(time(r.at))" + (r.by.map { " by \($0)" } ?? "")
                         + (r.refused.map { ", refused: \($0)" } ?? ""))
        }
        if let e = c.lastError, c.connection.acceptsCommands { lines.append("  last error: \(e)") }
        return lines.joined(separator: "\n")
    }
}

extension Render {
    /// Several curtains, one aligned row each: name, connection, motion, position, the device and its last error.
    static func curtainTable(_ curtains: [CurtainState]) -> String {
        Table.render(["NAME", "CONNECTION", "MOTION", "POSITION", "PROFILE", "DEVICE", "NOTE"], curtains.map { c in
            let note = c.manualOperationActive ? "wall switch in use"
                : c.lastError ?? c.battery.map { "battery \($0)%" } ?? ""
            return [c.id ?? "?", c.connection.rawValue, c.connection.acceptsCommands ? c.motion.description : "-",
                    c.position.map { "\($0)% open" } ?? "-", c.profile ?? "-", c.name ?? c.address ?? "-", note]
        })
    }
}
