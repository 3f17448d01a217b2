import Foundation
import Synchronization
import RoomBridgeCore
import RoomBridgeInterfaces
import Testing
import TestSupport
import Varlink
import VarlinkNIO

/// `io.roombridge.State` served by the real Varlink server over a Unix socket, with the test as
/// the adapter that feeds `SystemState`.
@Suite struct WatchTests {
    struct Served {
        let dir: URL
        let path: String
        let state: SystemState
        let server: VarlinkServer
        let run: Task<Void, any Error>
    }

    func serve(bufferLimit: Int, replayLimit: Int = 1024, group: UInt32? = nil, stallTimeout: Duration = .seconds(30)) async throws -> Served {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rb-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("s.sock").path
        let state = SystemState(bufferLimit: bufferLimit, replayLimit: replayLimit)
        let service = try VarlinkService(
            vendor: "test", product: "test", version: "0", url: "",
            interfaces: [StateInterface(state: state, authorizer: Authorizer(groupName: "wheel", gid: group),
                                        setLogLevel: { _ in })])
        let server = try await VarlinkServer.bind(service: service, configuration: .init(listen: .path(path), stallTimeout: stallTimeout))
        let run = Task { try await server.run() }
        return Served(dir: dir, path: path, state: state, server: server, run: run)
    }

    func stop(_ s: Served) async {
        await s.state.shutdown()
        await s.server.shutdown()
        _ = await s.run.result
        try? FileManager.default.removeItem(at: s.dir)
    }

    func bigTap(_ i: Int) -> Tap {
        Tap(reader: "front", uid: TagUID(String(format: "04%06X", i))!, tagType: "NTAG216",
            records: [TagRecord(tnf: "mime", type: "application/octet-stream",
                                payloadHex: String(repeating: "AB", count: 600))],
            at: Date())
    }

    /// Opens a raw connection, sends Watch with `more`, and then never reads.
    func stalledWatcher(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(rc == 0)
        let call = Array("{\"method\":\"io.roombridge.State.Watch\",\"more\":true}".utf8) + [0]
        _ = call.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return fd
    }

    @Test func slowWatchClientIsDroppedWhileOthersReceiveEverything() async throws {
        let s = try await serve(bufferLimit: 64)
        let stalled = try stalledWatcher(s.path)
        defer { close(stalled) }
        let client = try await VarlinkClient.connect(path: s.path)
        let total = 3000
        let progress = Mutex<Int64>(0)
        let reader = Task { () -> [Int64] in
            var seqs: [Int64] = []
            for try await reply in client.stream("io.roombridge.State.Watch") {
                if let seq = reply["event"]?["seq"]?.intValue {
                    seqs.append(seq)
                    progress.withLock { $0 = seq }
                    if seqs.count == total { break }
                }
            }
            return seqs
        }
        // Wait until both watchers are subscribed.
        try await eventually("both watchers are subscribed") { await s.state.snapshot().counters.subscribers == 2 }
        for i in 0..<total {
            // Pace the events so that a client that reads stays well within its buffer; the
            // stalled one falls behind regardless.
            try await eventually("the reading client is within 16 events", poll: .milliseconds(1)) {
                Int64(i) - progress.withLock({ $0 }) <= 16
            }
            await s.state.recordTap(bigTap(i))
        }
        let seqs = try await reader.value
        #expect(seqs == Array(1...Int64(total)))
        let counters = await s.state.snapshot().counters
        #expect(counters.subscribersDropped == 1)
        await client.close()
        await stop(s)
    }

    /// A client that reads nothing holds no more than the socket's buffers: once its replies have
    /// stayed unwritten for the stall timeout, its connection is closed. The state keeps every
    /// event here (a large buffer), so only the socket can stop the flow.
    @Test func watcherThatReadsNothingIsDisconnectedAtTheStallTimeout() async throws {
        let s = try await serve(bufferLimit: 100_000, stallTimeout: .seconds(1))
        let stalled = try stalledWatcher(s.path)
        defer { close(stalled) }
        try await eventually("the watcher is subscribed") { await s.state.snapshot().counters.subscribers == 1 }
        #expect(s.server.connectionCount == 1)
        // 3,000 events of 1.2 kB: far more than a Unix socket's send buffer and NIO's high-water mark.
        for i in 0..<3000 { await s.state.recordTap(bigTap(i)) }
        try await eventually("the stalled watcher is disconnected") { s.server.connectionCount == 0 }
        try await eventually("its subscription has ended") { await s.state.snapshot().counters.subscribers == 0 }
        await stop(s)
    }

    @Test func getStateFollowsTheState() async throws {
        let s = try await serve(bufferLimit: 64)
        let client = try await VarlinkClient.connect(path: s.path)
        for _ in 0..<2 {  // the second answer comes from the cached serialization
            #expect(try await client.call("io.roombridge.State.GetState")["state"]?["seq"] == 0)
        }
        await s.state.recordTap(bigTap(7))
        let state = try await client.call("io.roombridge.State.GetState")["state"]
        #expect(state?["seq"] == 1)
        #expect(state?["lastTap"]?["uid"] == "04000007")
        await s.state.setArm(LendingArm(userId: "U-1", userName: "Aiko", armedAt: Date(), expiresAt: Date().addingTimeInterval(60)))
        let armed = try await client.call("io.roombridge.State.GetState")["state"]?["lending"]
        #expect(armed?["armed"]?["userId"] == "U-1")
        #expect((armed?["remainingSeconds"]?.doubleValue ?? 0) > 0)
        await client.close()
        await stop(s)
    }

    @Test func watchStartsWithStateAndHasNoGap() async throws {
        let s = try await serve(bufferLimit: 64)
        await s.state.recordTap(bigTap(0))
        let client = try await VarlinkClient.connect(path: s.path)
        var iterator = client.stream("io.roombridge.State.Watch").makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first["state"]?["seq"]?.intValue == 1)
        await s.state.recordTap(bigTap(1))
        let second = try #require(try await iterator.next())
        #expect(second["event"]?["seq"]?.intValue == 2)
        #expect(second["event"]?["kind"]?.stringValue == "tagArrived")
        #expect(second["event"]?["tap"]?["uid"]?.stringValue == "04000001")
        await client.close()
        await stop(s)
    }

    /// Watch(since:) on a fresh connection: `resumedAfter`, the events the client missed, then
    /// live events, with no gap and no state.
    @Test func watchSinceReplaysTheMissedEventsThenContinuesLive() async throws {
        let s = try await serve(bufferLimit: 64, replayLimit: 8)
        for i in 1...10 { await s.state.recordTap(bigTap(i)) }
        let client = try await VarlinkClient.connect(path: s.path)
        var iterator = client.stream("io.roombridge.State.Watch", parameters: ["since": 4]).makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first["resumedAfter"]?.intValue == 4)
        #expect(first["state"] == nil || first["state"]?.isNull == true)
        var seqs: [Int64] = []
        for _ in 5...10 { seqs.append(try #require(try await iterator.next())["event"]?["seq"]?.intValue ?? -1) }
        #expect(seqs == Array(5...10))
        await s.state.recordTap(bigTap(11))
        let live = try #require(try await iterator.next())
        #expect(live["event"]?["seq"]?.intValue == 11)
        #expect(live["event"]?["tap"]?["uid"]?.stringValue == "0400000B")
        await client.close()
        await stop(s)
    }

    /// A client up to date resumes with nothing to replay; its first reply still says so.
    @Test func watchSinceTheLatestEventOnlyConfirms() async throws {
        let s = try await serve(bufferLimit: 64, replayLimit: 8)
        for i in 1...3 { await s.state.recordTap(bigTap(i)) }
        let client = try await VarlinkClient.connect(path: s.path)
        var iterator = client.stream("io.roombridge.State.Watch", parameters: ["since": 3]).makeAsyncIterator()
        #expect(try #require(try await iterator.next())["resumedAfter"]?.intValue == 3)
        await s.state.recordTap(bigTap(4))
        #expect(try #require(try await iterator.next())["event"]?["seq"]?.intValue == 4)
        await client.close()
        await stop(s)
    }

    /// `since` older than the ring (events 1...2 are gone from a ring of 8 after 10 events), or
    /// newer than the latest event (another run of the daemon): the whole state comes first.
    @Test func watchSinceOutsideTheRingResyncsWithTheState() async throws {
        let s = try await serve(bufferLimit: 64, replayLimit: 8)
        for i in 1...10 { await s.state.recordTap(bigTap(i)) }
        for since in [1, 99] {
            let client = try await VarlinkClient.connect(path: s.path)
            var iterator = client.stream("io.roombridge.State.Watch", parameters: ["since": .int(Int64(since))]).makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first["state"]?["seq"]?.intValue == 10, "since \(since)")
            #expect(first["resumedAfter"] == nil || first["resumedAfter"]?.isNull == true)
            await client.close()
        }
        // The oldest event still kept is 3: since 2 resumes.
        let again = try await VarlinkClient.connect(path: s.path)
        var iterator = again.stream("io.roombridge.State.Watch", parameters: ["since": 2]).makeAsyncIterator()
        #expect(try #require(try await iterator.next())["resumedAfter"]?.intValue == 2)
        #expect(try #require(try await iterator.next())["event"]?["seq"]?.intValue == 3)
        await again.close()
        await stop(s)
    }

    @Test func watchSinceMustNotBeNegative() async throws {
        let s = try await serve(bufferLimit: 64)
        let client = try await VarlinkClient.connect(path: s.path)
        var iterator = client.stream("io.roombridge.State.Watch", parameters: ["since": -1]).makeAsyncIterator()
        await #expect(throws: VarlinkError.invalidParameter("since")) { _ = try await iterator.next() }
        await client.close()
        await stop(s)
    }

    /// Watch needs a transport that posts replies (the socket server); an in-process call gets a
    /// clear refusal rather than a call that never ends, and leaves no subscriber behind.
    @Test func watchWithoutAPosterIsRefused() async throws {
        let state = SystemState()
        let service = try VarlinkService(
            vendor: "test", product: "test", version: "0", url: "",
            interfaces: [StateInterface(state: state, authorizer: Authorizer(groupName: "wheel", gid: nil), setLogLevel: { _ in })])
        let replies = await service.replies(to: VarlinkCall(method: "io.roombridge.State.Watch", more: true))
        #expect(replies.map(\.error) == ["org.varlink.service.MethodNotImplemented"])
        #expect(await state.snapshot().counters.subscribers == 0)
    }

    @Test func shutdownTellsWatchers() async throws {
        let s = try await serve(bufferLimit: 64)
        let client = try await VarlinkClient.connect(path: s.path)
        var iterator = client.stream("io.roombridge.State.Watch").makeAsyncIterator()
        _ = try await iterator.next()
        await s.state.shutdown()
        await #expect(throws: VarlinkError("io.roombridge.State.ShuttingDown")) {
            _ = try await iterator.next()
        }
        await client.close()
        await stop(s)
    }

    @Test func mutationNeedsTheGroup() async throws {
        // Tests run as some uid; a group nobody is in and no root means refused — unless we are root.
        let s = try await serve(bufferLimit: 8, group: 4_000_000)
        let client = try await VarlinkClient.connect(path: s.path)
        if getuid() == 0 {
            _ = try await client.call("io.roombridge.State.SetLogLevel", parameters: ["level": "info"])
        } else {
            await #expect(throws: VarlinkError.self) {
                _ = try await client.call("io.roombridge.State.SetLogLevel", parameters: ["level": "info"])
            }
        }
        await client.close()
        await stop(s)
    }
}

@Suite struct AuthorizerTests {
    @Test func rootGroupMembersAndOthers() {
        let a = Authorizer(groupName: "roombridge", gid: 900)
        #expect(a.allows(PeerCredentials(pid: 1, uid: 0, gid: 0)))
        #expect(a.allows(PeerCredentials(pid: 1, uid: 1000, gid: 900)))
        #expect(a.allows(PeerCredentials(pid: 1, uid: 1000, gid: 1000, groups: [27, 900])))
        #expect(!a.allows(PeerCredentials(pid: 1, uid: 1000, gid: 1000, groups: [27])))
        #expect(!a.allows(nil))
        let missing = Authorizer(groupName: "nogroup-here", gid: nil)
        #expect(missing.allows(PeerCredentials(pid: 1, uid: 0, gid: 0)))
        #expect(!missing.allows(PeerCredentials(pid: 1, uid: 1000, gid: 1000)))
    }

    @Test func refusalNamesTheGroup() {
        let a = Authorizer(groupName: "roombridge", gid: 900)
        do {
            try a.requireMutation(VarlinkCallContext(peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000)))
            Issue.record("not refused")
        } catch {
            #expect(error.name == "io.roombridge.State.PermissionDenied")
            #expect(error.parameters["group"] == "roombridge")
        }
    }

    @Test func idlParses() throws {
        let def = try VarlinkInterfaceDefinition(parsing: StateInterface.idl)
        #expect(def.name == "io.roombridge.State")
    }

    /// The IDL's outcome kinds and refusals are the Swift enums' cases, so no kind or refusal reaches a client undeclared.
    @Test func outcomeEnumsMatchTheIDL() throws {
        let def = try VarlinkInterfaceDefinition(parsing: StateInterface.idl)
        guard case .struct(let fields)? = def.types["LendingOutcome"] else { Issue.record("no LendingOutcome"); return }
        let types = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.type) })
        #expect(types["kind"] == .enum(LendingOutcome.Kind.allCases.map(\.rawValue)))
        #expect(types["refusal"] == .optional(.enum(LendingOutcome.Refusal.allCases.map(\.rawValue))))
    }
}
