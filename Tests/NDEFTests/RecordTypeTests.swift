import Testing
@testable import NDEF

@Suite("Record types")
struct RecordTypeTests {
    @Test("URI prefix table has 36 entries (0x00–0x23) and every code round-trips")
    func uriPrefixTable() throws {
        #expect(NDEFRecord.uriPrefixes.count == 0x24)
        #expect(NDEFRecord.uriPrefixes[0x02] == "https://www.")
        #expect(NDEFRecord.uriPrefixes[0x1D] == "file://")
        #expect(NDEFRecord.uriPrefixes[0x23] == "urn:nfc:")
        for (code, prefix) in NDEFRecord.uriPrefixes.enumerated() {
            let uri = prefix + "x"
            let record = NDEFRecord.uri(uri)
            #expect(try record.content() == .uri(uri))
            // The longest prefix wins, so the chosen one is at least as long as this one.
            #expect(NDEFRecord.uriPrefixes[Int(record.payload[0])].count >= prefix.count, "code \(code)")
        }
        #expect(NDEFRecord.uri("urn:epc:id:x").payload[0] == 0x1E)
        #expect(NDEFRecord.uri("urn:x").payload[0] == 0x13)
        #expect(NDEFRecord.uri("ftp://anonymous:anonymous@h").payload[0] == 0x07)
    }

    @Test("URI identifier codes above 0x23 are rejected")
    func uriBadPrefix() {
        let record = NDEFRecord(tnf: .wellKnown, type: [0x55], payload: [0x24, 0x61])
        #expect(throws: NDEFError.invalidURIPrefix(code: 0x24)) { try record.content() }
        #expect(throws: NDEFError.self) { try NDEFRecord(tnf: .wellKnown, type: [0x55]).content() }
        #expect(throws: NDEFError.self) { try NDEFRecord(tnf: .wellKnown, type: [0x55], payload: [0, 0xFF]).content() }
    }

    @Test("UTF-16 text: big-endian BOM, little-endian BOM, and no BOM (big-endian)")
    func utf16BOM() throws {
        let header = bytes("82 65 6E")  // UTF-16, language "en"
        let cases: [([UInt8], String)] = [
            (bytes("FE FF 00 48 00 69"), "Hi"),
            (bytes("FF FE 48 00 69 00"), "Hi"),
            (bytes("00 48 00 69"), "Hi"),
            (bytes("D8 3D DE 00"), "😀"),
            ([], ""),
        ]
        for (body, text) in cases {
            let record = NDEFRecord(tnf: .wellKnown, type: [0x54], payload: header + body)
            #expect(try record.content() == .text(text, language: "en", encoding: .utf16))
        }
        let encoded = try NDEFRecord.text("Hi 😀", language: "en", encoding: .utf16)
        #expect(encoded.payload == header + bytes("FE FF 00 48 00 69 00 20 D8 3D DE 00"))
        #expect(try encoded.content() == .text("Hi 😀", language: "en", encoding: .utf16))
    }

    @Test("malformed Text payloads", arguments: [
        "",                  // no status byte
        "05 65 6E",          // language longer than payload
        "42 65 6E",          // reserved bit set
        "02 65 6E FF",       // invalid UTF-8
        "82 65 6E 00",       // odd UTF-16 length
        "82 65 6E DC 00",    // lone low surrogate
        "02 65 00",          // language code with NUL
    ])
    func badText(hex: String) {
        let record = NDEFRecord(tnf: .wellKnown, type: [0x54], payload: bytes(hex))
        #expect(throws: NDEFError.self) { try record.content() }
    }

    @Test("Text language code validation when encoding")
    func textLanguage() throws {
        #expect(throws: NDEFError.self) { try NDEFRecord.text("x", language: "") }
        #expect(throws: NDEFError.self) { try NDEFRecord.text("x", language: String(repeating: "a", count: 64)) }
        #expect(try NDEFRecord.text("x", language: "de-CH").payload == bytes("05 64 65 2D 43 48 78"))
    }

    @Test("MIME, external, absolute URI, unknown and other well-known types")
    func otherTypes() throws {
        #expect(try NDEFRecord.mime(type: "image/png", payload: [1]).content() == .mime(type: "image/png", payload: [1]))
        let ext = NDEFRecord.external(domain: "example.com", type: "a:b", payload: [2])
        #expect(ext.tnf == .external)
        #expect(try ext.content() == .external(domain: "example.com", type: "a:b", payload: [2]))
        #expect(throws: NDEFError.self) { try NDEFRecord(tnf: .external, type: Array("nocolon".utf8)).content() }
        #expect(throws: NDEFError.self) { try NDEFRecord(tnf: .media, type: [0x80]).content() }
        #expect(try NDEFRecord.absoluteURI("https://x.y/z").content() == .absoluteURI("https://x.y/z", payload: []))
        #expect(try NDEFRecord(tnf: .unknown, payload: [9]).content() == .unknown(payload: [9]))
        #expect(try NDEFRecord.empty.content() == .empty)
        #expect(try NDEFRecord(tnf: .wellKnown, type: Array("Sp".utf8), payload: [1]).content() == .wellKnown(type: "Sp", payload: [1]))
    }

    @Test("typed content round-trips through the raw record")
    func contentRoundTrip() throws {
        let contents: [NDEFRecordContent] = [
            .empty, .text("Grüße", language: "de", encoding: .utf8), .text("x", language: "en", encoding: .utf16),
            .uri("mailto:a@b.c"), .uri("weird:scheme"), .mime(type: "a/b", payload: [1, 2]),
            .absoluteURI("urn:x", payload: [3]), .external(domain: "d.e", type: "t", payload: []),
            .wellKnown(type: "Sp", payload: [0]), .unknown(payload: [4]),
        ]
        for content in contents {
            let record = try NDEFRecord(content: content)
            let decoded = try NDEFMessage.decode(NDEFMessage(records: [record]).encoded()).records[0]
            #expect(try decoded.content() == content)
        }
    }
}
