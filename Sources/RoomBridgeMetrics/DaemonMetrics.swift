import CoreMetrics
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Prometheus
import RoomBridgeCore
import Synchronization

/// What roombridged counts for the people who run it, in Prometheus' text format (`metrics.listen`): counters
/// and the tap → outcome histogram follow `SystemState`'s events as they happen (through swift-metrics, with
/// swift-prometheus as its backend); the gauges are read from the state and the probes at each scrape.
/// The names and their meaning are listed in operations.md ("Metrics").
public final class DaemonMetrics: Sendable {
    /// What a scrape reads besides the state: the outbox per target and the Varlink socket's connections.
    public struct Probes: Sendable {
        /// Per outbox target: entries waiting, and how many of them failed at least once.
        public var outbox: @Sendable () async -> [(target: String, pending: Int, failing: Int)]
        /// The socket's open connections and the connections refused so far, by reason.
        public var socket: @Sendable () -> (open: Int, refused: [String: UInt64])

        public init(outbox: @escaping @Sendable () async -> [(target: String, pending: Int, failing: Int)] = { [] },
                    socket: @escaping @Sendable () -> (open: Int, refused: [String: UInt64]) = { (0, [:]) }) {
            self.outbox = outbox
            self.socket = socket
        }
    }

    /// The registry the scrape reads; one per daemon (no global bootstrap).
    public let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// Taps waiting for their outcome, by UID: when each was read.
    private let pendingTaps = Mutex<[TagUID: Date]>([:])
    /// The socket's refusals counted into the counter so far, by reason (the server keeps the totals).
    private let refusalsCounted = Mutex<[String: UInt64]>([:])

    /// The histogram buckets of tap → outcome, in seconds: a tap that shows its outcome within 0.3 s feels instant.
    static let tapBuckets: [Duration] = [.milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                                         .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
                                         .seconds(5)]

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["roombridge_tap_outcome_seconds"] = Self.tapBuckets
        self.factory = factory
    }

    /// Counts one event of the state.
    public func record(_ event: Event) {
        switch event.payload {
        case .tagArrived(let tap):
            Counter(label: "roombridge_taps_total", dimensions: [("reader", tap.reader)], factory: factory).increment()
            pendingTaps.withLock { pending in
                pending[tap.uid] = tap.at
                if pending.count > 64 { pending.removeAll() }  // outcomes that never came: bounded, never grows
            }
        case .lending(let outcome):
            Counter(label: "roombridge_lending_outcomes_total", dimensions: [("kind", outcome.kind.rawValue)],
                    factory: factory).increment()
            guard outcome.origin == nil, let uid = outcome.uid,
                  let tapped = pendingTaps.withLock({ $0.removeValue(forKey: uid) }) else { return }
            let seconds = max(0, outcome.at.timeIntervalSince(tapped))
            CoreMetrics.Timer(label: "roombridge_tap_outcome_seconds", dimensions: [], factory: factory)
                .recordNanoseconds(Int64(seconds * 1e9))
        case .overdue:
            Counter(label: "roombridge_overdue_announcements_total", dimensions: [], factory: factory).increment()
        default:
            break
        }
    }

    /// The text a scrape gets: the gauges set from `snapshot` and `probes` now, then everything in the registry.
    public func scrape(_ snapshot: StateSnapshot, probes: Probes, now: Date = Date()) async -> [UInt8] {
        func gauge(_ name: String, _ dimensions: [(String, String)] = [], _ value: Double) {
            Gauge(label: name, dimensions: dimensions, factory: factory).record(value)
        }
        for reader in snapshot.readers {
            gauge("roombridge_reader_connected", [("reader", reader.name)], reader.state == .connected ? 1 : 0)
        }
        let curtains = snapshot.curtains.isEmpty && snapshot.curtain.connection != .disabled
            ? [snapshot.curtain] : snapshot.curtains
        for c in curtains {
            let id = c.id ?? "curtain"
            for state in CurtainConnection.allCases where state != .disabled {
                gauge("roombridge_curtain_connection", [("curtain", id), ("state", state.rawValue)],
                      c.connection == state ? 1 : 0)
            }
            if let p = c.position { gauge("roombridge_curtain_position_percent", [("curtain", id)], Double(p)) }
            if let b = c.battery { gauge("roombridge_curtain_battery_percent", [("curtain", id)], Double(b)) }
            gauge("roombridge_curtain_manual", [("curtain", id)], c.manualOperationActive ? 1 : 0)
        }
        if snapshot.presence.status != .disabled {
            gauge("roombridge_presence_scanning", [], snapshot.presence.status == .scanning ? 1 : 0)
            gauge("roombridge_presence_regions_occupied", [],
                  Double(snapshot.presence.regions.filter { !$0.beacons.isEmpty }.count))
        }
        gauge("roombridge_store_offline_seconds", [],
              snapshot.database.offlineSince.map { max(0, now.timeIntervalSince($0)) } ?? 0)
        if let overdue = snapshot.lending.overdue { gauge("roombridge_lending_overdue", [], Double(overdue)) }
        gauge("roombridge_watch_subscribers", [], Double(snapshot.counters.subscribers))
        gauge("roombridge_watch_subscribers_dropped", [], Double(snapshot.counters.subscribersDropped))
        for target in await probes.outbox() {
            gauge("roombridge_outbox_pending", [("target", target.target)], Double(target.pending))
            gauge("roombridge_outbox_failing", [("target", target.target)], Double(target.failing))
        }
        let socket = probes.socket()
        gauge("roombridge_varlink_connections", [], Double(socket.open))
        for (reason, total) in socket.refused {
            let new = refusalsCounted.withLock { counted -> UInt64 in
                let new = total - min(total, counted[reason, default: 0])
                counted[reason] = total
                return new
            }
            Counter(label: "roombridge_varlink_refused_connections_total", dimensions: [("reason", reason)],
                    factory: factory).increment(by: Int64(new))
        }
        return registry.emitToBuffer()
    }
}
