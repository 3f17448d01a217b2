import ArgumentParser
import Foundation
import Lending
import RoomBridgeAPI
import Varlink

/// `roombridgectl outbox`: what waits for other systems (io.roombridge.Outbox).
struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the outbox: lending events waiting for, or delivered to, other systems; retry or drop an entry.",
        subcommands: [OutboxStatus.self, OutboxList.self, OutboxRetry.self, OutboxDrop.self],
        defaultSubcommand: OutboxStatus.self)
}

struct OutboxStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Pending (and failing), delivered and dropped entries per target.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await withClient(options) { client in
            let targets = try await call(client, OutboxAPI.Status.self).listed(\.targets)
            printList(targets, json: options.json, empty: "no outbox targets are configured ([outbox.targets.NAME])",
                      headers: ["TARGET", "PENDING", "FAILING", "DELIVERED", "DROPPED"]) { t in
                [t.target + (t.configured ? "" : " (not configured)"),
                 String(t.pending), String(t.failing), String(t.delivered), String(t.dropped)]
            }
        }
    }
}

struct OutboxList: AsyncParsableCommand {
    enum State: String, ExpressibleByArgument, CaseIterable {
        case pending, delivered, dropped

        var outboxState: OutboxState {
            switch self {
            case .pending: .pending
            case .delivered: .delivered
            case .dropped: .dropped
            }
        }
    }
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Outbox entries, newest first.")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only entries in this state: pending, delivered or dropped.") var state: State?
    @Option(name: .long, help: "At most this many (default 50).") var limit: Int = 50

    func run() async throws {
        let p = OutboxAPI.List.Parameters(state: state?.outboxState, limit: max(1, min(limit, 1000)))
        try await withClient(options) { client in
            let entries = try await call(client, OutboxAPI.List.self, p).listed(\.entries)
            printList(entries, json: options.json, empty: "the outbox is empty",
                      headers: ["SEQ", "TARGET", "KIND", "DEVICE", "STATE", "ATTEMPTS", KioskTime.current.header("CREATED"), KioskTime.current.header("NEXT"), "LAST ERROR"]) { e in
                [String(e.seq), e.target, e.kind.rawValue, e.deviceId, e.state.rawValue, String(e.attempts), Table.time(e.createdAt),
                 e.state == .pending ? Table.time(e.nextAttemptAt) : "-", e.lastError ?? "-"]
            }
        }
    }
}

struct OutboxRetry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Send a pending or dropped entry again now (SEQ from outbox list).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The entry's SEQ.") var seq: Int

    func run() async throws {
        try await outboxAction(options, OutboxAPI.Retry.self, seq, done: "outbox entry \(seq) will be sent again now")
    }
}

struct OutboxDrop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drop", abstract: "Drop a pending entry: it is never sent, and the device's later entries go on.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The entry's SEQ.") var seq: Int

    func run() async throws {
        try await outboxAction(options, OutboxAPI.Drop.self, seq,
                               done: "outbox entry \(seq) dropped; it will not be sent (outbox retry \(seq) sends it after all)")
    }
}

/// Calls `io.roombridge.Outbox.Retry` or `.Drop` for entry `seq` and says what was done.
private func outboxAction<M: VarlinkMethod>(_ options: GlobalOptions, _ method: M.Type, _ seq: Int, done: String) async throws
    where M.Parameters == OutboxAPI.BySeq {
    try await withClient(options) { client in
        _ = try await call(client, method, OutboxAPI.BySeq(seq: Int64(seq)))
        emit(done)
    }
}
