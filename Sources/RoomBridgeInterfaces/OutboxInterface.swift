import Foundation
import Lending
import RoomBridgeAPI
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
