#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import BlueZClient

/// The AcquireNotify reader against socket pairs made as bluetoothd makes them (gatt-client.c `create_sock()`:
/// `SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC`) and without SOCK_NONBLOCK.
@Suite struct NotifySocketReaderTests {
    static func pair(nonBlocking: Bool) throws -> (ours: Int32, peer: Int32) {
        var fds: [Int32] = [-1, -1]
        var type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        try #require(socketpair(AF_LOCAL, type, 0, &fds) == 0)
        return (fds[1], fds[0])
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Regression: on a non-blocking fd a blocking-style `recv` got EAGAIN while the socket was empty and ended.
    /// Each packet is sent only after the previous one came out, so the reader always meets an empty socket first.
    @Test(arguments: [true, false])
    func readsPacketsSentLaterThenReportsTheHangUp(nonBlocking: Bool) async throws {
        let (ours, peer) = try Self.pair(nonBlocking: nonBlocking)
        let reader = NotifySocketReader(fd: ours)
        var items = reader.items.makeAsyncIterator()
        let packets: [[UInt8]] = [[0x81, 0, 0, 0, 0], [0x82, 0, 0, 0, 0, 0], [0x81, 1, 0, 50, 0]]
        for p in packets {
            Self.send(peer, p)
            #expect(await items.next() == .packet(p))
        }
        close(peer) // bluetoothd ends the session
        #expect(await items.next() == .ended(reason: "bluetoothd closed the notify socket", stopped: false))
        #expect(await items.next() == nil)
    }

    /// A zero-length notification reads as 0 bytes like the end of the stream; only a hang-up ends it.
    @Test func anEmptyNotificationIsAPacketNotTheEnd() async throws {
        let (ours, peer) = try Self.pair(nonBlocking: true)
        let reader = NotifySocketReader(fd: ours)
        var items = reader.items.makeAsyncIterator()
        Self.send(peer, [])
        #expect(await items.next() == .packet([]))
        Self.send(peer, [0x81, 0, 0, 0, 0])
        #expect(await items.next() == .packet([0x81, 0, 0, 0, 0]))
        close(peer)
        #expect(await items.next() == .ended(reason: "bluetoothd closed the notify socket", stopped: false))
    }

    @Test func stopEndsTheStreamAsStopped() async throws {
        let (ours, peer) = try Self.pair(nonBlocking: true)
        defer { close(peer) }
        let reader = NotifySocketReader(fd: ours)
        reader.stop()
        reader.stop() // idempotent
        var items = reader.items.makeAsyncIterator()
        #expect(await items.next() == .ended(reason: "stopped", stopped: true))
        #expect(await items.next() == nil)
    }
}
