import Logging
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
        let captured = CapturedLines()
        let logger = Logger(label: "test") { _ in EscapingLogHandler(CapturingLogHandler(captured: captured)) }
        logger.notice("failed sign-in as \("eve\nNOTICE admin root signed in")", metadata: ["path": "/x\r\ny"])
        #expect(captured.all == ["notice failed sign-in as eve\\nNOTICE admin root signed in path=/x\\r\\ny"])
    }
}
