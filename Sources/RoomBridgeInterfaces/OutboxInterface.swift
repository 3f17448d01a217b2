import Foundation
import Lending
import RoomBridgeAPI
import Varlink

/// `io.roombridge.Outbox`: the lending events waiting for, or delivered to, other systems; an
/// administrator retries or drops an entry.
public struct OutboxInterface: VarlinkInterface {
    public let name = "io.roombridge.Outbox"
    public var interfaceDescription: String { Self.idl }

    private let store: any InventoryStore
    private let configuredTargets: @Sendable () -> [String]
    private let authorizer: Authorizer
    private let now: @Sendable () -> Date

    /// - Parameter targets: the configured targets' names (listed even before their first entry),
    ///   read at each call, so that a reloaded configuration shows.
    public init(store: any InventoryStore, targets: @autoclosure @escaping @Sendable () -> [String], authorizer: Authorizer,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.configuredTargets = targets
        self.authorizer = authorizer
        self.now = now
    }

    public static let idl = """
        # The outbox: every lend, return, renewal and overdue event, written in the same
        # transaction as the change, waits here for each configured target until it is delivered
        # (HTTP POST, retried with backoff). Retry and Drop need the authorised group; others get
        # io.roombridge.State.PermissionDenied. Times are ISO 8601 UTC strings.
        interface io.roombridge.Outbox

        # How many entries of a target are in each state; failing: pending entries whose last
        # attempt failed. configured: false for a target no longer in the configuration.
        type TargetCounts (
          target: string,
          configured: bool,
          pending: int,
          failing: int,
          delivered: int,
          dropped: int
        )

        # One event for one target. eventId is the Idempotency-Key receivers deduplicate by.
        # due and digest are reminders; a digest's deviceId is empty.
        type Entry (
          seq: int,
          eventId: string,
          target: string,
          kind: (lend, return, renew, overdue, due, digest),
          deviceId: string,
          state: (pending, delivered, dropped),
          attempts: int,
          createdAt: string,
          nextAttemptAt: string,
          lastError: ?string,
          deliveredAt: ?string
        )

        # Counts per target, by name.
        method Status() -> (targets: []TargetCounts)

        # Entries, newest first; state filters. Paged like io.roombridge.Lending's lists.
        method List(state: ?string, limit: ?int, cursor: ?string) -> (entries: []Entry, nextCursor: ?string)

        # Sends a pending or dropped entry again now (the device's later entries wait for it).
        method Retry(seq: int) -> ()

        # Drops a pending entry: it is never sent, and the device's later entries go on.
        method Drop(seq: int) -> ()

        """ + LendingWireErrors.idl

    static let mutations: Set<String> = ["Retry", "Drop"]

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        if Self.mutations.contains(call.methodName) { try authorizer.requireMutation(context) }
        let reply = try await LendingWireErrors.mapping(name) { try await self.answer(call) }
        try await replies.reply(reply, continues: false)
    }

    private func answer(_ call: VarlinkCall) async throws -> [String: JSONValue] {
        let p = Parameters(call)
        switch call.methodName {
        case "Status":
            var counts = Dictionary(try await store.outboxCounts().map { ($0.target, $0) }, uniquingKeysWith: { $1 })
            let targets = configuredTargets()
            for target in targets where counts[target] == nil { counts[target] = OutboxCounts(target: target) }
            return ["targets": try WireCoding.encode(counts.keys.sorted().map { name in
                OutboxAPI.TargetCounts(counts[name]!, configured: targets.contains(name))
            })]
        case "List":
            var state: OutboxState?
            if let text = try p.optionalString("state") {
                guard let s = OutboxState(rawValue: text) else {
                    throw LendingError.invalidField("state", reason: "\"\(text)\" is not one of pending, delivered, dropped")
                }
                state = s
            }
            let page = try await store.outboxEntries(state: state, page: try p.page())
            var reply: [String: JSONValue] = ["entries": try WireCoding.encode(page.items.map(OutboxAPI.Entry.init))]
            if let next = page.nextCursor { reply["nextCursor"] = .string(next) }
            return reply
        case "Retry":
            try await store.retryOutbox(seq: try seq(p), now: now())
            return [:]
        case "Drop":
            try await store.dropOutbox(seq: try seq(p))
            return [:]
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }

    private func seq(_ p: Parameters) throws -> Int64 {
        guard let seq = try p.optionalInt("seq") else { throw VarlinkError.invalidParameter("seq") }
        return Int64(seq)
    }
}
