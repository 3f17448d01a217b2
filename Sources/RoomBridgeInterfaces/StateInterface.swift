import RoomBridgeCore
import Synchronization
import Varlink

/// `io.roombridge.State`: the whole state, a stream of its changes, and the log level.
public struct StateInterface: VarlinkImmediateInterface {
    public let name = "io.roombridge.State"
    public var interfaceDescription: String { Self.idl }

    private let state: SystemState
    private let authorizer: Authorizer
    private let setLogLevel: @Sendable (String) -> Void
    private let setup: DaemonSetup?
    private let cache = EncodedEventCache()
    private let stateCache = EncodedStateCache()

    /// - Parameters:
    ///   - setLogLevel: applies a new log level (one of the IDL's level names).
    ///   - setup: what the daemon was started with, for `GetConfiguration` (nil: not reported).
    public init(state: SystemState, authorizer: Authorizer, setup: DaemonSetup? = nil,
                setLogLevel: @escaping @Sendable (String) -> Void) {
        self.state = state
        self.authorizer = authorizer
        self.setup = setup
        self.setLogLevel = setLogLevel
    }

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        switch call.methodName {
        case "GetState":
            // No wait for the actor, and no encoding while the state is unchanged.
            try await replies.reply(encodedParameters: try stateCache.encoded(state.latestSnapshot()), continues: false)
        case "GetConfiguration":
            guard let setup else { throw VarlinkError.methodNotImplemented(call.method) }
            try await replies.reply(["configuration": try WireCoding.encode(setup)], continues: false)
        case "Watch":
            guard call.more else { throw VarlinkError.expectedMore }
            let since = try Parameters(call).optionalInt("since")
            guard (since ?? 0) >= 0 else { throw VarlinkError.invalidParameter("since") }
            try await watch(since: since.map(UInt64.init), replies)
        case "SetLogLevel":
            try authorizer.requireMutation(context)
            guard let level = call.parameters["level"]?.stringValue else {
                throw VarlinkError.invalidParameter("level")
            }
            setLogLevel(level)
            try await replies.reply([:], continues: false)
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }

    /// `GetState` while its serialization is cached: answered on the connection's own thread.
    public func immediateReply(to call: VarlinkCall, context: VarlinkCallContext) -> VarlinkReply? {
        guard call.methodName == "GetState", let bytes = stateCache.cached(state.latestSnapshot()) else { return nil }
        return VarlinkReply(encodedParameters: bytes)
    }

    /// `Watch`: the state, or with `since` still in the replay ring `resumedAfter` and the
    /// missed events; then every event as it happens.
    private func watch(since: UInt64?, _ replies: any VarlinkReplySink) async throws {
        let subscription = await state.subscribe(since: since)
        if let after = subscription.resumedAfter {
            try await replies.reply(["resumedAfter": .int(Int64(after))], continues: true)
        } else {
            try await replies.reply(["state": try WireCoding.encode(subscription.snapshot)], continues: true)
        }
        do {
            for try await event in subscription.events {
                try await replies.reply(encodedParameters: try cache.encoded(event), continues: true)
            }
        } catch let error as SubscriptionError {
            switch error {
            case .tooSlow(let limit):
                throw VarlinkError("io.roombridge.State.SubscriberTooSlow",
                                   parameters: ["bufferLimit": .int(Int64(limit))])
            case .shuttingDown:
                throw VarlinkError("io.roombridge.State.ShuttingDown")
            }
        }
    }
}

/// Serializes each event once (`{"event":…}`), however many subscribers send it.
final class EncodedEventCache: Sendable {
    private let recent = Mutex<[(seq: UInt64, bytes: [UInt8])]>([])
    private let capacity = 32

    func encoded(_ event: Event) throws -> [UInt8] {
        if let hit = recent.withLock({ $0.last { $0.seq == event.seq }?.bytes }) { return hit }
        let bytes = JSONValue.object(["event": try WireCoding.encode(event)]).serializedBytes()
        recent.withLock { list in
            if list.contains(where: { $0.seq == event.seq }) { return }
            list.append((event.seq, bytes))
            if list.count > capacity { list.removeFirst(list.count - capacity) }
        }
        return bytes
    }
}

/// The serialized `GetState` reply parameters (`{"state":…}`) for the latest revision of the
/// state; serialized again only when the state changed (or while it depends on the time).
final class EncodedStateCache: Sendable {
    private let latest = Mutex<(revision: UInt64, bytes: [UInt8])?>(nil)

    /// The bytes for `versioned` if they are cached.
    func cached(_ versioned: SystemState.Versioned) -> [UInt8]? {
        guard !versioned.timeDependent, let hit = latest.withLock({ $0 }), hit.revision == versioned.revision else { return nil }
        return hit.bytes
    }

    func encoded(_ versioned: SystemState.Versioned) throws -> [UInt8] {
        if let hit = cached(versioned) { return hit }
        let bytes = JSONValue.object(["state": try WireCoding.encode(versioned.snapshot)]).serializedBytes()
        if !versioned.timeDependent {
            latest.withLock { current in
                if (current?.revision ?? 0) <= versioned.revision { current = (versioned.revision, bytes) }
            }
        }
        return bytes
    }
}
