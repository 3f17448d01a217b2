import Testing
@testable import RoomBridgeDaemon

@Suite struct SystemdTests {
    @Test func watchdogIntervalIsHalfAndOwnerChecked() {
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "4000000"], pid: 5) == .seconds(2))
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "6"], pid: 5) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: [:], pid: 5) == nil)
    }

    @Test func listenFDsOnlyForOurPid() {
        #expect(SocketActivation.passedDescriptors(environment: ["LISTEN_PID": "1", "LISTEN_FDS": "1"], pid: 2) == [])
        #expect(SocketActivation.passedDescriptors(environment: ["LISTEN_PID": "2", "LISTEN_FDS": "0"], pid: 2) == [])
    }
}
