import Foundation
import Synchronization
import Testing
import TestSupport
@testable import RoomBridgeDaemon

@Suite struct SystemdTests {
    @Test func watchdogIntervalIsHalfAndOwnerChecked() {
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "4000000"], pid: 5) == .seconds(2))
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "6"], pid: 5) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: [:], pid: 5) == nil)
    }

    /// A notify socket nobody reads (its queue holds `net.unix.max_dgram_qlen` datagrams, 10 by default): sending
    /// drops the message instead of blocking the caller, a thread of the cooperative pool.
    @Test func aFullNotifySocketDropsTheMessageInsteadOfBlocking() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/notify-\(UUID().uuidString.prefix(8)).sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)

        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        let results = Mutex<[Bool]>([])
        // On its own thread, so that a blocking send fails this test instead of hanging the suite.
        let thread = Thread {
            for i in 0..<200 { let sent = notifier.send("STATUS=\(i)"); results.withLock { $0.append(sent) } }
        }
        thread.start()
        try await eventually("200 sends to return (does not hang)", timeout: .seconds(30)) {
            results.withLock { $0.count } == 200
        }
        let sent = results.withLock { $0 }
        #expect(sent.first == true)
        #expect(sent.contains(false), "the queue filled up, so some were dropped")
    }
}
