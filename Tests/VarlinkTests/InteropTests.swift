#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
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
}
