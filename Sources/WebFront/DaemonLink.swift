import Logging
import Varlink
import VarlinkNIO

/// roombridge-web's way to roombridged: Varlink calls on one pipelined connection, opened on
/// first use and opened again after the daemon restarts. The web front end holds no state of
/// its own beyond what it reads here; it never touches the database or the hardware.
public actor DaemonLink {
    public let socketPath: String
    private var client: VarlinkClient?
    private let logger: Logger

    public init(socketPath: String, logger: Logger = Logger(label: "roombridge-web.daemon")) {
        self.socketPath = socketPath
        self.logger = logger
    }

    private func connected() async throws -> VarlinkClient {
        if let client { return client }
        let fresh = try await VarlinkClient.connect(path: socketPath)
        client = fresh
        return fresh
    }

    /// Calls `method` with `parameters` and decodes the reply. A broken connection is dropped,
    /// so the next call connects again (the daemon may have restarted).
    /// - Throws: `VarlinkError` (the daemon's typed error reply) or `VarlinkClientError`.
    func call<P: Encodable & Sendable, R: Decodable & Sendable>(
        _ method: String, _ parameters: P, returning type: R.Type
    ) async throws -> R {
        let client = try await connected()
        do {
            return try await client.call(method, parameters, returning: type)
        } catch let error as VarlinkClientError {
            if self.client === client { self.client = nil }
            logger.notice("call \(method) failed: \(error); will reconnect")
            throw error
        }
    }

    /// Opens a dedicated connection for `io.roombridge.State.Watch` (a stream keeps its
    /// connection to itself) and returns its replies; `since` resumes after that event.
    func watch(since: Int? = nil) async throws -> (VarlinkClient, AsyncThrowingStream<VarlinkClient.Parameters, any Error>) {
        let watcher = try await VarlinkClient.connect(path: socketPath)
        let parameters: VarlinkClient.Parameters = since.map { ["since": .int(Int64($0))] } ?? [:]
        return (watcher, watcher.stream("io.roombridge.State.Watch", parameters: parameters))
    }
}

/// An empty parameter object.
struct NoParameters: Encodable, Sendable {}
