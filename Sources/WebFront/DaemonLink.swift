import Logging
import Varlink
import VarlinkNIO

/// roombridge-web's way to roombridged: Varlink calls on one pipelined connection, opened on
/// first use and opened again whenever roombridged closed it (its idle timeout, a restart),
/// under the shared client's rule (``ReconnectingVarlinkClient``): a read is asked again once on
/// a new connection; a change is sent again only when it cannot have reached the daemon, and
/// otherwise fails with `VarlinkClientError.outcomeUnknown`, which the page words as "not sure it
/// was recorded". The web front end holds no state of its own beyond what it reads here; it
/// never touches the database or the hardware.
///
/// Connections to the daemon: this one for calls, and one for the ``EventHub``'s Watch. No
/// browser request opens another (docs/web.md).
public struct DaemonLink: Sendable {
    public var socketPath: String { client.path }
    let client: ReconnectingVarlinkClient

    public init(socketPath: String, logger: Logger = Logger(label: "roombridge-web.daemon")) {
        client = ReconnectingVarlinkClient(path: socketPath, logger: logger)
    }

    /// Calls a method that changes nothing and decodes the reply.
    /// - Throws: `VarlinkError` (the daemon's typed error reply) or `VarlinkClientError`.
    func read<P: Encodable & Sendable, R: Decodable & Sendable>(
        _ method: String, _ parameters: P, returning type: R.Type
    ) async throws -> R {
        try await client.call(method, parameters, returning: type, retry: .idempotent)
    }

    /// Calls a method that changes something and decodes the reply.
    /// - Throws: `VarlinkError`, or `VarlinkClientError` (`outcomeUnknown` when the change was
    ///   sent and no answer came).
    func write<P: Encodable & Sendable, R: Decodable & Sendable>(
        _ method: String, _ parameters: P, returning type: R.Type
    ) async throws -> R {
        try await client.call(method, parameters, returning: type, retry: .notIfSent)
    }

    /// Calls a method that sets something to a state given in full (a curtain's target, its
    /// schedule), so that sending it twice has the effect of sending it once.
    func command<P: Encodable & Sendable, R: Decodable & Sendable>(
        _ method: String, _ parameters: P, returning type: R.Type
    ) async throws -> R {
        try await client.call(method, parameters, returning: type, retry: .idempotent)
    }

    /// Calls a contract method (``RoomBridgeAPI``) that changes nothing.
    func read<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
        try await client.call(method, parameters, retry: .idempotent)
    }

    /// Calls a contract method that changes something (see ``write(_:_:returning:)``).
    func write<M: VarlinkMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws -> M.Reply {
        try await client.call(method, parameters, retry: .notIfSent)
    }

    /// Opens a dedicated connection for `io.roombridge.State.Watch` (a stream keeps its
    /// connection to itself) and returns its replies; `since` resumes after that event.
    func watch(since: Int? = nil) async throws -> (VarlinkClient, AsyncThrowingStream<VarlinkClient.Parameters, any Error>) {
        let parameters: VarlinkClient.Parameters = since.map { ["since": .int(Int64($0))] } ?? [:]
        return try await client.subscribe("io.roombridge.State.Watch", parameters: parameters)
    }
}
