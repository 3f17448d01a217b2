import Logging
import Synchronization
import Testing
import VarlinkNIO

/// Issue 33: a sign-in name "eve\n2026-01-01T00:00:00.000Z NOTICE admin root signed in" wrote a
/// forged line to the journal. Every handler escapes what a client could have supplied.
@Suite struct LogTextTests {
    @Test func controlCharactersAreEscapedAndOrdinaryTextIsKept() {
        #expect(LogText.escaped("eve\n2026-01-01T00:00:00.000Z NOTICE admin root signed in")
                == "eve\\n2026-01-01T00:00:00.000Z NOTICE admin root signed in")
        #expect(LogText.escaped("a\r\tb\u{1B}[31mc\u{7F}\u{85}\u{2028}") == "a\\r\\tb\\u{1b}[31mc\\u{7f}\\u{85}\\u{2028}")
        #expect(LogText.escaped("ギャラクシー S24 — D-0042") == "ギャラクシー S24 — D-0042")
    }

    @Test func theWrappingHandlerEscapesMessagesAndMetadata() {
        final class Capture: Sendable {
            let lines = Mutex<[String]>([])
        }
        struct Recorder: LogHandler {
            let capture: Capture
            var logLevel: Logger.Level = .trace
            var metadata: Logger.Metadata = [:]
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                let extra = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                capture.lines.withLock { $0.append("\(event.message) \(extra)") }
            }
        }
        let capture = Capture()
        let logger = Logger(label: "test") { _ in EscapingLogHandler(Recorder(capture: capture)) }
        logger.notice("failed sign-in as \("eve\nNOTICE admin root signed in")", metadata: ["path": "/x\r\ny"])
        #expect(capture.lines.withLock { $0 } == ["failed sign-in as eve\\nNOTICE admin root signed in path=/x\\r\\ny"])
    }
}
