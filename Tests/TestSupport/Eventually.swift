// The one way tests wait: for a condition, never for a moment.

/// A condition a test waited for did not hold in time.
public struct EventuallyTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let timeout: Duration
    public var description: String { "timed out after \(timeout) waiting for \(what)" }
}

/// Polls `condition` until it holds. Throws `EventuallyTimedOut`, naming `what`, when it
/// still does not hold after `timeout`; the test fails loudly instead of passing silently.
public func eventually(
    _ what: String,
    timeout: Duration = .seconds(20),
    poll: Duration = .milliseconds(5),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { throw EventuallyTimedOut(what: what, timeout: timeout) }
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
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try await produce() { return value }
        guard ContinuousClock.now < deadline else { throw EventuallyTimedOut(what: what, timeout: timeout) }
        try await Task.sleep(for: poll)
    }
}
