#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The time the lending rules read, and the waits of their timers (the armed session's expiry, the next overdue
/// announcement). Injected into ``LendingCoordinator`` so that tests move time themselves and see the timers
/// fire without waiting; the daemon uses ``SystemLendingClock``.
public protocol LendingClock: Sendable {
    /// The wall-clock time now.
    func now() -> Date
    /// Returns once this clock has reached `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Date) async throws
}

/// The machine's wall clock; a wait is a `Task.sleep` for the time left.
public struct SystemLendingClock: LendingClock {
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let seconds = max(0, deadline.timeIntervalSinceNow)
        try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up)) + 1))
    }
}

/// A wall clock read through `now` (a test's fixed or moving time) whose waits take real time: for callers that
/// only need to set the time.
struct ReadingLendingClock: LendingClock {
    let read: @Sendable () -> Date

    func now() -> Date { read() }

    func sleep(until deadline: Date) async throws {
        let seconds = max(0, deadline.timeIntervalSince(read()))
        try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up)) + 1))
    }
}
