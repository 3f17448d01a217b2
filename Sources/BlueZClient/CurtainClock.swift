#if canImport(Glibc)
import Glibc
#endif

/// The time the curtain client reads: a monotonic clock for its timeouts and backoff, and the local
/// time of day for a schedule the daemon keeps. Injected through ``CurtainClientConfiguration/clock``
/// so that tests can move time themselves.
public protocol CurtainClock: Sendable {
    /// Time on a monotonic clock since an arbitrary origin.
    func elapsed() -> Duration
    /// Returns after `duration` has passed on this clock (throws when the task is cancelled).
    func sleep(for duration: Duration) async throws
    /// Seconds since local midnight (the time zone of the machine, as a schedule's HH:MM means).
    func secondsOfDay() -> Double
}

/// The machine's clocks: CLOCK_MONOTONIC (`ContinuousClock`) and the local wall clock.
public struct SystemCurtainClock: CurtainClock {
    private let origin = ContinuousClock.now

    public init() {}

    public func elapsed() -> Duration { ContinuousClock.now - origin }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }

    public func secondsOfDay() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = time_t(ts.tv_sec)
        var parts = tm()
        localtime_r(&t, &parts)
        return Double(parts.tm_hour * 3600 + parts.tm_min * 60 + parts.tm_sec) + Double(ts.tv_nsec) / 1e9
    }
}
