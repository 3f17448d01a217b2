import Foundation
import Lending
import Varlink
import RoomBridgeAPI

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

    public static let idl = InterfaceIDL.outbox

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
                TargetCounts(counts[name]!, configured: targets.contains(name))
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
            var reply: [String: JSONValue] = ["entries": try WireCoding.encode(page.items.map(Entry.init))]
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

extension OutboxInterface {
    /// `io.roombridge.Outbox` type `TargetCounts`.
    public struct TargetCounts: Codable, Sendable, Equatable {
        public var target: String
        public var configured: Bool
        public var pending: Int
        public var failing: Int
        public var delivered: Int
        public var dropped: Int

        public init(_ c: OutboxCounts, configured: Bool) {
            target = c.target
            self.configured = configured
            pending = c.pending
            failing = c.failing
            delivered = c.delivered
            dropped = c.dropped
        }
    }

    /// `io.roombridge.Outbox` type `Entry`: an outbox entry without its payload, times in the wire's one form.
    public struct Entry: Codable, Sendable, Equatable {
        public var seq: Int64
        public var eventId: String
        public var target: String
        public var kind: OutboxEventKind
        public var deviceId: String
        public var state: OutboxState
        public var attempts: Int
        public var createdAt: Date
        public var nextAttemptAt: Date
        public var lastError: String?
        public var deliveredAt: Date?

        public init(_ e: OutboxEntry) {
            seq = e.seq
            eventId = e.eventId.uuidString.lowercased()
            target = e.target
            kind = e.kind
            deviceId = e.deviceId
            state = e.state
            attempts = e.attempts
            createdAt = e.createdAt
            nextAttemptAt = e.nextAttemptAt
            lastError = e.lastError
            deliveredAt = e.deliveredAt
        }
    }
}
