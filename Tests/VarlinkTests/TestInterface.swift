import Dispatch
import Synchronization
import Varlink

/// Observations shared between a test and the handlers it drives.
final class Probe: Sendable {
    let sent = Atomic<Int>(0)
    let started = Atomic<Int>(0)
    let cancelled = Atomic<Int>(0)
    /// Calls answered through `immediateReply` (without a task).
    let immediate = Atomic<Int>(0)
    let log = Mutex<[String]>([])

    func record(_ s: String) { log.withLock { $0.append(s) } }
    var entries: [String] { log.withLock { $0 } }

    /// `Hold` calls wait here until ``release()``: a call that is surely still running when the test acts.
    private let holds = Mutex<(released: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func hold() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let go = holds.withLock { s -> Bool in
                if s.released { return true }
                s.waiting.append(c)
                return false
            }
            if go { c.resume() }
        }
    }

    func release() {
        let waiting = holds.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.released = true
            defer { s.waiting = [] }
            return s.waiting
        }
        for c in waiting { c.resume() }
    }

    /// Offloaded `Lookup` calls with `wait` block their thread here until ``openGate()``.
    let gate = DispatchSemaphore(value: 0)
    func openGate() { gate.signal() }
}

struct TestFailure: Error {}

/// A realistic interface exercising nested types, enums, optionals, maps and streaming;
/// `Add` is answered at once (``VarlinkImmediateInterface``) and `Lookup` by offloaded work
/// (``VarlinkOffloadingInterface``) when the transport can.
struct TestInterface: VarlinkImmediateInterface, VarlinkOffloadingInterface {
    let probe: Probe

    var name: String { "org.example.test" }

    var interfaceDescription: String {
        """
        # An interface used by the Varlink tests.
        interface org.example.test

        # A postal address.
        type Address (
          street: string,
          zip: ?int
        )

        type Person (
          name: string,
          age: int,
          email: ?string,
          kind: (staff, student, guest),
          addresses: []Address,
          labels: [string]string,
          extra: ?object,
          scores: ?[]float
        )

        # Returns the person unchanged.
        method Echo(person: Person, note: ?string) -> (person: Person, note: ?string)

        method Add(a: int, b: int) -> (sum: int)

        # Answered by blocking work on another thread when the connection is idle, else by the
        # task; `by` says which. With `wait`, the work waits for the test's gate.
        method Lookup(tag: string, wait: ?bool, fail: ?(varlink, swift)) -> (tag: string, by: string)

        # Replies n times (with 'more'), each with the optional payload.
        method Count(n: int, payload: ?string) -> (i: int, payload: ?string)

        # Sleeps, then replies with its tag.
        method Sleep(ms: int, tag: string) -> (tag: string)

        # Waits until the test releases it, then replies with its tag.
        method Hold(tag: string) -> (tag: string)

        # Waits until cancelled.
        method Wait() -> ()

        method Fail(kind: (varlink, swift, afterStream, replyTwice)) -> ()

        method NotYet() -> ()

        method Note(text: string) -> ()

        # The caller's credentials as the server sees them.
        method WhoAmI() -> (pid: int, uid: int, gid: int, groups: []int)

        error Custom (reason: string)
        """
    }

    func immediateReply(to call: VarlinkCall, context: VarlinkCallContext) -> VarlinkReply? {
        guard call.methodName == "Add", let a = call.parameters["a"]?.intValue, let b = call.parameters["b"]?.intValue else { return nil }
        probe.immediate.add(1, ordering: .relaxed)
        return VarlinkReply(encodedParameters: JSONValue.object(["sum": .int(a + b)]).serializedBytes())
    }

    func offload(_ call: VarlinkCall, context: VarlinkCallContext) -> VarlinkOffload? {
        guard call.methodName == "Lookup", let tag = call.parameters["tag"]?.stringValue else { return nil }
        let wait = call.parameters["wait"]?.boolValue ?? false
        let fail = call.parameters["fail"]?.stringValue
        return VarlinkOffload(schedule: { work in DispatchQueue.global().async(execute: work) }) { [probe] in
            probe.record("offload start \(tag)")
            if wait { probe.gate.wait() }
            probe.record("offload end \(tag)")
            switch fail {
            case "varlink": throw VarlinkError("org.example.test.Custom", parameters: ["reason": "offloaded"])
            case "swift": throw TestFailure()
            default: return ["tag": .string(tag), "by": "offload"]
            }
        }
    }

    func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        let p = call.parameters
        switch call.methodName {
        case "Lookup":
            let tag = p["tag"]!.stringValue!
            probe.record("task lookup \(tag)")
            try await replies.reply(["tag": .string(tag), "by": "task"])
        case "Echo":
            var out: [String: JSONValue] = ["person": p["person"]!]
            if let note = p["note"], !note.isNull { out["note"] = note }
            try await replies.reply(out)
        case "Add":
            try await replies.reply(["sum": .int(p["a"]!.intValue! + p["b"]!.intValue!)])
        case "Count":
            let n = Int(p["n"]!.intValue!)
            var reply: [String: JSONValue] = [:]
            if let payload = p["payload"], !payload.isNull { reply["payload"] = payload }
            for i in 0..<n {
                reply["i"] = .int(Int64(i))
                try await replies.reply(reply, continues: i < n - 1)
                probe.sent.add(1, ordering: .relaxed)
            }
        case "Sleep":
            let tag = p["tag"]!.stringValue!
            probe.record("start \(tag)")
            try await Task.sleep(for: .milliseconds(p["ms"]!.intValue!))
            probe.record("end \(tag)")
            try await replies.reply(["tag": .string(tag)])
        case "Hold":
            let tag = p["tag"]!.stringValue!
            probe.record("start \(tag)")
            await probe.hold()
            try await replies.reply(["tag": .string(tag)])
        case "Wait":
            probe.started.add(1, ordering: .relaxed)
            do {
                try await Task.sleep(for: .seconds(600))
            } catch {
                probe.cancelled.add(1, ordering: .relaxed)
                throw error
            }
        case "Fail":
            switch p["kind"]!.stringValue! {
            case "varlink": throw VarlinkError("org.example.test.Custom", parameters: ["reason": "because"])
            case "swift": throw TestFailure()
            case "afterStream":
                try await replies.reply(["i": 0], continues: true)
                throw VarlinkError("org.example.test.Custom", parameters: ["reason": "midway"])
            default:
                try await replies.reply([:])
                do {
                    try await replies.reply([:])
                } catch {
                    probe.record("second reply refused")
                }
            }
        case "WhoAmI":
            guard let peer = context.peer else { throw VarlinkError.permissionDenied }
            try await replies.reply([
                "pid": .int(Int64(peer.pid)), "uid": .int(Int64(peer.uid)), "gid": .int(Int64(peer.gid)),
                "groups": .array(peer.groups.map { .int(Int64($0)) }),
            ])
        case "Note":
            probe.record("note \(p["text"]!.stringValue!)")
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }
}

func makeService(_ probe: Probe) throws -> VarlinkService {
    try VarlinkService(vendor: "Example", product: "Test", version: "1", url: "https://example.com",
                       interfaces: [TestInterface(probe: probe)])
}

let validPerson: JSONValue = [
    "name": "Ada", "age": 36, "kind": "staff",
    "addresses": [["street": "Main 1", "zip": 1234], ["street": "Side 2"]],
    "labels": ["team": "core"],
]
