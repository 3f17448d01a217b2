import RoomBridgeCore
import Synchronization
import Varlink
import RoomBridgeAPI

/// `io.roombridge.State`: the whole state, a stream of its changes, and the log level.
public struct StateInterface: VarlinkImmediateInterface {
    public let name = "io.roombridge.State"
    public var interfaceDescription: String { Self.idl }
    /// The interface's description, the contract's text (`RoomBridgeAPI`).
    public static let idl = InterfaceIDL.state

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
        case "GetTimeline":
            try await replies.reply(["timeline": try WireCoding.encode(await state.timeline())], continues: false)
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
    /// missed events; then every event as it happens. The state hands each event to the
    /// connection's queue itself, with no task per watcher (``WatchFeed``), so the transport must
    /// post replies (the socket server does; an in-process call without a poster is refused).
    private func watch(since: UInt64?, _ replies: any VarlinkReplySink) async throws {
        guard let poster = replies.poster else { throw VarlinkError.methodNotImplemented("io.roombridge.State.Watch") }
        let feed = WatchFeed(poster: poster, cache: cache)
        let subscription = await state.subscribe(since: since, receiver: feed.receiver)
        let end: WatchFeed.End
        do {
            if let after = subscription.resumedAfter {
                try await replies.reply(["resumedAfter": .int(Int64(after))], continues: true)
            } else {
                try await replies.reply(["state": try WireCoding.encode(subscription.snapshot)], continues: true)
            }
            // The first reply is queued: the events held meanwhile follow it, then the live ones.
            end = await feed.open(bufferLimit: subscription.bufferLimit)
        } catch {
            await state.unsubscribe(subscription.id)
            throw error
        }
        await state.unsubscribe(subscription.id)
        switch end {
        case .ended(let error): throw Self.varlinkError(error)
        case .encodingFailed(let error): throw error
        case .closed, .cancelled: throw CancellationError()
        }
    }

    private static func varlinkError(_ error: SubscriptionError) -> VarlinkError {
        switch error {
        case .tooSlow(let limit):
            VarlinkError("io.roombridge.State.SubscriberTooSlow", parameters: ["bufferLimit": .int(Int64(limit))])
        case .shuttingDown:
            VarlinkError("io.roombridge.State.ShuttingDown")
        }
    }
}

/// One `Watch` call's feed: takes the state's events on the state's executor and posts each to
/// the connection (serialized once for all watchers), holding them until the call's first
/// reply is queued.
final class WatchFeed: Sendable {
    enum End: Sendable {
        /// The state ended the subscription.
        case ended(SubscriptionError)
        case encodingFailed(any Error)
        /// The connection closed.
        case closed
        /// The call's task was cancelled (the client hung up).
        case cancelled
    }

    private struct State {
        var held: [Event] = []
        /// Set by ``open(bufferLimit:)``: events are posted from then on.
        var bufferLimit: Int?
        var end: End?
        var waiter: CheckedContinuation<End, Never>?
    }

    private let poster: any VarlinkReplyPoster
    private let cache: EncodedEventCache
    private let state = Mutex(State())

    init(poster: any VarlinkReplyPoster, cache: EncodedEventCache) {
        self.poster = poster
        self.cache = cache
    }

    var receiver: EventReceiver {
        EventReceiver(receive: { self.receive($0) }, flush: { self.poster.flush() }, end: { self.finish(.ended($0)) })
    }

    private func receive(_ event: Event) -> EventReceiver.Delivery {
        var ended: (End, CheckedContinuation<End, Never>?)?
        let delivery = state.withLock { s -> EventReceiver.Delivery in
            if s.end != nil { return .gone }
            guard let limit = s.bufferLimit else {
                s.held.append(event)
                return .accepted
            }
            let delivery = post(event, limit: limit, &s)
            if let end = s.end { ended = (end, s.waiter.take()) }
            return delivery
        }
        if let (end, waiter) = ended { waiter?.resume(returning: end) }
        return delivery
    }

    /// Posts `event`; on failure records why in `s.end` (except `.tooSlow`, which the state ends).
    private func post(_ event: Event, limit: Int, _ s: inout State) -> EventReceiver.Delivery {
        let framed: [UInt8]
        do { framed = try cache.framed(event) } catch {
            s.end = .encodingFailed(error)
            return .gone
        }
        switch poster.post(framed: framed, limit: limit) {
        case .queued: return .accepted
        case .tooSlow: return .tooSlow
        case .closed:
            s.end = .closed
            return .gone
        }
    }

    /// Posts the held events, then every event as it comes; returns when the feed ends.
    func open(bufferLimit: Int) async -> End {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<End, Never>) in
                let end = state.withLock { s -> End? in
                    if s.end == nil {
                        s.bufferLimit = bufferLimit
                        for event in s.held {
                            if post(event, limit: bufferLimit, &s) == .tooSlow { s.end = .ended(.tooSlow(bufferLimit: bufferLimit)) }
                            if s.end != nil { break }
                        }
                        s.held = []
                        poster.flush()
                    }
                    if s.end == nil { s.waiter = continuation }
                    return s.end
                }
                if let end { continuation.resume(returning: end) }
            }
        } onCancel: {
            finish(.cancelled)
        }
    }

    private func finish(_ end: End) {
        let waiter = state.withLock { s -> CheckedContinuation<End, Never>? in
            guard s.end == nil else { return nil }
            s.end = end
            return s.waiter.take()
        }
        waiter?.resume(returning: end)
    }
}

/// Serializes each event once, as a whole continuing `Watch` reply (`{"event":…}` framed, with
/// its NUL), however many subscribers send it.
final class EncodedEventCache: Sendable {
    private let recent = Mutex<[(seq: UInt64, framed: [UInt8])]>([])
    private let capacity = 32

    func framed(_ event: Event) throws -> [UInt8] {
        if let hit = recent.withLock({ $0.last { $0.seq == event.seq }?.framed }) { return hit }
        let parameters = JSONValue.object(["event": try WireCoding.encode(event)]).serializedBytes()
        let framed = VarlinkReply(encodedParameters: parameters, continues: true).framedBytes()
        return recent.withLock { list in
            if let hit = list.last(where: { $0.seq == event.seq }) { return hit.framed }
            list.append((event.seq, framed))
            if list.count > capacity { list.removeFirst(list.count - capacity) }
            return framed
        }
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
