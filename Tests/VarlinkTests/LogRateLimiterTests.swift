import Logging
import Synchronization
import Testing
@testable import VarlinkNIO

/// What a ``CapturingLogHandler`` received.
final class CapturedLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Collects what is logged.
struct CapturingLogHandler: LogHandler {
    let captured: CapturedLines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let extra = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        captured.append("\(event.level) \(event.message)\(extra)")
    }
}

@Suite struct LogRateLimiterTests {
    @Test func repeatsWithinTheWindowAreCountedAndReportedWithTheNextLine() {
        let captured = CapturedLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(captured: captured) }
        let limiter = LogRateLimiter(window: .seconds(10))
        let t0 = ContinuousClock.now
        for i in 0..<1000 {
            limiter.log(logger, .warning, key: "refused", "refused", at: t0 + .milliseconds(i))
        }
        limiter.log(logger, .warning, key: "other", "other", at: t0 + .seconds(1))
        limiter.log(logger, .warning, key: "refused", "refused", at: t0 + .seconds(11))
        limiter.log(logger, .warning, key: "refused", "refused", at: t0 + .seconds(22))
        #expect(captured.all == [
            "warning refused",
            "warning other",
            "warning refused (suppressed 999 similar in 10 s)",
            "warning refused",
        ])
    }

    @Test func messagesBelowTheLevelAreNotCounted() {
        let captured = CapturedLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(captured: captured, logLevel: .error) }
        LogRateLimiter().log(logger, .warning, key: "k", "hidden")
        #expect(captured.all.isEmpty)
    }
}
