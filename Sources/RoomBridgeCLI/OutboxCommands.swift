import ArgumentParser
import Foundation
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
            let targets = try await call(client, "io.roombridge.Outbox.Status")["targets"]?.arrayValue ?? []
            printList(targets, json: options.json, empty: "no outbox targets are configured ([outbox.targets.NAME])",
                      headers: ["TARGET", "PENDING", "FAILING", "DELIVERED", "DROPPED"]) { t in
                [Table.s(t, "target") + (t["configured"]?.boolValue == false ? " (not configured)" : ""),
                 Table.s(t, "pending"), Table.s(t, "failing"), Table.s(t, "delivered"), Table.s(t, "dropped")]
            }
        }
    }
}

struct OutboxList: AsyncParsableCommand {
    enum State: String, ExpressibleByArgument, CaseIterable { case pending, delivered, dropped }
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Outbox entries, newest first.")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only entries in this state: pending, delivered or dropped.") var state: State?
    @Option(name: .long, help: "At most this many (default 50).") var limit: Int = 50

    func run() async throws {
        var p: [String: JSONValue] = ["limit": .int(Int64(max(1, min(limit, 1000))))]
        if let state { p["state"] = .string(state.rawValue) }
        try await withClient(options) { client in
            let entries = try await call(client, "io.roombridge.Outbox.List", p)["entries"]?.arrayValue ?? []
            printList(entries, json: options.json, empty: "the outbox is empty",
                      headers: ["SEQ", "TARGET", "KIND", "DEVICE", "STATE", "ATTEMPTS", KioskTime.current.header("CREATED"), KioskTime.current.header("NEXT"), "LAST ERROR"]) { e in
                [Table.s(e, "seq"), Table.s(e, "target"), Table.s(e, "kind"), Table.s(e, "deviceId"), Table.s(e, "state"),
                 Table.s(e, "attempts"), Table.time(e, "createdAt"),
                 e["state"]?.stringValue == "pending" ? Table.time(e, "nextAttemptAt") : "-", Table.s(e, "lastError", "-")]
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
        try await outboxAction(options, "Retry", seq, done: "outbox entry \(seq) will be sent again now")
    }
}

struct OutboxDrop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drop", abstract: "Drop a pending entry: it is never sent, and the device's later entries go on.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The entry's SEQ.") var seq: Int

    func run() async throws {
        try await outboxAction(options, "Drop", seq,
                               done: "outbox entry \(seq) dropped; it will not be sent (outbox retry \(seq) sends it after all)")
    }
}

/// Calls `io.roombridge.Outbox.METHOD(seq)` and says what was done.
private func outboxAction(_ options: GlobalOptions, _ method: String, _ seq: Int, done: String) async throws {
    try await withClient(options) { client in
        _ = try await call(client, "io.roombridge.Outbox.\(method)", ["seq": .int(Int64(seq))])
        emit(done)
    }
}
