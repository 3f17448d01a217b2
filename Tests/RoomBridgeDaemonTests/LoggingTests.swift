import Testing
@testable import RoomBridgeDaemon

@Suite struct LoggingTests {
    @Test("log timestamps are ISO 8601 UTC with milliseconds, zero-padded")
    func utcTimestamps() {
        #expect(JournalAwareLogHandler.utcTimestamp(seconds: 0, milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(JournalAwareLogHandler.utcTimestamp(seconds: 951_782_400, milliseconds: 7) == "2000-02-29T00:00:00.007Z")
        #expect(JournalAwareLogHandler.utcTimestamp(seconds: 1_795_502_881, milliseconds: 465) == "2026-11-24T06:48:01.465Z")
        #expect(JournalAwareLogHandler.utcTimestamp(seconds: 4_102_444_799, milliseconds: 999) == "2099-12-31T23:59:59.999Z")
    }
}
