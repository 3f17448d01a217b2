import Testing
@testable import JSON

@Suite struct JSONParserTests {
    func parse(_ s: String) throws(JSONParseError) -> JSONValue { try JSONValue(parsing: s) }
    func parseBytes(_ b: [UInt8]) throws(JSONParseError) -> JSONValue { try JSONValue(parsing: b) }

    @Test func scalars() throws {
        #expect(try parse("null") == .null)
        #expect(try parse(" true ") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse("0") == .int(0))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("42") == .int(42))
        #expect(try parse("-9223372036854775808") == .int(Int64.min))
        #expect(try parse("9223372036854775807") == .int(Int64.max))
        #expect(try parse("9223372036854775808") == .double(9223372036854775808.0))
        #expect(try parse("1.5") == .double(1.5))
        #expect(try parse("3.0") == .double(3.0))
        #expect(try parse("-1.25e2") == .double(-125))
        #expect(try parse("1E-2") == .double(0.01))
        #expect(try parse("\"hi\"") == .string("hi"))
    }

    @Test func structures() throws {
        #expect(try parse("[]") == .array([]))
        #expect(try parse("{}") == .object([:]))
        #expect(try parse(" { \"a\" : [1, 2.5, \"x\", null, {\"b\": false}] }\n") ==
            .object(["a": .array([.int(1), .double(2.5), .string("x"), .null, .object(["b": .bool(false)])])]))
    }

    @Test func escapes() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{c}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u20AC""#) == .string("Aé€"))
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try parse("\"é😀\"") == .string("é😀"))
    }

    @Test(arguments: [
        "", " ", "nul", "tru", "True", "01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity",
        "[1,]", "[1 2]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{\"a\":1", "[", "\"abc", "'a'",
        "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
        "\"a\nb\"", "\"tab\there\"", "1 2", "{} x", "[]]", "1e400", "{\"a\":1,\"a\":2}",
    ])
    func rejectsInvalid(_ text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test(arguments: [
        [0x22, 0xFF, 0x22] as [UInt8],           // invalid byte
        [0x22, 0xC0, 0xAF, 0x22],                // overlong '/'
        [0x22, 0xE0, 0x80, 0xAF, 0x22],          // overlong 3-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],          // encoded surrogate U+D800
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],    // above U+10FFFF
        [0x22, 0xC3, 0x22],                      // truncated sequence
        [0x22, 0x80, 0x22],                      // lone continuation byte
        [0x22, 0xF0, 0x9F, 0x98, 0x22],          // truncated 4-byte
    ])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) {
        #expect(throws: JSONParseError.self) { try parseBytes(bytes) }
    }

    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parse(ok) }
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError.self) { try parse(deep) }
        // Far deeper than any stack could take recursively: must fail fast, not crash.
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        do {
            _ = try parse(hostile)
            Issue.record("expected failure")
        } catch {
            #expect(error.reason == .tooDeeplyNested(maxDepth: 64))
        }
    }

    @Test func errorCarriesOffset() {
        do {
            _ = try parse("[1, x]")
            Issue.record("expected failure")
        } catch {
            #expect(error.offset == 4)
            #expect(error.reason == .unexpectedByte(UInt8(ascii: "x")))
        }
    }
}

@Suite struct JSONSerializerTests {
    @Test func compactSortedOutput() {
        let v: JSONValue = ["b": 1, "a": [true, nil, 2.5, "x"], "c": ["z": 0, "y": -1]]
        #expect(v.serialized() == #"{"a":[true,null,2.5,"x"],"b":1,"c":{"y":-1,"z":0}}"#)
    }

    @Test func indentedOutputForPeopleParsesBackToTheSameValue() throws {
        let v: JSONValue = ["b": [1, ["x": nil]], "a": "é\n", "e": [:], "f": []]
        let text = String(decoding: v.indentedBytes(), as: UTF8.self)
        #expect(text == "{\n  \"a\": \"é\\n\",\n  \"b\": [\n    1,\n    {\n      \"x\": null\n    }\n  ],\n  \"e\": {},\n  \"f\": []\n}")
        #expect(try JSONValue(parsing: text) == v)
    }

    @Test func keysAreOrderedByTheirUTF8Bytes() {
        // By bytes, not by Swift's String order: "Z" (5A) before "a" (61), "é" (C3 A9) before "ÿ" (C3 BF)
        // before "😀" (F0 …), a prefix before what extends it.
        let v: JSONValue = .object(["😀": 1, "ÿ": 2, "é": 3, "~": 4, "z": 5, "ab": 6, "a": 7, "Z": 8, "": 9,
                                    String(repeating: "k", count: 40): 10, String(repeating: "k", count: 39): 11])
        let k39 = String(repeating: "k", count: 39)
        #expect(v.serialized() == #"{"":9,"Z":8,"a":7,"ab":6,"\#(k39)":11,"\#(k39)k":10,"z":5,"~":4,"é":3,"ÿ":2,"😀":1}"#)
    }

    @Test func stringsWithoutEscapesAreCopiedWholeAndTheRestEscaped() {
        let long = String(repeating: "貸出 lent ", count: 20)
        #expect(JSONValue.string(long).serialized() == "\"" + long + "\"")
        #expect(JSONValue.string(long + "\u{1F}").serialized() == "\"" + long + "\\u001f\"")
        #expect(JSONValue.string("\"" + long).serialized() == "\"\\\"" + long + "\"")
        #expect(JSONValue.string("").serialized() == "\"\"")
    }

    @Test func escaping() {
        let v = JSONValue.string("q\"b\\n\nt\tc\u{1}d\u{7f}é😀/")
        #expect(v.serialized() == #""q\"b\\n\nt\tc\u0001d\u007fé😀/""#)
    }

    @Test func numbers() {
        #expect(JSONValue.int(Int64.min).serialized() == "-9223372036854775808")
        #expect(JSONValue.double(3).serialized() == "3.0")
        #expect(JSONValue.double(0.1).serialized() == "0.1")
        #expect(JSONValue.double(1e-7).serialized() == "1e-07")
        #expect(JSONValue.double(.infinity).serialized() == "null")
        #expect(JSONValue.double(.nan).serialized() == "null")
    }

    @Test(arguments: [
        #"{"a":[1,2,{"b":null}],"c":"\u0000\"\\","d":-0.5,"e":1e+300,"f":true}"#,
        #"[[[[]]],{},"",0,-1,9223372036854775807]"#,
        #""\ud83d\ude00 é \u2028""#,
    ])
    func roundTrip(_ text: String) throws {
        let v = try JSONValue(parsing: text)
        let again = try JSONValue(parsing: v.serialized())
        #expect(again == v)
        #expect(again.serialized() == v.serialized())
    }

    @Test func doubleRoundTripIsExact() throws {
        for d in [0.1, 1.0 / 3.0, 123456.789e10, -2.5e-300, Double.greatestFiniteMagnitude, Double.leastNonzeroMagnitude] {
            let back = try JSONValue(parsing: JSONValue.double(d).serialized())
            #expect(back.doubleValue == d)
        }
    }

    @Test func accessors() {
        let v: JSONValue = ["n": 3, "d": 3.0, "h": 3.5, "s": "x", "a": [1], "o": ["k": true]]
        #expect(v["n"]?.intValue == 3)
        #expect(v["d"]?.intValue == 3)
        #expect(v["h"]?.intValue == nil)
        #expect(v["h"]?.doubleValue == 3.5)
        #expect(v["s"]?.stringValue == "x")
        #expect(v["a"]?[0] == .int(1))
        #expect(v["a"]?[1] == nil)
        #expect(v["o"]?["k"]?.boolValue == true)
        #expect(v["missing"] == nil)
        #expect(JSONValue.null.isNull)
    }
}
