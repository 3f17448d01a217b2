import Synchronization
import Varlink

/// The server side of `org.varlink.certification`, after python-varlink's reference server
/// (`CertService` in `varlink/tests/test_certification.py`): each client (one `Start`) must
/// call the methods in order, each with exactly the call the script expects (method, flags and
/// parameters); the first deviation answers `CertificationError(wants, got)` and forgets the
/// client, so a later `End` fails too (that is how a wrong `oneway` Test11 is reported).
/// An unknown `client_id` answers `ClientIdError`, as varlink-go's server does.
final class CertificationService: VarlinkInterface {
    let name = CertificationScript.interfaceName
    var interfaceDescription: String { CertificationScript.idl }

    /// client_id -> the method that client must call next.
    private let clients = Mutex<[String: String]>([:])

    func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        let method = call.methodName
        let clientID: String
        if method == "Start" {
            clientID = Self.newClientID()
            clients.withLock { $0[clientID] = "Start" }
        } else {
            clientID = call.parameters["client_id"]?.stringValue ?? ""
        }
        try advance(clientID, calling: method)
        let expected = CertificationScript.expectedCall(method, clientID: clientID)
        guard CertificationScript.matches(call, expected) else {
            clients.withLock { _ = $0.removeValue(forKey: clientID) }
            throw Self.certificationError(wants: expected.json, got: call.json)
        }
        switch method {
        case "Start":
            try await replies.reply(["client_id": .string(clientID)])
        case "Test10":
            for (i, text) in CertificationScript.moreReplies.enumerated() {
                try await replies.reply(["string": .string(text)], continues: i < 9)
            }
        case "End":
            clients.withLock { _ = $0.removeValue(forKey: clientID) }
            try await replies.reply(CertificationScript.reply(to: method))
        default:
            try await replies.reply(CertificationScript.reply(to: method))
        }
    }

    /// Checks that `method` is the one this client must call now and moves it on.
    private func advance(_ clientID: String, calling method: String) throws(VarlinkError) {
        let next: String? = clients.withLock { $0[clientID] }
        guard let next else { throw VarlinkError("\(name).ClientIdError") }
        guard next == method else {
            clients.withLock { _ = $0.removeValue(forKey: clientID) }
            throw Self.certificationError(wants: ["method": .string("\(name).\(next)")],
                                          got: ["method": .string("\(name).\(method)")])
        }
        clients.withLock { $0[clientID] = CertificationScript.method(after: method) ?? "Start" }
    }

    private static func certificationError(wants: JSONValue, got: JSONValue) -> VarlinkError {
        VarlinkError("\(CertificationScript.interfaceName).CertificationError", parameters: ["wants": wants, "got": got])
    }

    /// 128 random bits in hex, like the reference's `os.urandom(16)`.
    private static func newClientID() -> String {
        var rng = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let s = String(rng.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }.joined()
    }
}
