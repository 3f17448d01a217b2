/// Bounded exponential backoff, the one RoomBridge has: the wait before retry number `attempt` is
/// `initial · multiplier^(attempt−1)`, at most `maximum`. Deterministic, or with jitter
/// (``delay(attempt:jitter:)``). Reconnecting to bluetoothd (curtains, presence), probing an
/// offline PostgreSQL server and the outbox's deliveries all wait by it.
public struct Backoff: Sendable, Hashable {
    /// First delay.
    public var initial: Duration
    /// Growth factor per attempt.
    public var multiplier: Double
    /// Upper bound.
    public var maximum: Duration

    public init(initial: Duration = .milliseconds(250), multiplier: Double = 2, maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
    }

    /// Delay before retry number `attempt` (1-based).
    public func delay(attempt: Int) -> Duration {
        guard attempt > 1 else { return min(initial, maximum) }
        var d = initial
        for _ in 1..<min(attempt, 64) {
            d = d * multiplier
            if d >= maximum { return maximum }
        }
        return d
    }

    /// ``delay(attempt:)`` taken into its upper half by `jitter` in 0...1 (random): `delay · (0.5 + jitter / 2)`,
    /// so that many retries failing together do not come back together.
    public func delay(attempt: Int, jitter: Double) -> Duration {
        delay(attempt: attempt) * (0.5 + min(max(jitter, 0), 1) / 2)
    }
}
