import RoomBridgeCore
import Synchronization
import Varlink

/// `io.roombridge.State`: the whole state, a stream of its changes, and the log level.
public struct StateInterface: VarlinkInterface {
    public let name = "io.roombridge.State"
    public var interfaceDescription: String { Self.idl }

    private let state: SystemState
    private let authorizer: Authorizer
    private let setLogLevel: @Sendable (String) -> Void
    private let setup: DaemonSetup?
    private let cache = EncodedEventCache()

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
            let snapshot = await state.snapshot()
            try await replies.reply(["state": try WireCoding.encode(snapshot)], continues: false)
        case "GetConfiguration":
            guard let setup else { throw VarlinkError.methodNotImplemented(call.method) }
            try await replies.reply(["configuration": try WireCoding.encode(setup)], continues: false)
        case "Watch":
            guard call.more else { throw VarlinkError.expectedMore }
            try await watch(replies)
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

    private func watch(_ replies: any VarlinkReplySink) async throws {
        let subscription = await state.subscribe()
        try await replies.reply(["state": try WireCoding.encode(subscription.snapshot)], continues: true)
        do {
            for try await event in subscription.events {
                try await replies.reply(["event": try cache.encoded(event)], continues: true)
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

/// Encodes each event once, however many subscribers send it.
final class EncodedEventCache: Sendable {
    private let recent = Mutex<[(seq: UInt64, value: JSONValue)]>([])
    private let capacity = 32

    func encoded(_ event: Event) throws -> JSONValue {
        if let hit = recent.withLock({ $0.first { $0.seq == event.seq }?.value }) { return hit }
        let value = try WireCoding.encode(event)
        recent.withLock { list in
            list.append((event.seq, value))
            if list.count > capacity { list.removeFirst(list.count - capacity) }
        }
        return value
    }
}
