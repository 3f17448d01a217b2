#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import Varlink
import VarlinkNIO

/// Is `python3 -c "import varlink"` available? (pip install varlink)
let pythonVarlinkAvailable: Bool = {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", "import varlink"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    do { try p.run() } catch { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
}()

/// Talks to our server with the reference python implementation (its client and its IDL scanner).
let pythonInteropScript = #"""
import sys, varlink
path = sys.argv[1]
client = varlink.Client(address="unix:" + path)
with client.open("org.varlink.service") as svc:
    info = svc.GetInfo()
    assert info["vendor"] == "Example", info
    assert "org.example.test" in info["interfaces"], info
    desc = svc.GetInterfaceDescription("org.example.test")["description"]
    varlink.Interface(desc)  # python's own scanner must accept our IDL text
    varlink.Interface(svc.GetInterfaceDescription("org.varlink.service")["description"])
with client.open("org.example.test", namespaced=False) as t:
    assert t.Add(2, 40) == {"sum": 42}
    person = {"name": "Ada", "age": 36, "kind": "staff", "addresses": [{"street": "Main 1", "zip": 1}], "labels": {"team": "core"}}
    out = t.Echo(person, "hi")
    assert out["person"]["name"] == "Ada" and out["note"] == "hi", out
    got = [r["i"] for r in t.Count(4, None, _more=True)]
    assert got == [0, 1, 2, 3], got
    try:
        t.Fail("varlink")
        raise SystemExit("expected an error")
    except varlink.VarlinkError as e:
        assert e.error() == "org.example.test.Custom", e.error()
        assert e.parameters()["reason"] == "because", e.parameters()
    try:
        t.NotYet()
        raise SystemExit("expected MethodNotImplemented")
    except varlink.MethodNotImplemented:
        pass
print("python-varlink interop OK")
"""#

/// A python-varlink server for our client to talk to: argv[1] socket path, argv[2] a directory.
let pythonServerScript = #"""
import os, sys, varlink
path, directory = sys.argv[1], sys.argv[2]
with open(os.path.join(directory, "org.example.py.varlink"), "w") as f:
    f.write("""interface org.example.py
method Ping(ping: string) -> (pong: string)
method Count(n: int) -> (i: int)
method Fail() -> ()
error Oops (why: string)
""")
service = varlink.Service(vendor="py", product="py", version="1", url="", interface_dir=directory)

@service.interface("org.example.py")
class Impl:
    def Ping(self, ping):
        return {"pong": ping}

    def Count(self, n, _more=False):
        for i in range(n):
            yield {"i": i, "_continues": i < n - 1}

    def Fail(self):
        raise varlink.VarlinkError({"error": "org.example.py.Oops", "parameters": {"why": "asked to"}})

class Handler(varlink.RequestHandler):
    service = service

server = varlink.ThreadingServer("unix:" + path, Handler)
server.serve_forever()
"""#

@Suite struct InteropTests {
    @Test(.enabled(if: pythonVarlinkAvailable, "needs python3 with the varlink package (pip install varlink)"))
    func pythonVarlinkClient() async throws {
        try await withServer { path, _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", pythonInteropScript, path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            let status: Int32 = try await withCheckedThrowingContinuation { continuation in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do { try process.run() } catch { continuation.resume(throwing: error) }
            }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(status == 0, "python-varlink client failed:\n\(text)")
            #expect(text.contains("python-varlink interop OK"), "\(text)")
        }
    }

    @Test(.enabled(if: pythonVarlinkAvailable, "needs python3 with the varlink package (pip install varlink)"))
    func clientAgainstPythonVarlinkServer() async throws {
        let dir = try TempDir()
        defer { dir.remove() }
        let path = dir.file("py.sock")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", pythonServerScript, path, dir.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let (exited, exitContinuation) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exitContinuation.yield($0.terminationStatus); exitContinuation.finish() }
        try process.run()
        // SIGKILL: a child spawned from a cooperative thread inherits its blocked SIGTERM.
        func stop() async {
            kill(process.processIdentifier, SIGKILL)
            for await _ in exited {}
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await talkToPythonServer(path: path) }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    throw SocketTestError("timed out talking to the python-varlink server")
                }
                try await group.next()
                group.cancelAll()
            }
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}

func talkToPythonServer(path: String) async throws {
    try await eventually("the python server's socket exists") { access(path, F_OK) == 0 }
    let client = try await VarlinkClient.connect(path: path)
    #expect(try await client.call("org.example.py.Ping", parameters: ["ping": "hello"]) == ["pong": "hello"])
    var got: [JSONValue] = []
    for try await reply in client.stream("org.example.py.Count", parameters: ["n": 3]) { got.append(reply["i"] ?? .null) }
    #expect(got == [0, 1, 2])
    await #expect(throws: VarlinkError("org.example.py.Oops", parameters: ["why": "asked to"])) {
        try await client.call("org.example.py.Fail")
    }
    let info = try await client.call("org.varlink.service.GetInfo")
    #expect(info["interfaces"]?.arrayValue?.contains("org.example.py") == true)
    await #expect(throws: VarlinkError.methodNotFound("Nope")) { try await client.call("org.example.py.Nope") }
    // python-varlink streams even when the call did not ask for `more`; the client must
    // not mis-pair those replies with later calls: it fails the call and drops the connection.
    do {
        _ = try await client.call("org.example.py.Count", parameters: ["n": 2])
        Issue.record("expected a protocol error")
    } catch let error as VarlinkClientError {
        if case .protocolError = error {} else { Issue.record("unexpected \(error)") }
    }
    try await client.closeFuture.get()
    await #expect(throws: VarlinkClientError.self) { try await client.call("org.example.py.Ping", parameters: ["ping": "x"]) }
    await client.close()
}
