#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Testing
import TestSupport
import Varlink
@testable import VarlinkNIO

/// The rule every long-lived client follows (issue 32, the kiosk after a quiet minute): a
/// connection the service closed is not used again; a read is asked again once; a change is
/// sent again only when it cannot have reached the service.
@Suite struct ReconnectingClientTests {
    @Test func aCallAfterTheServiceClosedTheQuietConnectionIsAnswered() async throws {
        // Three seconds of quiet. A CI machine under load (tests taking 20 s) once took longer than
        // one second between opening a connection and sending on it, so the service closed it
        // first and the read was asked again on a fourth connection, as it should be.
        try await withServer(configure: { $0.idleTimeout = .seconds(3) }) { path, _ in
            let client = ReconnectingVarlinkClient(path: path)
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 2], retry: .idempotent) == ["sum": 3])
            try await eventually("the service to close the quiet connection") { await !client.isConnected }
            // A read and a change after the quiet spell: both answered, each on a fresh connection.
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 2, "b": 2], retry: .idempotent) == ["sum": 4])
            try await eventually("the service to close the quiet connection again") { await !client.isConnected }
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 3, "b": 3], retry: .notIfSent) == ["sum": 6])
            // Each call after a close on a fresh connection; a read may be asked once more on
            // another if the service closed that one too before the call reached it.
            #expect(await client.connectionsOpened >= 3)
            await client.close()
        }
    }

    /// A burst of calls on a client with no connection yet opens one connection, which all of them share.
    @Test func aBurstOfFirstCallsOpensOneConnection() async throws {
        try await withServer(configure: { _ in }) { path, _ in
            let client = ReconnectingVarlinkClient(path: path)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        let reply = try await client.call("org.example.test.Add", parameters: ["a": .int(Int64(i)), "b": 1],
                                                          retry: .idempotent)
                        #expect(reply == ["sum": .int(Int64(i + 1))])
                    }
                }
                try await group.waitForAll()
            }
            #expect(await client.connectionsOpened == 1)
            await client.close()
        }
    }

    /// A service that reads each call and hangs up without answering: the call was sent, so a
    /// change's outcome is unknown, and a read is asked once more and then fails.
    @Test func aChangeSentWithoutAnAnswerIsUnknownAndAReadIsAskedAgainOnce() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("hangup.sock")
        let listener = try makeBoundSocket(path, listen: true)
        let accepted = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        DispatchQueue.global().async {
            while !stop.load(ordering: .relaxed) {
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { continue }
                accepted.add(1, ordering: .relaxed)
                var buffer = [UInt8](repeating: 0, count: 4096)
                // Read up to the call's terminating NUL, then hang up.
                readLoop: while true {
                    let n = read(fd, &buffer, buffer.count)
                    if n <= 0 || buffer[..<n].contains(0) { break readLoop }
                }
                close(fd)
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
        let client = ReconnectingVarlinkClient(path: path)
        await #expect(throws: VarlinkClientError.outcomeUnknown(method: "org.example.test.Note")) {
            try await client.call("org.example.test.Note", parameters: ["text": "lend"], retry: .notIfSent)
        }
        #expect(accepted.load(ordering: .relaxed) == 1)
        await #expect(throws: VarlinkClientError.connectionClosed) {
            try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 1], retry: .idempotent)
        }
        #expect(accepted.load(ordering: .relaxed) == 3)
    }

    /// Issue 33: a page whose second call was cancelled (its first failed) closed the shared
    /// connection, and the next page failed. Cancelling a call now only stops the wait.
    @Test func cancellingOneCallLeavesTheConnectionToTheOthers() async throws {
        try await withServer { path, _ in
            let client = try await VarlinkClient.connect(path: path)
            let slow = Task { try await client.call("org.example.test.Sleep", parameters: ["ms": 300, "tag": "slow"]) }
            slow.cancel()
            await #expect(throws: CancellationError.self) { try await slow.value }
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 20, "b": 22]) == ["sum": 42])
            #expect(client.isActive)
            await client.close()
        }
    }

    /// Issue 33: a local user who fills the listen backlog with connects made `roombridgectl`
    /// fail with EAGAIN at once. The client tries again until the backlog has room.
    @Test func aConnectRefusedForNowIsTriedAgain() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("busy.sock")
        let listener = try makeBoundSocket(path, listen: true)
        defer { close(listener) }
        var flood: [Int32] = []
        defer { for fd in flood { close(fd) } }
        while true {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var addr = makeUnixAddress(path)
            let r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if r != 0 {
                let e = errno
                close(fd)
                #expect(e == EAGAIN)
                break
            }
            flood.append(fd)
            if flood.count > 4096 { Issue.record("the backlog never filled"); return }
        }
        let backlog = flood.count
        let connecting = Task { try await VarlinkClient.connect(path: path, busyTimeout: .seconds(10)) }
        // The service catches up: it accepts the flood, which makes room for the real client.
        DispatchQueue.global().async {
            for _ in 0..<backlog {
                let fd = accept(listener, nil, nil)
                if fd >= 0 { close(fd) }
            }
        }
        let client = try await connecting.value
        #expect(client.isActive)
        await client.close()
    }
}
