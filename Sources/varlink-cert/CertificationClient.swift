import Varlink
import VarlinkNIO

/// A certification step that went wrong, with what to look at.
struct CertificationFailure: Error, CustomStringConvertible {
    var method: String
    var problem: String
    var description: String { "\(CertificationScript.interfaceName).\(method): \(problem)" }
}

/// The client side of `org.varlink.certification`, after the reference clients (python-varlink's
/// `run_client`, varlink-go's `run_client`): one connection, each call's parameters are the
/// previous reply plus `client_id`, Test10 with `more`, Test11 `oneway`, then End.
/// Unlike the reference clients it also checks every reply: against the method's output in the
/// IDL and, where the reference servers agree on them, against the expected values.
struct CertificationClient {
    let client: VarlinkClient
    let definition: VarlinkInterfaceDefinition
    /// Receives one line per step, for the log.
    let report: (String) -> Void

    init(client: VarlinkClient, report: @escaping (String) -> Void) throws {
        self.client = client
        self.definition = try VarlinkInterfaceDefinition(parsing: CertificationScript.idl)
        self.report = report
    }

    func run() async throws {
        let start = try await call("Start", [:])
        guard let clientID = start["client_id"]?.stringValue else {
            throw CertificationFailure(method: "Start", problem: "no client_id in \(JSONValue.object(start))")
        }
        var previous: [String: JSONValue] = [:]
        for method in CertificationScript.order.dropFirst() {
            var parameters = previous
            parameters["client_id"] = .string(clientID)
            switch method {
            case "Test01", "End":
                previous = try await call(method, ["client_id": .string(clientID)])
            case "Test10":
                previous = ["last_more_replies": .array(try await stream(method, parameters).map { $0["string"] ?? .null })]
            case "Test11":
                try await client.oneway(qualified(method), parameters: parameters)
                report("\(method): sent oneway")
            default:
                previous = try await call(method, parameters)
            }
        }
    }

    private func qualified(_ method: String) -> String { "\(CertificationScript.interfaceName).\(method)" }

    private func call(_ method: String, _ parameters: [String: JSONValue]) async throws -> [String: JSONValue] {
        let reply: [String: JSONValue]
        do {
            reply = try await client.call(qualified(method), parameters: parameters)
        } catch let error as VarlinkError {
            throw CertificationFailure(method: method, problem: "the server answered \(error)")
        }
        try check(method, reply)
        report("\(method): \(JSONValue.object(reply))")
        return reply
    }

    private func stream(_ method: String, _ parameters: [String: JSONValue]) async throws -> [[String: JSONValue]] {
        var replies: [[String: JSONValue]] = []
        do {
            for try await reply in client.stream(qualified(method), parameters: parameters) {
                try check(method, reply, expecting: ["string": .string(CertificationScript.moreReplies[min(replies.count, 9)])])
                report("\(method): \(JSONValue.object(reply))")
                replies.append(reply)
            }
        } catch let error as VarlinkError {
            throw CertificationFailure(method: method, problem: "the server answered \(error)")
        }
        guard replies.count == CertificationScript.moreReplies.count else {
            throw CertificationFailure(method: method, problem: "\(replies.count) replies, expected \(CertificationScript.moreReplies.count)")
        }
        return replies
    }

    /// The reply must fit the method's output in the IDL, and equal the expected value for every
    /// method but Start (the server's client_id) and Test09 (the reference servers' MyType values
    /// differ). Fields the IDL does not declare are ignored, as a client must for a newer
    /// server's additions (python-varlink's reference server adds `client_id` to Test09's reply).
    private func check(_ method: String, _ reply: [String: JSONValue], expecting: [String: JSONValue]? = nil) throws {
        guard let output = definition.methods[method]?.output else { return }
        if let bad = definition.firstInvalidField(reply, against: output, allowUnknownFields: true) {
            throw CertificationFailure(method: method, problem: "reply field '\(bad)' does not match the IDL: \(JSONValue.object(reply))")
        }
        guard method != "Start", method != "Test09" else { return }
        let declared = reply.filter { field in output.contains { $0.name == field.key } }
        let wanted = expecting ?? CertificationScript.reply(to: method)
        guard CertificationScript.equivalent(.object(declared), .object(wanted)) else {
            throw CertificationFailure(method: method, problem: "got \(JSONValue.object(reply)), expected \(JSONValue.object(wanted))")
        }
    }
}
