import Testing
@testable import CurtainProtocol

@Suite struct DaemonScheduleTests {
    static func schedule(_ open: String, _ openOn: Bool, _ close: String, _ closeOn: Bool) throws -> CurtainSchedule {
        CurtainSchedule(openTime: try CurtainTime(parsing: open), openEnabled: openOn,
                        closeTime: try CurtainTime(parsing: close), closeEnabled: closeOn)
    }

    @Test func nextEnabledTimeAfterNow() throws {
        let s = try Self.schedule("07:00", true, "21:30", true)
        let at8 = try #require(s.nextFiring(afterSecondsOfDay: 8 * 3600))
        #expect(at8.command == .close && at8.delay == 13.5 * 3600)
        let at22 = try #require(s.nextFiring(afterSecondsOfDay: 22 * 3600))
        #expect(at22.command == .open && at22.delay == 9 * 3600)  // tomorrow 07:00
        let atSeven = try #require(s.nextFiring(afterSecondsOfDay: 7 * 3600))
        #expect(atSeven.command == .close)  // strictly after: 07:00 itself has fired
    }

    @Test func disabledTimesNeverFire() throws {
        #expect(try Self.schedule("07:00", false, "21:30", false).nextFiring(afterSecondsOfDay: 0) == nil)
        let onlyClose = try #require(try Self.schedule("07:00", false, "21:30", true).nextFiring(afterSecondsOfDay: 0))
        #expect(onlyClose.command == .close)
    }
}
