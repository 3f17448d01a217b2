import Testing
@testable import Varlink

@Suite struct FramingTests {
    func drain(_ d: inout VarlinkFrameDecoder) throws -> [String] {
        var out: [String] = []
        while let m = try d.nextMessage() { out.append(String(decoding: m, as: UTF8.self)) }
        return out
    }

    @Test func coalescedMessages() throws {
        var d = VarlinkFrameDecoder()
        d.append(Array("{\"a\":1}\0{\"b\":2}\0{\"c\"".utf8))
        #expect(try drain(&d) == ["{\"a\":1}", "{\"b\":2}"])
        #expect(d.hasPartialMessage)
        d.append(Array(":3}\0".utf8))
        #expect(try drain(&d) == ["{\"c\":3}"])
        #expect(!d.hasPartialMessage)
    }

    @Test func byteAtATime() throws {
        var d = VarlinkFrameDecoder()
        let stream = Array("{\"method\":\"a.B\"}\0{}\0".utf8)
        var got: [String] = []
        for b in stream {
            d.append([b])
            got += try drain(&d)
        }
        #expect(got == ["{\"method\":\"a.B\"}", "{}"])
    }

    @Test func messageAcrossManyReads() throws {
        var d = VarlinkFrameDecoder(maxMessageSize: 100_000)
        let big = "{\"s\":\"" + String(repeating: "x", count: 50_000) + "\"}"
        let bytes = Array(big.utf8) + [0]
        var got: [String] = []
        var i = 0
        while i < bytes.count {
            d.append(bytes[i..<min(i + 777, bytes.count)])
            got += try drain(&d)
            i += 777
        }
        #expect(got == [big])
    }

    @Test func emptyMessage() throws {
        var d = VarlinkFrameDecoder()
        d.append([0, 0])
        #expect(try d.nextMessage() == [])
        #expect(try d.nextMessage() == [])
        #expect(try d.nextMessage() == nil)
    }

    @Test func oversizedWithoutTerminator() throws {
        var d = VarlinkFrameDecoder(maxMessageSize: 10)
        d.append(Array(repeating: UInt8(ascii: "x"), count: 10))
        #expect(try d.nextMessage() == nil)  // exactly the limit: still fine
        d.append([UInt8(ascii: "x")])
        #expect(throws: VarlinkFrameError.messageTooLarge(maxMessageSize: 10)) { try d.nextMessage() }
    }

    @Test func oversizedWithTerminator() throws {
        var d = VarlinkFrameDecoder(maxMessageSize: 4)
        d.append(Array("abcd\0abcde\0".utf8))
        #expect(try d.nextMessage() == Array("abcd".utf8))
        #expect(throws: VarlinkFrameError.self) { try d.nextMessage() }
    }
}

@Suite struct MessageTests {
    @Test func callRoundTrip() throws {
        let call = VarlinkCall(method: "org.example.ftl.Monitor", parameters: ["a": 1], more: true)
        let bytes = call.framedBytes()
        #expect(bytes.last == 0)
        let back = try VarlinkCall(bytes: Array(bytes.dropLast()))
        #expect(back == call)
        #expect(back.interface == "org.example.ftl")
        #expect(back.methodName == "Monitor")
        #expect(String(decoding: bytes.dropLast(), as: UTF8.self) == #"{"method":"org.example.ftl.Monitor","more":true,"parameters":{"a":1}}"#)
    }

    @Test(arguments: [#"{"method":"a.B"}"#, #"{"method":"a.B","parameters":null}"#, #"{"method":"a.B","parameters":{}}"#])
    func emptyParameterForms(_ text: String) throws {
        let call = try VarlinkCall(bytes: Array(text.utf8))
        #expect(call.parameters.isEmpty)
        #expect(!call.more && !call.oneway && !call.upgrade)
    }

    @Test func unknownEnvelopeKeysAreIgnored() throws {
        let call = try VarlinkCall(bytes: Array(#"{"method":"a.B","com.example.ext":{"x":1}}"#.utf8))
        #expect(call.method == "a.B")
    }

    @Test(arguments: [
        (#"{"method":5}"#, "method"),
        (#"{"parameters":{}}"#, "method"),
        (#"{"method":"a.B","more":"yes"}"#, "more"),
        (#"{"method":"a.B","oneway":1}"#, "oneway"),
        (#"{"method":"a.B","upgrade":[]}"#, "upgrade"),
        (#"{"method":"a.B","parameters":[1]}"#, "parameters"),
        (#"{"method":"a.B","parameters":"x"}"#, "parameters"),
        (#"[1]"#, ""),
        (#"{"method":"#, ""),
    ])
    func envelopeErrors(_ text: String, _ field: String) {
        do {
            _ = try VarlinkCall(bytes: Array(text.utf8))
            Issue.record("expected failure for \(text)")
        } catch {
            #expect(error.varlinkError == .invalidParameter(field))
        }
    }

    @Test func replyRoundTrip() throws {
        let replies = [
            VarlinkReply(parameters: ["x": "y"], continues: true),
            VarlinkReply(parameters: [:]),
            VarlinkReply(.invalidParameter("name")),
        ]
        for r in replies {
            #expect(try VarlinkReply(bytes: Array(r.framedBytes().dropLast())) == r)
        }
        #expect(String(decoding: VarlinkReply(.methodNotFound("a.B")).framedBytes().dropLast(), as: UTF8.self)
            == #"{"error":"org.varlink.service.MethodNotFound","parameters":{"method":"a.B"}}"#)
        #expect(try VarlinkReply(bytes: Array(#"{"error":"x.Y"}"#.utf8)).varlinkError == VarlinkError("x.Y"))
        #expect(throws: VarlinkMessageError.wrongType(field: "continues", expected: "a bool")) {
            try VarlinkReply(bytes: Array(#"{"continues":"no"}"#.utf8))
        }
    }
}
