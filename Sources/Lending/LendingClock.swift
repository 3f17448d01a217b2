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

/// A wall clock whose waits take real time: a `Task.sleep` for the time left. The machine's by default; a test
/// that only sets the time reads its own through `read`.
public struct SystemLendingClock: LendingClock {
    let read: @Sendable () -> Date

    public init(read: @escaping @Sendable () -> Date = { Date() }) { self.read = read }

    public func now() -> Date { read() }

    public func sleep(until deadline: Date) async throws {
        let seconds = max(0, deadline.timeIntervalSince(read()))
        try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up)) + 1))
    }
}
