#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import Varlink
@testable import VarlinkNIO

@Suite struct SocketTests {
    @Test func clientCallsAndErrors() async throws {
        var socketPath = ""
        try await withServer { path, _ in
            socketPath = path
            let client = try await VarlinkClient.connect(path: path)
            let info = try await client.call("org.varlink.service.GetInfo")
            #expect(info["interfaces"] == ["org.varlink.service", "org.example.test"])
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 2, "b": 40]) == ["sum": 42])
            await #expect(throws: VarlinkError("org.example.test.Custom", parameters: ["reason": "because"])) {
                try await client.call("org.example.test.Fail", parameters: ["kind": "varlink"])
            }
            await #expect(throws: VarlinkError.invalidParameter("b")) {
                try await client.call("org.example.test.Add", parameters: ["a": 2])
            }
            struct AddIn: Encodable { var a: Int; var b: Int }
            struct AddOut: Decodable { var sum: Int }
            #expect(try await client.call("org.example.test.Add", AddIn(a: 1, b: 2), returning: AddOut.self).sum == 3)
            // The connection is still fine after errors.
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 0, "b": 0]) == ["sum": 0])
            try await client.oneway("org.example.test.Note", parameters: ["text": "bye"])
            await client.close()
        }
        // Shutdown removed the socket file we created.
        #expect(access(socketPath, F_OK) != 0)
    }

    @Test func concurrentCallsArePipelinedAndMatched() async throws {
        try await withServer { path, _ in
            let client = try await VarlinkClient.connect(path: path)
            try await withThrowingTaskGroup(of: (Int64, JSONValue?).self) { group in
                for i in 0..<20 {
                    group.addTask {
                        (Int64(i), try await client.call("org.example.test.Add", parameters: ["a": .int(Int64(i)), "b": .int(Int64(i))])["sum"])
                    }
                }
                for try await (i, sum) in group { #expect(sum == .int(2 * i)) }
            }
            await client.close()
        }
    }

    @Test func pipelinedCallsAreAnsweredInOrder() async throws {
        let probe = Probe()
        try await withServer(probe: probe) { path, _ in
            let raw = try RawClient(path: path)
            let bytes = VarlinkCall(method: "org.example.test.Sleep", parameters: ["ms": 300, "tag": "a"]).framedBytes()
                + VarlinkCall(method: "org.example.test.Sleep", parameters: ["ms": 0, "tag": "b"]).framedBytes()
                + VarlinkCall(method: "org.example.test.Note", parameters: ["text": "c"], oneway: true).framedBytes()
                + VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 1]).framedBytes()
            try await raw.send(bytes)
            #expect(try await raw.readReply().parameters == ["tag": "a"])
            #expect(try await raw.readReply().parameters == ["tag": "b"])
            #expect(try await raw.readReply().parameters == ["sum": 2])
            #expect(probe.entries == ["start a", "end a", "start b", "end b", "note c"])
        }
    }

    @Test func immediateRepliesOnAnIdleConnectionOnly() async throws {
        let probe = Probe()
        try await withServer(probe: probe) { path, _ in
            let raw = try RawClient(path: path)
            try await raw.send(VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 2]))
            #expect(try await raw.readReply().parameters == ["sum": 3])
            #expect(probe.immediate.load(ordering: .relaxed) == 1)
            // Behind a call in progress it waits its turn (the reply order above is the proof;
            // here: it was not answered at once).
            try await raw.send(VarlinkCall(method: "org.example.test.Sleep", parameters: ["ms": 200, "tag": "a"]).framedBytes()
                               + VarlinkCall(method: "org.example.test.Add", parameters: ["a": 2, "b": 2]).framedBytes())
            #expect(try await raw.readReply().parameters == ["tag": "a"])
            #expect(try await raw.readReply().parameters == ["sum": 4])
            #expect(probe.immediate.load(ordering: .relaxed) == 1)
            // Invalid parameters go the usual way and get the usual error.
            try await raw.send(VarlinkCall(method: "org.example.test.Add", parameters: ["a": 2]))
            #expect(try await raw.readReply().error == "org.varlink.service.InvalidParameter")
        }
    }

    @Test func offloadedCallsKeepTheirPlaceInTheOrder() async throws {
        let probe = Probe()
        try await withServer(probe: probe) { path, _ in
            let raw = try RawClient(path: path)
            func lookup(_ tag: String, wait: Bool = false) -> [UInt8] {
                VarlinkCall(method: "org.example.test.Lookup", parameters: ["tag": .string(tag), "wait": .bool(wait)]).framedBytes()
            }
            // On an idle connection: offloaded, not through the task.
            try await raw.send(lookup("a"))
            #expect(try await raw.readReply().parameters == ["tag": "a", "by": "offload"])
            // The calls read while an offloaded one runs wait for its reply; then they go the
            // usual ways, in order.
            _ = try await raw.send(lookup("b", wait: true)
                + VarlinkCall(method: "org.example.test.Sleep", parameters: ["ms": 0, "tag": "c"]).framedBytes()
                + VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 1]).framedBytes()
                + lookup("d"))
            try await eventually("the offloaded call runs") { probe.entries.contains("offload start b") }
            probe.openGate()
            #expect(try await raw.readReply().parameters == ["tag": "b", "by": "offload"])
            #expect(try await raw.readReply().parameters == ["tag": "c"])
            #expect(try await raw.readReply().parameters == ["sum": 2])
            #expect(try await raw.readReply().parameters == ["tag": "d", "by": "task"])
            #expect(probe.entries == ["offload start a", "offload end a", "offload start b", "offload end b",
                                      "start c", "end c", "task lookup d"])
            // Idle again: offloaded again; its errors are the usual replies.
            try await raw.send(lookup("e"))
            #expect(try await raw.readReply().parameters == ["tag": "e", "by": "offload"])
            try await raw.send(VarlinkCall(method: "org.example.test.Lookup", parameters: ["tag": "f", "fail": "varlink"]))
            let typed = try await raw.readReply()
            #expect(typed.error == "org.example.test.Custom")
            #expect(typed.parameters == ["reason": "offloaded"])
            try await raw.send(VarlinkCall(method: "org.example.test.Lookup", parameters: ["tag": "g", "fail": "swift"]))
            #expect(try await raw.readReply().error == "org.varlink.service.InternalError")
            try await raw.send(VarlinkCall(method: "org.example.test.Lookup", parameters: ["tag": 1]))
            #expect(try await raw.readReply().error == "org.varlink.service.InvalidParameter")
        }
    }

    @Test func aClientThatHalfClosesGetsTheOffloadedReplyAndWhatFollows() async throws {
        let probe = Probe()
        try await withServer(probe: probe) { path, _ in
            let raw = try RawClient(path: path)
            _ = try await raw.send(
                VarlinkCall(method: "org.example.test.Lookup", parameters: ["tag": "a", "wait": true]).framedBytes()
                + VarlinkCall(method: "org.example.test.Add", parameters: ["a": 2, "b": 2]).framedBytes())
            shutdown(raw.fd, Int32(SHUT_WR))
            try await eventually("the offloaded call runs") { probe.entries.contains("offload start a") }
            probe.openGate()
            #expect(try await raw.readReply().parameters == ["tag": "a", "by": "offload"])
            #expect(try await raw.readReply().parameters == ["sum": 4])
            try await raw.waitForClose()
        }
    }

    @Test func aClientGoneWhileItsCallIsOffloadedLeavesTheServerServing() async throws {
        let probe = Probe()
        try await withServer(probe: probe) { path, server in
            var raw: RawClient? = try RawClient(path: path)
            try await raw?.send(VarlinkCall(method: "org.example.test.Lookup", parameters: ["tag": "a", "wait": true]))
            try await eventually("the offloaded call runs") { probe.entries.contains("offload start a") }
            raw = nil  // closes the socket
            probe.openGate()
            try await eventually("the server has no connection left") { server.connectionCount == 0 }
            #expect(probe.entries.contains("offload end a"))
            let next = try RawClient(path: path)
            try await next.send(VarlinkCall(method: "org.example.test.Lookup", parameters: ["tag": "b"]))
            #expect(try await next.readReply().parameters == ["tag": "b", "by": "offload"])
        }
    }

    @Test func halfClosedClientGetsItsReplies() async throws {
        try await withServer { path, _ in
            let raw = try RawClient(path: path)
            try await raw.send(VarlinkCall(method: "org.example.test.Sleep", parameters: ["ms": 100, "tag": "a"]).framedBytes()
                               + VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 1]).framedBytes())
            shutdown(raw.fd, Int32(SHUT_WR))
            #expect(try await raw.readReply().parameters == ["tag": "a"])
            #expect(try await raw.readReply().parameters == ["sum": 2])
            try await raw.waitForClose()
        }
    }

    @Test func streaming() async throws {
        try await withServer { path, _ in
            let client = try await VarlinkClient.connect(path: path)
            var got: [JSONValue] = []
            for try await reply in client.stream("org.example.test.Count", parameters: ["n": 5]) { got.append(reply["i"] ?? .null) }
            #expect(got == [0, 1, 2, 3, 4])

            var partial: [JSONValue] = []
            do {
                for try await reply in client.stream("org.example.test.Fail", parameters: ["kind": "afterStream"]) {
                    partial.append(reply["i"] ?? .null)
                }
                Issue.record("expected the stream to throw")
            } catch let error as VarlinkError {
                #expect(error == VarlinkError("org.example.test.Custom", parameters: ["reason": "midway"]))
            }
            #expect(partial == [0])
            // A plain call on the same connection still works after the streams.
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 2]) == ["sum": 3])
            await client.close()
        }
    }

    @Test func clientHangUpCancelsHandler() async throws {
        let probe = Probe()
        try await withServer(probe: probe) { path, server in
            do {
                let raw = try RawClient(path: path)
                try await raw.send(VarlinkCall(method: "org.example.test.Wait", more: true))
                try await eventually("the handler started") { probe.started.load(ordering: .relaxed) == 1 }
            }  // raw client closed here
            try await eventually("the handler was cancelled") { probe.cancelled.load(ordering: .relaxed) == 1 }
            try await eventually("the server has no connection left") { server.connectionCount == 0 }

            // Same through VarlinkClient: abandoning a stream closes the connection.
            let client = try await VarlinkClient.connect(path: path)
            let task = Task {
                for try await _ in client.stream("org.example.test.Wait") {}
            }
            try await eventually("the second handler started") { probe.started.load(ordering: .relaxed) == 2 }
            task.cancel()
            try await eventually("the second handler was cancelled") { probe.cancelled.load(ordering: .relaxed) == 2 }
        }
    }

    @Test func shutdownCancelsStreamingHandlers() async throws {
        let probe = Probe()
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("s.sock")
        let server = try await VarlinkServer.bind(service: makeService(probe), configuration: .init(listen: .path(path)), logger: testLogger())
        let run = Task { try await server.run() }
        let client = try await VarlinkClient.connect(path: path)
        let stream = Task { () -> (any Error)? in
            do {
                for try await _ in client.stream("org.example.test.Wait") {}
                return nil
            } catch { return error }
        }
        try await eventually("the handler started") { probe.started.load(ordering: .relaxed) == 1 }
        server.beginShutdown()
        try await run.value
        await server.shutdown()  // after run() returned: returns at once
        #expect(probe.cancelled.load(ordering: .relaxed) == 1)
        #expect(await stream.value as? VarlinkClientError == .connectionClosed)
        #expect(access(path, F_OK) != 0)
        await #expect(throws: VarlinkClientError.socketNotFound(path: path)) { try await VarlinkClient.connect(path: path) }
    }

    /// Issue 33: at SIGTERM, callers whose calls were read but not yet running got an end of
    /// file. Now the running call finishes, every call already read is answered with the
    /// service's shutting-down error, and only then does the connection close.
    @Test func callsReadBeforeShutdownAreAnsweredNotDropped() async throws {
        let probe = Probe()
        let shuttingDown = VarlinkError("org.example.test.ShuttingDown")
        try await withServer(probe: probe, configure: { $0.shuttingDownReply = shuttingDown }) { path, server in
            let raw = try RawClient(path: path)
            // The first call runs until the shutdown has begun (a fixed sleep could end first on a busy machine,
            // and then the later calls were answered normally: a flaky test).
            try await raw.send(VarlinkCall(method: "org.example.test.Hold", parameters: ["tag": "running"]).framedBytes()
                + VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 1]).framedBytes()
                + VarlinkCall(method: "org.example.test.Note", parameters: ["text": "x"], oneway: true).framedBytes()
                + VarlinkCall(method: "org.example.test.Add", parameters: ["a": 2, "b": 2]).framedBytes())
            try await eventually("the first call to run") { probe.entries.contains("start running") }
            server.beginShutdown(gracePeriod: .seconds(5))
            probe.release()
            let stopping = Task { await server.shutdown(gracePeriod: .seconds(5)) }
            #expect(try await raw.readReply().parameters == ["tag": "running"])
            #expect(try await raw.readReply().varlinkError == shuttingDown)
            #expect(try await raw.readReply().varlinkError == shuttingDown)  // the oneway call got none
            try await raw.waitForClose()
            await stopping.value
        }
    }

    @Test func oversizedMessageGetsErrorThenClose() async throws {
        try await withServer(configure: { $0.maxMessageSize = 1024 }) { path, _ in
            let raw = try RawClient(path: path)
            try await raw.send([UInt8](repeating: UInt8(ascii: " "), count: 4000))
            #expect(try await raw.readReply().varlinkError == .invalidParameter(""))
            try await raw.waitForClose()
            // The server still serves others.
            let client = try await VarlinkClient.connect(path: path)
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 1]) == ["sum": 2])
            await client.close()
        }
    }

    @Test func stalledPartialMessageIsDisconnected() async throws {
        try await withServer(configure: { $0.stallTimeout = .milliseconds(300) }) { path, _ in
            let idle = try RawClient(path: path)  // connected, sends nothing: must stay open
            let stalled = try RawClient(path: path)
            try await stalled.send("{\"method\":\"org.varlink")
            try await stalled.waitForClose()
            try await idle.send(VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 2]))
            #expect(try await idle.readReply().parameters == ["sum": 3])
        }
    }

    @Test func connectionLimit() async throws {
        try await withServer(configure: { $0.maxConnections = 2 }) { path, server in
            let a = try RawClient(path: path)
            let b = try RawClient(path: path)
            for c in [a, b] {
                try await c.send(VarlinkCall(method: "org.varlink.service.GetInfo"))
                #expect(try await c.readReply().error == nil)
            }
            let over = try RawClient(path: path)
            try await over.waitForClose()
            #expect(server.connectionCount == 2)
            _ = consume a
            try await eventually("the server closed the released connection") { server.connectionCount == 1 }
            let c = try RawClient(path: path)
            try await c.send(VarlinkCall(method: "org.varlink.service.GetInfo"))
            #expect(try await c.readReply().error == nil)
            _ = b
        }
    }

    @Test func malformedInputKeepsServing() async throws {
        try await withServer { path, _ in
            let bad = try RawClient(path: path)
            let good = try await VarlinkClient.connect(path: path)
            try await bad.send("{oops\0")
            #expect(try await bad.readReply().varlinkError == .invalidParameter(""))
            try await bad.send("{\"method\":\"org.example.test.Add\",\"more\":\"yes\"}\0")
            #expect(try await bad.readReply().varlinkError == .invalidParameter("more"))
            try await bad.send([0xFF, 0xFE, 0])  // invalid UTF-8
            #expect(try await bad.readReply().varlinkError == .invalidParameter(""))
            // Same connection, now well-formed.
            try await bad.send(VarlinkCall(method: "org.example.test.Add", parameters: ["a": 5, "b": 5]))
            #expect(try await bad.readReply().parameters == ["sum": 10])
            #expect(try await good.call("org.varlink.service.GetInfo")["vendor"] == "Example")
            await good.close()
        }
    }

    @Test func peerCredentials() async throws {
        try await withServer { path, _ in
            let client = try await VarlinkClient.connect(path: path)
            let me = try await client.call("org.example.test.WhoAmI")
            #expect(me["pid"] == .int(Int64(getpid())))
            #expect(me["uid"] == .int(Int64(getuid())))
            #expect(me["gid"] == .int(Int64(getgid())))
            var groups = [gid_t](repeating: 0, count: 256)
            let n = getgroups(Int32(groups.count), &groups)
            #expect(me["groups"] == .array(groups.prefix(Int(max(n, 0))).map { .int(Int64($0)) }))
            await client.close()
        }
    }

    @Test func staleSocketIsReplaced() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("stale.sock")
        close(try makeBoundSocket(path, listen: true))  // leaves a socket file nobody listens on
        await #expect(throws: VarlinkClientError.connectionRefused(path: path)) { try await VarlinkClient.connect(path: path) }
        let server = try await VarlinkServer.bind(service: makeService(Probe()), configuration: .init(listen: .path(path)), logger: testLogger())
        let run = Task { try await server.run() }
        let client = try await VarlinkClient.connect(path: path)
        #expect(try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 1]) == ["sum": 2])
        await client.close()
        await server.shutdown()
        try await run.value
    }

    @Test func liveSocketIsNotStolen() async throws {
        try await withServer { path, _ in
            await #expect(throws: VarlinkServerError.socketInUse(path: path)) {
                _ = try await VarlinkServer.bind(service: makeService(Probe()), configuration: .init(listen: .path(path)), logger: testLogger())
            }
            let client = try await VarlinkClient.connect(path: path)
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 1]) == ["sum": 2])
            await client.close()
        }
    }

    @Test func nonSocketPathIsRefused() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("regular")
        let fd = open(path, O_CREAT | O_WRONLY, 0o644)
        close(fd)
        await #expect(throws: VarlinkServerError.notASocket(path: path)) {
            _ = try await VarlinkServer.bind(service: makeService(Probe()), configuration: .init(listen: .path(path)), logger: testLogger())
        }
        #expect(access(path, F_OK) == 0)
        await #expect(throws: VarlinkClientError.connectionRefused(path: path)) { try await VarlinkClient.connect(path: path) }
        await #expect(throws: VarlinkClientError.socketNotFound(path: dir.file("missing"))) {
            try await VarlinkClient.connect(path: dir.file("missing"))
        }
    }

    @Test func socketModeAndGroup() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("m.sock")
        let server = try await VarlinkServer.bind(
            service: makeService(Probe()), configuration: .init(listen: .path(path, mode: 0o600, group: getgid())), logger: testLogger())
        var st = stat()
        #expect(lstat(path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(st.st_gid == getgid())
        await server.shutdown()  // never ran: still closes and removes the file
        #expect(access(path, F_OK) != 0)
    }

    @Test(arguments: [true, false])
    func inheritedSocketIsAdopted(alreadyListening: Bool) async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("inherited.sock")
        let fd = try makeBoundSocket(path, listen: alreadyListening)
        let server = try await VarlinkServer.bind(
            service: makeService(Probe()), configuration: .init(listen: .inheritedSocket(fileDescriptor: fd)), logger: testLogger())
        let run = Task { try await server.run() }
        let client = try await VarlinkClient.connect(path: path)
        #expect(try await client.call("org.example.test.Add", parameters: ["a": 3, "b": 4]) == ["sum": 7])
        await client.close()
        await server.shutdown()
        try await run.value
        #expect(access(path, F_OK) == 0)  // never unlink an inherited socket's file
        // The server owned the fd and closed it: nobody listens any more.
        await #expect(throws: VarlinkClientError.connectionRefused(path: path)) { try await VarlinkClient.connect(path: path) }
    }

    @Test func systemdActivationEnvironment() throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let s1 = try makeBoundSocket(dir.file("a.sock"), listen: true)
        let s2 = try makeBoundSocket(dir.file("b.sock"), listen: true)
        // Consecutive descriptors, like systemd's 3, 4, ...: duplicate them high up.
        let a = fcntl(s1, F_DUPFD, 800)
        let b = fcntl(s2, F_DUPFD, a + 1)
        close(s1)
        close(s2)
        defer { close(a); close(b) }
        try #require(a >= 800 && b == a + 1, "could not place the sockets at consecutive descriptors")
        typealias Listen = VarlinkServerConfiguration.Listen
        let pid = getpid()
        let env = ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "other:varlink"]
        #expect(Listen.activatedSocket(environment: env, pid: pid, firstDescriptor: a, name: nil) == .inheritedSocket(fileDescriptor: a))
        #expect(Listen.activatedSocket(environment: env, pid: pid, firstDescriptor: a, name: "varlink") == .inheritedSocket(fileDescriptor: b))
        #expect(Listen.activatedSocket(environment: env, pid: pid, firstDescriptor: a, name: "missing") == nil)
        #expect(Listen.activatedSocket(environment: env, pid: pid + 1, firstDescriptor: a, name: nil) == nil)  // meant for another process
        #expect(Listen.activatedSocket(environment: [:], pid: pid, firstDescriptor: a, name: nil) == nil)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        #expect(Listen.activatedSocket(environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "1"], pid: pid, firstDescriptor: fds[0], name: nil) == nil)
        #expect(fcntl(a, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func invalidInheritedSocket() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        await #expect(throws: VarlinkServerError.self) {
            _ = try await VarlinkServer.bind(
                service: makeService(Probe()), configuration: .init(listen: .inheritedSocket(fileDescriptor: fds[0])), logger: testLogger())
        }
    }

    @Test func rejectedPeersAreClosedNotLeaked() async throws {
        try await withServer(configure: { $0.acceptPeer = { _ in false } }) { path, server in
            for _ in 0..<20 {
                let raw = try RawClient(path: path)
                // Without the initializer closing the child, NIO leaks the fd and this times out.
                try await raw.waitForClose()
            }
            try await eventually("only the listening socket is left") { serverSocketCount(path: path) == 1 }
            #expect(server.connectionCount == 0)
        }
        // A policy that inspects credentials.
        try await withServer(configure: { $0.acceptPeer = { peer in peer?.uid == getuid() } }) { path, _ in
            let client = try await VarlinkClient.connect(path: path)
            #expect(try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 1]) == ["sum": 2])
            await client.close()
        }
    }

    @Test func noSocketLeakAfterManyConnections() async throws {
        try await withServer(configure: { $0.maxConnections = 3; $0.maxMessageSize = 512 }) { path, server in
            #expect(serverSocketCount(path: path) == 1)
            for _ in 0..<10 {
                // The previous round's connections are closed by the client side; wait until
                // the server has noticed so the limit applies to this round only.
                try await eventually("the server has no connection left") { server.connectionCount == 0 }
                // Normal call through the client.
                let client = try await VarlinkClient.connect(path: path)
                _ = try await client.call("org.varlink.service.GetInfo")
                // Malformed JSON, oversized message, hang-up mid-handler.
                let bad = try RawClient(path: path)
                try await bad.send("garbage\0")
                _ = try await bad.readReply()
                let big = try RawClient(path: path)
                try await big.send([UInt8](repeating: 0x20, count: 1000))
                try await big.waitForClose()
                // Over the connection limit (client + bad hold two slots, the third is free
                // again once `big` is gone, so fill it and add one more).
                try await eventually("the server closed the oversized connection") { server.connectionCount == 2 }
                let filler = try RawClient(path: path)
                try await filler.send(VarlinkCall(method: "org.example.test.Wait"))
                try await eventually("the filler connection is accepted") { server.connectionCount == 3 }
                let over = try RawClient(path: path)
                try await over.waitForClose()
                _ = filler
                await client.close()
            }
            try await eventually("the server has no connection left") { server.connectionCount == 0 }
            try await eventually("only the listening socket is left") { serverSocketCount(path: path) == 1 }
        }
    }

    @Test func slowReaderDoesNotMakeTheServerBuffer() async throws {
        let probe = Probe()
        try await withServer(probe: probe) { path, _ in
            let raw = try RawClient(path: path)
            let payload = String(repeating: "p", count: 1024)
            try await raw.send(VarlinkCall(method: "org.example.test.Count", parameters: ["n": 1_000_000, "payload": .string(payload)], more: true))
            // Wait until the handler is stuck on backpressure: the count stops moving (without
            // backpressure it never does, and this times out).
            var last = -1
            let stuck = try await eventually("the handler stops on backpressure", poll: .milliseconds(100)) { () -> Int? in
                let now = probe.sent.load(ordering: .relaxed)
                defer { last = now }
                return now == last && now > 0 ? now : nil
            }
            // Socket buffers plus NIO's 64 KiB high watermark hold a few hundred 1 KiB replies;
            // without backpressure the handler would have produced hundreds of thousands by now.
            #expect(stuck > 0)
            #expect(stuck < 5000, "handler produced \(stuck) replies for a client that reads nothing")
            // Reading lets it continue. The client reads until it does: what the handler produced before it
            // stopped comes first, and on a loaded machine that is more than a fixed count (the task can hand
            // thousands of replies to the loop before the loop writes them and the channel turns unwritable; a
            // CI run read 2,000 and waited in vain). A liveness check: what it guards against is a handler that
            // never resumes. Under a full CI run the whole test took 14–23 s (0.6 s alone), so 120 s.
            try await eventually("the handler resumes once the client reads", timeout: .seconds(120)) {
                for _ in 0..<100 { _ = try await raw.readReply() }
                return probe.sent.load(ordering: .relaxed) > stuck + 1000
            }
        }
    }
}
