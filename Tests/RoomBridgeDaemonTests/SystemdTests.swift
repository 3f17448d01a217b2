import Testing
@testable import RoomBridgeDaemon

@Suite struct SystemdTests {
    @Test func watchdogIntervalIsHalfAndOwnerChecked() {
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "4000000"], pid: 5) == .seconds(2))
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "6"], pid: 5) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: [:], pid: 5) == nil)
    }
}
