import CurtainProtocol
import Testing

/// The schedules the daemon keeps for curtains that keep none themselves.
@Suite("Kept curtain schedules (SQLite and PostgreSQL)")
struct CurtainScheduleStoreTests {
    @Test(arguments: Backend.all) func aKeptScheduleReadsBackAndIsReplacedPerCurtain(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 0, users: 0)
        defer { fixture.close() }
        let store = try #require(fixture.store as? any CurtainScheduleStore)
        #expect(try await store.keptSchedule(curtain: "left") == nil)

        let morning = CurtainSchedule(openTime: try CurtainTime(hour: 6, minute: 45), openEnabled: true,
                                      closeTime: try CurtainTime(hour: 23, minute: 59), closeEnabled: false)
        try await store.keepSchedule(morning, curtain: "left")
        #expect(try await store.keptSchedule(curtain: "left") == morning)
        #expect(try await store.keptSchedule(curtain: "right") == nil)

        let later = CurtainSchedule(openTime: .midnight, openEnabled: false,
                                    closeTime: try CurtainTime(hour: 21, minute: 0), closeEnabled: true)
        try await store.keepSchedule(later, curtain: "left")
        try await store.keepSchedule(morning, curtain: "右")
        #expect(try await store.keptSchedule(curtain: "left") == later)
        #expect(try await store.keptSchedule(curtain: "右") == morning)
    }
}
