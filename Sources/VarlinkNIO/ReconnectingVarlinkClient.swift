import Logging
import Varlink

/// Whether a call may be sent again after its connection broke before the answer came.
public enum VarlinkCallRetry: Sendable, Hashable {
    /// A read, or a change that has the same effect when repeated: sent again, once, on a new
    /// connection whenever the old one broke before the answer.
    case idempotent
    /// A change: sent again only when it cannot have reached the service (it was never
    /// written). When it was written and no answer came, the call fails with
    /// ``VarlinkClientError/outcomeUnknown(method:)``: the caller must say "not sure it was
    /// recorded, look before trying again" rather than guess.
    case notIfSent
}

/// What a subscription kept open by ``ReconnectingVarlinkClient/resubscribing(_:parameters:retrying:)`` yields.
public enum VarlinkSubscriptionEvent: Sendable {
    /// One reply of the call.
    case reply(VarlinkClient.Parameters)
    /// The connection broke, or could not be opened (`error` says why); the call is opened
    /// again after `retryIn`.
    case interrupted(any Error, retryIn: Duration)
}

/// The rule every long-lived client of a Varlink service follows (roombridge-web,
/// `roombridgectl watch`): calls on one pipelined connection, opened on first use and opened
/// again whenever the service closed it — its idle timeout, a restart, a reply too large.
///
/// - A connection the service has already closed is never used: the next call connects anew.
/// - A change (``VarlinkCallRetry/notIfSent``) is not sent on a connection that has been quiet
///   for ``quietBeforeChange`` or longer, which the service may be closing at that very moment
///   (its idle timeout); it gets a fresh connection instead, so that the one case where a
///   change's outcome is unknown stays a real failure and not a timer's race.
/// - A call whose connection broke is sent again once as its ``VarlinkCallRetry`` allows.
/// - Streams (`more` calls) get a connection each, see ``subscribe(_:parameters:)``.
public actor ReconnectingVarlinkClient {
    public nonisolated let path: String
    /// How long a connection may have been quiet before a change is sent on a fresh one.
    public nonisolated let quietBeforeChange: Duration
    private let logger: Logger
    private var client: VarlinkClient?
    /// The connection being opened, which every call that needs one meanwhile waits for: a burst of calls
    /// opens one connection, not one each.
    private var connecting: Task<VarlinkClient, any Error>?
    private var lastUsed = ContinuousClock.now
    /// Connections opened so far (for tests and the log).
    public private(set) var connectionsOpened = 0
    /// Whether the pooled connection is open now (the service may close it at any time).
    public var isConnected: Bool { client?.isActive ?? false }

    public init(path: String, quietBeforeChange: Duration = .seconds(1), logger: Logger = Logger(label: "varlink.client")) {
        self.path = path
        self.quietBeforeChange = quietBeforeChange
        self.logger = logger
    }

    private func connection(for retry: VarlinkCallRetry) async throws -> VarlinkClient {
        if let client, client.isActive {
            let quiet = ContinuousClock.now - lastUsed
            if retry == .idempotent || quiet < quietBeforeChange { return client }
            // Left to the calls still on it, if any; it closes when the last one lets go.
            drop(client)
        }
        if let connecting { return try await connecting.value }
        let opening = Task { [path] in try await VarlinkClient.connect(path: path) }
        connecting = opening
        defer { connecting = nil }
        let fresh = try await opening.value
        connectionsOpened += 1
        client = fresh
        return fresh
    }

    private func drop(_ broken: VarlinkClient) {
        if client === broken { client = nil }
    }

    /// Calls `method` and returns the reply's parameters, following the rule above.
    /// - Throws: ``VarlinkError`` (the service's answer), ``VarlinkClientError`` (including
    ///   ``VarlinkClientError/outcomeUnknown(method:)``), or `CancellationError`.
    public func call(_ method: String, parameters: VarlinkClient.Parameters = [:],
                     retry: VarlinkCallRetry) async throws -> VarlinkClient.Parameters {
        var tries = 0
        while true {
            tries += 1
            let client = try await connection(for: retry)
            lastUsed = .now
            do {
                let reply = try await client.call(method, parameters: parameters)
                lastUsed = .now
                return reply
            } catch let error as VarlinkClientError {
                drop(client)
                switch error {
                case .closedBeforeSending where tries == 1:
                    logger.debug("\(method) was not sent: the connection had closed; sending it on a new one")
                case .connectionClosed where retry == .idempotent && tries == 1:
                    logger.info("the connection to \(path) closed before \(method) was answered; asking again on a new one")
                case .connectionClosed where retry == .notIfSent:
                    logger.notice("the connection to \(path) closed after \(method) was sent, before its answer")
                    throw VarlinkClientError.outcomeUnknown(method: method)
                default:
                    throw error
                }
            } catch let error as VarlinkError where error.closesConnection {
                // The service closes the connection after this answer.
                drop(client)
                throw error
            }
        }
    }

    /// Calls `method` with Encodable parameters and decodes the reply, following the rule above.
    public func call<P: Encodable & Sendable, R: Decodable & Sendable>(
        _ method: String, _ parameters: P, returning type: R.Type, retry: VarlinkCallRetry
    ) async throws -> R {
        let reply = try await call(method, parameters: JSONValueEncoder().encodeObject(parameters), retry: retry)
        do {
            return try JSONValueDecoder().decode(R.self, from: reply)
        } catch let error as DecodingError {
            throw VarlinkClientError.protocolError("reply of \(method): field '\(JSONValueDecoder.fieldPath(of: error))' does not match \(R.self)")
        }
    }

    /// Calls a method of the contract (``VarlinkMethod``): its typed parameters, its typed reply.
    public func call<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters, retry: VarlinkCallRetry) async throws -> M.Reply {
        try await call(M.name, parameters, returning: M.Reply.self, retry: retry)
    }

    /// Opens a connection of its own for the `more` call `method` and returns it with its
    /// replies (a stream keeps its connection to itself; closing the client ends it).
    public nonisolated func subscribe(
        _ method: String, parameters: VarlinkClient.Parameters = [:]
    ) async throws -> (VarlinkClient, AsyncThrowingStream<VarlinkClient.Parameters, any Error>) {
        let watcher = try await VarlinkClient.connect(path: path)
        return (watcher, watcher.stream(method, parameters: parameters))
    }

    /// Keeps the `more` call `method` open until the iterating task is cancelled: when its
    /// connection breaks, or cannot be opened, the stream yields ``VarlinkSubscriptionEvent/interrupted(_:retryIn:)``
    /// and opens the call again after a pause (0.2 s, doubling to 5 s; back to 0.2 s once a
    /// reply arrived). `parameters` is asked before each opening, so that the caller can resume
    /// where it was (`Watch(since:)`). An error reply ends the stream by throwing it, unless
    /// `retrying` says the service will take the call again later (it is shutting down).
    public nonisolated func resubscribing(
        _ method: String,
        parameters: @escaping @Sendable () async -> VarlinkClient.Parameters,
        retrying: @escaping @Sendable (VarlinkError) -> Bool = { _ in false }
    ) -> AsyncThrowingStream<VarlinkSubscriptionEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var pause = Duration.milliseconds(200)
                while !Task.isCancelled {
                    var reason: any Error = VarlinkClientError.connectionClosed
                    do {
                        let (client, replies) = try await subscribe(method, parameters: await parameters())
                        defer { Task { await client.close() } }
                        for try await reply in replies {
                            pause = .milliseconds(200)
                            continuation.yield(.reply(reply))
                        }
                    } catch let error as VarlinkError where !retrying(error) {
                        continuation.finish(throwing: error)
                        return
                    } catch is CancellationError {
                        break
                    } catch {
                        reason = error
                    }
                    if Task.isCancelled { break }
                    continuation.yield(.interrupted(reason, retryIn: pause))
                    try? await Task.sleep(for: pause)
                    pause = min(pause * 2, .seconds(5))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Closes the pooled connection (calls after this connect again).
    public func close() async {
        if let client {
            self.client = nil
            await client.close()
        }
    }
}

extension VarlinkError {
    /// The server's answer to a message it cannot frame — over its maximum message size — after
    /// which it closes the connection (``VarlinkConnectionHandler``'s `channelRead`): an
    /// `org.varlink.service.InvalidParameter` that names no parameter.
    public var closesConnection: Bool {
        name == Self.invalidParameterName && parameters["parameter"]?.stringValue == ""
    }
}
