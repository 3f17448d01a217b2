import Lending
import Logging
import RoomBridgeConfig
import RoomBridgeCore
import Webhooks

/// The outbox as the configuration describes it: the routes the store writes entries for, and the
/// delivery service with each target's secret and token read from their files or credentials.
enum OutboxSetup {
    /// One route per `[outbox.targets.NAME]`; none when no target is configured, so the store
    /// writes no entries.
    static func routes(_ config: DaemonConfig) -> [OutboxRoute] {
        config.outboxTargets.map { target in
            OutboxRoute(target: target.name, kinds: Set(target.events.compactMap(OutboxEventKind.init(rawValue:))))
        }
    }

    /// The delivery targets with their secrets; a secret file that cannot be read stops the daemon (78).
    static func targets(_ config: DaemonConfig, environment: [String: String]) throws -> [WebhookTarget] {
        do {
            return try config.outboxTargets.map { entry throws(ConfigError) in
                WebhookTarget(name: entry.name, url: entry.url, format: entry.format == "slack" ? .slack : .json,
                              secret: try Secrets.secret(of: entry, environment: environment).map { Array($0.utf8) },
                              bearerToken: try Secrets.token(of: entry, environment: environment),
                              timeout: .milliseconds(Int64(entry.timeout * 1000)))
            }
        } catch {
            throw StartupError(.config, "\(error)")
        }
    }

    static func settings(_ config: DaemonConfig) -> OutboxDelivery.Settings {
        func duration(_ key: ConfigKey<Double>) -> Duration { .milliseconds(Int64(config[key] * 1000)) }
        return OutboxDelivery.Settings(
            backoff: .outbox(base: duration(.outboxRetryBase), cap: duration(.outboxRetryMax)),
            pollInterval: duration(.outboxPollInterval),
            retention: .seconds(Int64(config[.outboxRetentionDays]) * 86400),
            failingAlert: duration(.outboxFailingAlert))
    }

    /// A target's trouble as the `outbox` event of watch.
    static func notice(_ alert: OutboxAlert) -> OutboxNotice {
        let since = LendingFormat.iso8601(alert.since)
        let message = alert.failing
            ? "outbox target \(alert.target) has been failing since \(since) (\(alert.lastError ?? "no answer")); events wait in the outbox (roombridgectl outbox)"
            : "outbox target \(alert.target) accepts deliveries again (failing since \(since)); the waiting events are being sent"
        return OutboxNotice(target: alert.target, failing: alert.failing, since: alert.since, lastError: alert.lastError,
                            message: message)
    }
}
