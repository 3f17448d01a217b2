import Synchronization
import Testing
@testable import Varlink

@Suite struct ServiceTests {
    let probe = Probe()

    func replies(_ call: VarlinkCall) async throws -> [VarlinkReply] {
        try await makeService(probe).replies(to: call)
    }

    func single(_ method: String, _ params: [String: JSONValue] = [:]) async throws -> VarlinkReply {
        let r = try await replies(VarlinkCall(method: method, parameters: params))
        try #require(r.count == 1)
        return r[0]
    }

    @Test func getInfo() async throws {
        let r = try await single("org.varlink.service.GetInfo")
        #expect(r.error == nil)
        #expect(r.parameters == [
            "vendor": "Example", "product": "Test", "version": "1", "url": "https://example.com",
            "interfaces": ["org.varlink.service", "org.example.test"],
        ])
    }

    @Test func getInterfaceDescription() async throws {
        let r = try await single("org.varlink.service.GetInterfaceDescription", ["interface": "org.example.test"])
        #expect(r.parameters["description"]?.stringValue == TestInterface(probe: probe).interfaceDescription)
        let own = try await single("org.varlink.service.GetInterfaceDescription", ["interface": "org.varlink.service"])
        let text = try #require(own.parameters["description"]?.stringValue)
        #expect(try VarlinkInterfaceDefinition(parsing: text).name == "org.varlink.service")
        let missing = try await single("org.varlink.service.GetInterfaceDescription", ["interface": "org.nope"])
        #expect(missing.varlinkError == .interfaceNotFound("org.nope"))
        let noParam = try await single("org.varlink.service.GetInterfaceDescription")
        #expect(noParam.varlinkError == .invalidParameter("interface"))
    }

    @Test func routingErrors() async throws {
        #expect(try await single("org.nope.Thing").varlinkError == .interfaceNotFound("org.nope"))
        #expect(try await single("NoDot").varlinkError == .interfaceNotFound(""))
        #expect(try await single("org.example.test.Undeclared").varlinkError == .methodNotFound("org.example.test.Undeclared"))
        #expect(try await single("org.example.test.NotYet").varlinkError == .methodNotImplemented("org.example.test.NotYet"))
    }

    @Test func invalidParameters() async throws {
        #expect(try await single("org.example.test.Add", ["a": 1]).varlinkError == .invalidParameter("b"))
        #expect(try await single("org.example.test.Add", ["a": 1, "b": "2"]).varlinkError == .invalidParameter("b"))
        #expect(try await single("org.example.test.Add", ["a": 1, "b": 2, "c": 3]).varlinkError == .invalidParameter("c"))
        var person = validPerson.objectValue!
        person["kind"] = "alien"
        #expect(try await single("org.example.test.Echo", ["person": .object(person)]).varlinkError == .invalidParameter("person.kind"))
        #expect(try await single("org.example.test.Add", ["a": 1, "b": 2]).parameters == ["sum": 3])
    }

    @Test func unknownParametersCanBeAllowed() async throws {
        let service = try VarlinkService(vendor: "", product: "", version: "", url: "", interfaces: [TestInterface(probe: probe)],
                                         allowUnknownParameters: true)
        #expect(await service.replies(to: VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 2, "future": true]))
            == [VarlinkReply(parameters: ["sum": 3])])
        var person = validPerson.objectValue!
        person["newField"] = 1
        #expect(await service.replies(to: VarlinkCall(method: "org.example.test.Echo", parameters: ["person": .object(person)])).first?.error == nil)
        // Declared fields are still checked.
        #expect(await service.replies(to: VarlinkCall(method: "org.example.test.Add", parameters: ["a": "1", "b": 2]))
            == [VarlinkReply(.invalidParameter("a"))])
    }

    @Test func echoNestedTypes() async throws {
        let r = try await single("org.example.test.Echo", ["person": validPerson, "note": "hi"])
        #expect(r.error == nil)
        #expect(r.parameters == ["person": validPerson, "note": "hi"])
    }

    @Test func handlerErrors() async throws {
        #expect(try await single("org.example.test.Fail", ["kind": "varlink"]).varlinkError
            == VarlinkError("org.example.test.Custom", parameters: ["reason": "because"]))
        let unexpected = Mutex<[String]>([])
        let service = try VarlinkService(vendor: "", product: "", version: "", url: "", interfaces: [TestInterface(probe: probe)],
                                         onUnexpectedError: { call, _ in unexpected.withLock { $0.append(call.method) } })
        let r = await service.replies(to: VarlinkCall(method: "org.example.test.Fail", parameters: ["kind": "swift"]))
        #expect(r == [VarlinkReply(.internalError)])
        #expect(unexpected.withLock { $0 } == ["org.example.test.Fail"])
    }

    @Test func errorAfterStreamingEndsTheStream() async throws {
        let r = try await replies(VarlinkCall(method: "org.example.test.Fail", parameters: ["kind": "afterStream"], more: true))
        #expect(r == [
            VarlinkReply(parameters: ["i": 0], continues: true),
            VarlinkReply(VarlinkError("org.example.test.Custom", parameters: ["reason": "midway"])),
        ])
    }

    @Test func secondFinalReplyIsRefused() async throws {
        let r = try await replies(VarlinkCall(method: "org.example.test.Fail", parameters: ["kind": "replyTwice"]))
        #expect(r == [VarlinkReply()])
        #expect(probe.entries == ["second reply refused"])
    }

    @Test func onewayGetsNoReply() async throws {
        let r = try await replies(VarlinkCall(method: "org.example.test.Note", parameters: ["text": "x"], oneway: true))
        #expect(r.isEmpty)
        #expect(probe.entries == ["note x"])
        // Not even errors are sent for oneway calls.
        #expect(try await replies(VarlinkCall(method: "org.example.test.Nope", oneway: true)).isEmpty)
        #expect(try await replies(VarlinkCall(method: "org.example.test.Count", parameters: ["n": 3], oneway: true)).isEmpty)
    }

    @Test func handlerWithoutReplyGetsEmptyReply() async throws {
        #expect(try await single("org.example.test.Note", ["text": "y"]) == VarlinkReply())
    }

    @Test func moreStreamsWithContinues() async throws {
        let r = try await replies(VarlinkCall(method: "org.example.test.Count", parameters: ["n": 3], more: true))
        #expect(r == [
            VarlinkReply(parameters: ["i": 0], continues: true),
            VarlinkReply(parameters: ["i": 1], continues: true),
            VarlinkReply(parameters: ["i": 2], continues: false),
        ])
    }

    @Test func streamingWithoutMoreAnswersExpectedMore() async throws {
        let r = try await replies(VarlinkCall(method: "org.example.test.Count", parameters: ["n": 3]))
        #expect(r == [VarlinkReply(.expectedMore)])
        #expect(probe.sent.load(ordering: .relaxed) == 0)  // the handler was stopped at its first reply
        // A single reply is fine without `more`.
        #expect(try await replies(VarlinkCall(method: "org.example.test.Count", parameters: ["n": 1])) == [VarlinkReply(parameters: ["i": 0])])
    }

    @Test func upgradeIsRefused() async throws {
        let r = try await replies(VarlinkCall(method: "org.example.test.Add", parameters: ["a": 1, "b": 1], upgrade: true))
        #expect(r == [VarlinkReply(.invalidParameter("upgrade"))])
    }

    @Test func malformedMessages() async throws {
        let service = try makeService(probe)
        func handle(_ text: String) async -> [VarlinkReply] {
            let out = Mutex<[VarlinkReply]>([])
            await service.handle(message: Array(text.utf8), context: VarlinkCallContext()) { r in out.withLock { $0.append(r) } }
            return out.withLock { $0 }
        }
        #expect(await handle("{not json") == [VarlinkReply(.invalidParameter(""))])
        #expect(await handle(#"{"method":5}"#) == [VarlinkReply(.invalidParameter("method"))])
        #expect(await handle(#"{"method":"org.example.test.Add","more":"yes"}"#) == [VarlinkReply(.invalidParameter("more"))])
        // The empty message (a lone NUL on the wire) is malformed input like any other.
        #expect(await handle("") == [VarlinkReply(.invalidParameter(""))])
        #expect(await handle(#"{"method":"org.varlink.service.GetInfo","parameters":null}"#).first?.error == nil)
    }

    @Test func registrationErrors() {
        struct Bad: VarlinkInterface {
            var name: String
            var interfaceDescription: String
            func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {}
        }
        #expect(throws: VarlinkServiceError.self) {
            _ = try VarlinkService(vendor: "", product: "", version: "", url: "",
                               interfaces: [Bad(name: "org.a.b", interfaceDescription: "interface org.a.b\nmethod X( -> ()")])
        }
        #expect(throws: VarlinkServiceError.nameMismatch(declared: "org.a.b", described: "org.a.c")) {
            _ = try VarlinkService(vendor: "", product: "", version: "", url: "",
                               interfaces: [Bad(name: "org.a.b", interfaceDescription: "interface org.a.c\nmethod X() -> ()")])
        }
        #expect(throws: VarlinkServiceError.duplicateInterface("org.a.b")) {
            let b = Bad(name: "org.a.b", interfaceDescription: "interface org.a.b\nmethod X() -> ()")
            _ = try VarlinkService(vendor: "", product: "", version: "", url: "", interfaces: [b, b])
        }
    }
}
