import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Retry

/// A target's delivery trouble, for watch: failing for longer than the alert threshold, or
/// delivering again after that.
public struct OutboxAlert: Sendable, Hashable {
    public var target: String
    /// True: failing since `since`; false: it recovered.
    public var failing: Bool
    public var since: Date
    public var lastError: String?
}

/// Delivers the outbox: POSTs each pending entry to its target (async-http-client), marks it
/// delivered on a 2xx answer, and otherwise schedules the next attempt with backoff and jitter
/// (`Backoff.outbox`). The store holds all the state, so delivery resumes after a restart or a
/// `kill -9` with what was not confirmed: at least once, never lost. The store hands out at most
/// the earliest pending entry per device and target, so a device's events arrive in order.
public final class OutboxDelivery: Service {
    public struct Settings: Sendable {
        public var backoff: Backoff
        /// How often the store is asked for new entries when there is nothing to send.
        public var pollInterval: Duration
        /// Delivered and dropped entries are deleted after this.
        public var retention: Duration
        /// A target failing this long is reported (``OutboxAlert``).
        public var failingAlert: Duration

        public init(backoff: Backoff = .outbox(), pollInterval: Duration = .seconds(1),
                    retention: Duration = .seconds(7 * 86400), failingAlert: Duration = .seconds(600)) {
            self.backoff = backoff
            self.pollInterval = pollInterval
            self.retention = retention
            self.failingAlert = failingAlert
        }
    }

    private struct TargetHealth {
        var failingSince: Date?
        var lastError: String?
        var alerted = false
    }

    let store: any InventoryStore
    private let targetsByName: Mutex<[String: WebhookTarget]>
    let settings: Settings
    let logger: Logger
    let onAlert: @Sendable (OutboxAlert) async -> Void
    /// Made when there is first something to send, so a daemon without targets has no HTTP client.
    private let httpClient = Mutex<HTTPClient?>(nil)
    private let health = Mutex<[String: TargetHealth]>([:])

    public init(store: any InventoryStore, targets: [WebhookTarget], settings: Settings, logger: Logger,
                onAlert: @escaping @Sendable (OutboxAlert) async -> Void = { _ in }) {
        self.store = store
        self.targetsByName = Mutex(Self.byName(targets))
        self.settings = settings
        self.logger = logger
        self.onAlert = onAlert
    }

    private static func byName(_ targets: [WebhookTarget]) -> [String: WebhookTarget] {
        Dictionary(targets.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
    }

    /// The targets delivered to now.
    public var targets: [String: WebhookTarget] { targetsByName.withLock { $0 } }

    /// Delivers to `targets` from the next round on (a reloaded configuration). Entries of a
    /// removed target stay in the outbox, pending, until it is configured again or they are dropped.
    public func replaceTargets(_ targets: [WebhookTarget]) {
        let names = Set(targets.map(\.name))
        targetsByName.withLock { $0 = Self.byName(targets) }
        health.withLock { h in h = h.filter { names.contains($0.key) } }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.deliverUntilCancelled() }
        if let client = httpClient.withLock({ $0 }) { try await client.shutdown() }
    }

    private func client() -> HTTPClient {
        httpClient.withLock { client in
            if let client { return client }
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            let made = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            client = made
            return made
        }
    }

    private func deliverUntilCancelled() async {
        var lastPrune = Date.distantPast
        var storeTrouble = false
        while !Task.isCancelled {
            // Without targets (none configured yet) the outbox is not touched: a reload may add some.
            if targetsByName.withLock({ $0.isEmpty }) {
                try? await Task.sleep(for: settings.pollInterval)
                continue
            }
            let now = Date()
            var sent = 0
            do {
                if now.timeIntervalSince(lastPrune) >= 3600 {
                    let pruned = try await store.pruneOutbox(before: now.addingTimeInterval(-seconds(settings.retention)))
                    if pruned > 0 { logger.info("outbox: deleted \(pruned) delivered or dropped entries past their retention") }
                    lastPrune = now
                }
                let names = Array(targets.keys)  // empty if a reload removed the last target meanwhile
                let due = names.isEmpty ? [] : try await store.pendingOutbox(limit: 64, now: now, targets: names)
                if storeTrouble { logger.notice("outbox: the database answers again; delivery goes on") }
                storeTrouble = false
                sent = due.count
                await withTaskGroup(of: Void.self) { group in
                    for entry in due { group.addTask { await self.deliver(entry) } }
                }
            } catch {
                if !storeTrouble { logger.warning("outbox: cannot read the outbox (\(error)); retrying") }
                storeTrouble = true
            }
            await checkAlerts(now: Date())
            if sent == 0 { try? await Task.sleep(for: settings.pollInterval) }
        }
    }

    /// One attempt at one entry.
    func deliver(_ entry: OutboxEntry) async {
        guard let target = targets[entry.target] else { return }
        let started = Date()
        let request = WebhookRequest(entry: entry, target: target, timestamp: Int64(Date().timeIntervalSince1970))
        var http = HTTPClientRequest(url: target.url)
        http.method = .POST
        for (name, value) in request.headers { http.headers.add(name: name, value: value) }
        http.body = .bytes(ByteBuffer(bytes: request.body))
        let failure: String
        do {
            let response = try await client().execute(http, timeout: .nanoseconds(nanoseconds(target.timeout)), logger: logger)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) {
                do {
                    try await store.markDelivered(seq: entry.seq, at: Date())
                } catch {
                    // Sent again later: at least once.
                    logger.warning("outbox: entry \(entry.seq) was delivered to \(target.name) but could not be marked so (\(error)); it will be sent again")
                }
                await recovered(target.name)
                return
            }
            failure = "HTTP \(response.status.code) \(response.status.reasonPhrase)"
        } catch {
            failure = "\(error)"
        }
        let attempts = entry.attempts + 1
        let next = settings.backoff.nextAttempt(afterAttempts: attempts, now: Date(), jitter: Double.random(in: 0...1))
        logger.info("outbox: delivery of entry \(entry.seq) (\(entry.kind.rawValue) \(entry.deviceId)) to \(target.name) failed: \(failure); attempt \(attempts + 1) at \(LendingFormat.iso8601(next))")
        failed(target.name, failure, attemptStarted: started)
        try? await store.markAttemptFailed(seq: entry.seq, next: next, error: failure)
    }

    /// A target fails since the start of its first failed attempt (a refused connection is retried
    /// by the client until the request's timeout).
    private func failed(_ target: String, _ error: String, attemptStarted: Date) {
        health.withLock { h in
            h[target, default: TargetHealth()].lastError = error
            if h[target]?.failingSince == nil { h[target]?.failingSince = attemptStarted }
        }
    }

    private func recovered(_ target: String) async {
        let alert: OutboxAlert? = health.withLock { h in
            guard let state = h[target], let since = state.failingSince else { return nil }
            h[target] = TargetHealth()
            return state.alerted ? OutboxAlert(target: target, failing: false, since: since, lastError: nil) : nil
        }
        if let alert {
            logger.notice("outbox: \(target) accepts deliveries again")
            await onAlert(alert)
        }
    }

    private func checkAlerts(now: Date) async {
        let threshold = seconds(settings.failingAlert)
        let alerts: [OutboxAlert] = health.withLock { h in
            var out: [OutboxAlert] = []
            for (target, state) in h where !state.alerted {
                guard let since = state.failingSince, now.timeIntervalSince(since) >= threshold else { continue }
                h[target]?.alerted = true
                out.append(OutboxAlert(target: target, failing: true, since: since, lastError: state.lastError))
            }
            return out
        }
        for alert in alerts {
            logger.error("outbox: \(alert.target) has been failing since \(LendingFormat.iso8601(alert.since)) (\(alert.lastError ?? "?")); entries wait in the outbox, see roombridgectl outbox")
            await onAlert(alert)
        }
    }
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

private func nanoseconds(_ d: Duration) -> Int64 {
    d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000
}
