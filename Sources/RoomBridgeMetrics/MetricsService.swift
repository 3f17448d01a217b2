import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import RoomBridgeCore
import ServiceLifecycle

/// Serves `GET /metrics` (Prometheus' text format) on a loopback address, and keeps ``DaemonMetrics`` following
/// `SystemState`'s events. Off unless `metrics.listen` is set. Every answer closes its connection: one scrape
/// every few seconds needs nothing more.
public struct MetricsService: Service {
    let host: String
    let port: Int
    let metrics: DaemonMetrics
    let state: SystemState
    let probes: DaemonMetrics.Probes
    let logger: Logger

    public init(host: String, port: Int, metrics: DaemonMetrics, state: SystemState, probes: DaemonMetrics.Probes,
                logger: Logger) {
        self.host = host
        self.port = port
        self.metrics = metrics
        self.state = state
        self.probes = probes
        self.logger = logger
    }

    public func run() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 16)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let bound = server.channel.localAddress?.port ?? port
        logger.info("metrics: listening on http://\(host.contains(":") ? "[\(host)]" : host):\(bound)/metrics")
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { group in
                group.addTask { await follow() }
                group.addTask {
                    try? await server.executeThenClose { connections in
                        try await withThrowingDiscardingTaskGroup { each in
                            for try await connection in connections {
                                each.addTask { await answer(connection) }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Counts the state's events; after falling behind (a burst larger than the buffer) it subscribes again.
    private func follow() async {
        while !Task.isCancelled {
            let subscription = await state.subscribe(counted: false)
            do {
                for try await event in subscription.events { metrics.record(event) }
                return
            } catch {
                logger.debug("metrics: the event subscription ended (\(error)); following again")
            }
        }
    }

    private func answer(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        try? await connection.executeThenClose { inbound, outbound in
            var request: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let head): request = head
                case .body: continue
                case .end:
                    guard let head = request else { return }
                    let (status, body): (HTTPResponseStatus, [UInt8])
                    if head.method != .GET && head.method != .HEAD {
                        (status, body) = (.methodNotAllowed, Array("only GET /metrics\n".utf8))
                    } else if head.uri.split(separator: "?").first != "/metrics" {
                        (status, body) = (.notFound, Array("see /metrics\n".utf8))
                    } else {
                        (status, body) = (.ok, await metrics.scrape(await state.snapshot(), probes: probes))
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: status == .ok ? "text/plain; version=0.0.4; charset=utf-8"
                                                                          : "text/plain; charset=utf-8")
                    headers.add(name: "Content-Length", value: String(body.count))
                    headers.add(name: "Connection", value: "close")
                    try await outbound.write(.head(HTTPResponseHead(version: head.version, status: status, headers: headers)))
                    if head.method != .HEAD { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
                    try await outbound.write(.end(nil))
                    return
                }
            }
        }
    }
}
