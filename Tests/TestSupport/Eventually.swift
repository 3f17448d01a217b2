// The one way tests wait: for a condition, never for a moment.

/// A condition a test waited for did not hold in time.
public struct EventuallyTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let timeout: Duration
    public var description: String { "timed out after \(timeout) waiting for \(what)" }
}

/// Polls `condition` until it holds. Throws `EventuallyTimedOut`, naming `what`, when it
/// still does not hold after `timeout`; the test fails loudly instead of passing silently.
///
/// The timeout counts the time the test process was running: a round of polling that took longer than
/// ``Waited/stallAllowance`` (the whole process stalled, as on a CI machine building two trees at once)
/// counts as that allowance, not as its whole length. A condition that never holds still fails; one that
/// holds a moment after a 23-second stall of everything does not.
public func eventually(
    _ what: String,
    timeout: Duration = .seconds(20),
    poll: Duration = .milliseconds(5),
    _ condition: () async throws -> Bool
) async throws {
    var waited = Waited()
    while true {
        if try await condition() { return }
        guard waited.tick() < timeout else { throw EventuallyTimedOut(what: what, timeout: timeout) }
        try await Task.sleep(for: poll)
    }
}

/// Polls `produce` until it returns a value, and returns it; throws `EventuallyTimedOut` on timeout.
public func eventually<T>(
    _ what: String,
    timeout: Duration = .seconds(20),
    poll: Duration = .milliseconds(5),
    _ produce: () async throws -> T?
) async throws -> T {
    var waited = Waited()
    while true {
        if let value = try await produce() { return value }
        guard waited.tick() < timeout else { throw EventuallyTimedOut(what: what, timeout: timeout) }
        try await Task.sleep(for: poll)
    }
}

/// How long ``eventually`` has waited: the time between rounds of polling, each counted up to
/// ``stallAllowance``.
struct Waited {
    /// The most one round of polling counts for. Rounds are milliseconds apart; a longer one means the
    /// process did not run.
    static let stallAllowance: Duration = .seconds(1)
    private var total: Duration = .zero
    private var last = ContinuousClock.now

    /// Adds the round just ended and returns the total.
    mutating func tick() -> Duration {
        let now = ContinuousClock.now
        total += min(now - last, Self.stallAllowance)
        last = now
        return total
    }
}
