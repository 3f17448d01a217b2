/// RSSI smoothing: the mean of the samples seen within a window, after trimming the lowest and
/// highest tenth — the same trim as AltBeacon's `RunningAverageRssiFilter.calculateRunningAverage`
/// (android-beacon-library, `service/RunningAverageRssiFilter.java`): with more than two samples,
/// sorted, it drops `count/10 + 1` from each end.
public struct RSSIFilter: Sendable {
    /// How long a sample counts (AltBeacon's default sample expiration is 20 s).
    public var window: Duration
    private var samples: [(at: Duration, rssi: Int)] = []

    public init(window: Duration = .seconds(20)) { self.window = window }

    /// Adds a reading taken at `at` (a monotonic time).
    public mutating func add(_ rssi: Int, at: Duration) {
        samples.append((at, rssi))
        expire(now: at)
    }

    /// Forgets samples older than the window.
    public mutating func expire(now: Duration) {
        samples.removeAll { now - $0.at >= window }
    }

    public var count: Int { samples.count }

    /// The trimmed mean, or nil with no samples.
    public var smoothed: Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.map(\.rssi).sorted()
        var lo = 0, hi = sorted.count - 1
        if sorted.count > 2 {
            lo = sorted.count / 10 + 1
            hi = sorted.count - sorted.count / 10 - 2
        }
        let kept = sorted[lo...hi]
        return Double(kept.reduce(0, +)) / Double(kept.count)
    }
}
