import Logging
import Synchronization

/// Keeps a message that anyone can provoke (a refused connection, malformed input) from
/// flooding the journal: per key, the first occurrence in a window is logged, later ones are
/// only counted, and the next one logged after the window says how many were left out:
/// "… (suppressed 812 similar in 10 s)".
public final class LogRateLimiter: Sendable {
    private struct Entry {
        var windowStart: ContinuousClock.Instant
        var suppressed: Int
    }

    public let window: Duration
    private let entries = Mutex<[String: Entry]>([:])

    public init(window: Duration = .seconds(10)) {
        self.window = window
    }

    /// Logs `message` unless a message with the same `key` was logged less than ``window`` ago.
    public func log(_ logger: Logger, _ level: Logger.Level, key: String, _ message: @autoclosure () -> String,
                    metadata: Logger.Metadata? = nil) {
        log(logger, level, key: key, message(), metadata: metadata, at: .now)
    }

    /// ``log(_:_:key:_:metadata:)`` at a given time (for tests).
    func log(_ logger: Logger, _ level: Logger.Level, key: String, _ message: @autoclosure () -> String,
             metadata: Logger.Metadata? = nil, at now: ContinuousClock.Instant) {
        guard logger.logLevel <= level else { return }
        let suppressed: Int? = entries.withLock { entries in
            if let entry = entries[key], now - entry.windowStart < window {
                entries[key]?.suppressed += 1
                return nil
            }
            let previous = entries[key]?.suppressed ?? 0
            entries[key] = Entry(windowStart: now, suppressed: 0)
            return previous
        }
        guard let suppressed else { return }
        var text = message()
        if suppressed > 0 { text += " (suppressed \(suppressed) similar in \(window.components.seconds) s)" }
        logger.log(level: level, "\(text)", metadata: metadata)
    }
}
