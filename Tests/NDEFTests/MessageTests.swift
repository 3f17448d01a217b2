import Testing
@testable import NDEF

@Suite("NDEF message decoding and encoding")
struct MessageTests {
    @Test("NFC Forum Text example: \"Hello, world!\" in English")
    func helloWorld() throws {
        let encoded = bytes("D1 01 10 54 02 65 6E 48 65 6C 6C 6F 2C 20 77 6F 72 6C 64 21")
        let message = try NDEFMessage.decode(encoded)
        #expect(message.records.count == 1)
        #expect(try message.records[0].content() == .text("Hello, world!", language: "en", encoding: .utf8))
        #expect(try NDEFMessage(records: [.text("Hello, world!")]).encoded() == encoded)
    }

    @Test("NFC Forum URI example: https://www. abbreviation")
    func uriAbbreviation() throws {
        let encoded = bytes("D1 01 0E 55 02 6E 66 63 2D 66 6F 72 75 6D 2E 6F 72 67")
        let message = try NDEFMessage.decode(encoded)
        #expect(try message.records[0].content() == .uri("https://www.nfc-forum.org"))
        #expect(try NDEFMessage(records: [.uri("https://www.nfc-forum.org")]).encoded() == encoded)
    }

    @Test("ndeflib fixtures decode to the expected records and re-encode byte for byte")
    func ndeflibFixtures() throws {
        let rows = try Fixtures.rows("messages.tsv")
        #expect(rows.count >= 50)
        for row in rows {
            let name = row[0]
            let encoded = bytes(row[1])
            let expected = row[2].split(separator: ";").map { spec -> NDEFRecord in
                let f = spec.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                return NDEFRecord(tnf: TypeNameFormat(rawValue: UInt8(f[0])!)!, type: bytes(f[1]), id: bytes(f[2]), payload: bytes(f[3]))
            }
            let message = try NDEFMessage.decode(encoded)
            #expect(message.records == expected, "fixture \(name)")
            if !name.hasPrefix("chunked") {
                // ndeflib uses SR whenever the payload is < 256 bytes, as we do.
                #expect(try message.encoded() == encoded, "fixture \(name) re-encoding")
            } else {
                #expect(try NDEFMessage.decode(message.encoded()) == message, "fixture \(name) round trip")
            }
        }
    }

    @Test("typed view of the ndeflib fixtures")
    func typedFixtures() throws {
        let messages = Dictionary(uniqueKeysWithValues: try Fixtures.rows("messages.tsv").map { ($0[0], bytes($0[1])) })
        let rows = try Fixtures.rows("typed.tsv")
        #expect(rows.count >= 15)
        for row in rows {
            let message = try NDEFMessage.decode(try #require(messages[row[0]], "message \(row[0])"))
            let content = try message.records[Int(row[1])!].content()
            let text = { (hex: String) in String(decoding: bytes(hex), as: UTF8.self) }
            switch row[2] {
            case "text":
                #expect(content == .text(text(row[3]), language: row[4], encoding: row[5] == "utf16" ? .utf16 : .utf8), "\(row[0])")
            case "uri":
                #expect(content == .uri(text(row[3])), "\(row[0])")
            case "mime":
                #expect(content == .mime(type: row[3], payload: bytes(row[4])), "\(row[0])")
            case "external":
                guard case let .external(domain, type, _) = content else { Issue.record("\(row[0]): \(content)"); continue }
                #expect(domain == row[3] && type == row[4])
            case "absolute":
                guard case let .absoluteURI(uri, _) = content else { Issue.record("\(row[0]): \(content)"); continue }
                #expect(uri == text(row[3]))
            case "wellknown":
                guard case let .wellKnown(type, _) = content else { Issue.record("\(row[0]): \(content)"); continue }
                #expect(type == row[3])
            default:
                Issue.record("unknown kind \(row[2])")
            }
        }
    }

    @Test("chunked record: NDEF 1.0 layout is reassembled into one record")
    func chunkedReassembly() throws {
        // Initial chunk MIME text/plain "ab" (MB, CF, SR), middle "cd" (CF, Unchanged), last "e" (ME).
        let encoded = bytes("B2 0A 02") + Array("text/plain".utf8) + Array("ab".utf8)
            + bytes("36 00 02") + Array("cd".utf8) + bytes("56 00 01") + Array("e".utf8)
        let message = try NDEFMessage.decode(encoded)
        #expect(message.records == [.mime(type: "text/plain", payload: Array("abcde".utf8))])
    }

    @Test("encoder splits payloads into chunks that decode back", arguments: [1, 2, 7, 255, 256])
    func chunkedEncoding(chunkSize: Int) throws {
        var record = NDEFRecord.mime(type: "application/octet-stream", payload: (0..<600).map { UInt8($0 % 251) })
        record.id = Array("id".utf8)
        let message = NDEFMessage(records: [.uri("https://example.com"), record, try .text("end")])
        let encoded = try message.encoded(chunkSize: chunkSize)
        #expect(encoded != (try message.encoded()))
        #expect(try NDEFMessage.decode(encoded) == message)
    }

    @Test("chunk reassembly honours the configured size limit")
    func chunkLimit() throws {
        let message = NDEFMessage(records: [.mime(type: "a/b", payload: [UInt8](repeating: 1, count: 1000))])
        let encoded = try message.encoded(chunkSize: 100)
        #expect(try NDEFMessage.decode(encoded, options: NDEFDecodingOptions(maxRecordPayloadSize: 1000)) == message)
        let error = decodeError(encoded, options: NDEFDecodingOptions(maxRecordPayloadSize: 999))
        #expect(error == .recordTooLarge(size: 1000, limit: 999))
        // The limit also applies to unchunked records.
        #expect(decodeError(try message.encoded(), options: NDEFDecodingOptions(maxRecordPayloadSize: 10)) == .recordTooLarge(size: 1000, limit: 10))
    }

    @Test("record count limit")
    func recordLimit() throws {
        let message = NDEFMessage(records: Array(repeating: .uri("tel:1"), count: 5))
        #expect(decodeError(try message.encoded(), options: NDEFDecodingOptions(maxRecords: 4)) == .tooManyRecords(limit: 4))
        #expect(try NDEFMessage.decode(message.encoded(), options: NDEFDecodingOptions(maxRecords: 5)) == message)
    }

    @Test("long (non-SR) records and ID fields")
    func longRecordAndID() throws {
        let record = NDEFRecord(tnf: .unknown, id: [1, 2, 3], payload: [UInt8](repeating: 0xAB, count: 256))
        let encoded = try NDEFMessage(records: [record]).encoded()
        #expect(Array(encoded.prefix(7)) == bytes("CD 00 00 00 01 00 03"))  // MB ME IL TNF5, 4-byte length
        #expect(try NDEFMessage.decode(encoded).records == [record])
        // A long record encoding of a short payload is accepted too.
        let long = bytes("C1 01 00 00 00 03 54 02 65 6E")
        #expect(try NDEFMessage.decode(long).records == [NDEFRecord(tnf: .wellKnown, type: [0x54], payload: bytes("02 65 6E"))])
    }

    @Test("an empty message is encoded as one Empty record")
    func emptyMessage() throws {
        #expect(try NDEFMessage(records: []).encoded() == bytes("D0 00 00"))
        #expect(try NDEFMessage.decode(bytes("D0 00 00")).records == [.empty])
    }

    @Test("MB/ME flags on a three-record message")
    func flags() throws {
        let encoded = try NDEFMessage(records: [.uri("tel:1"), .uri("tel:2"), .uri("tel:3")]).encoded()
        let headers = [encoded[0], encoded[6], encoded[12]]
        #expect(headers == [0x91, 0x11, 0x51])
    }

    @Test("encoder rejects records the decoder would reject")
    func encoderValidation() {
        let cases: [NDEFRecord] = [
            NDEFRecord(tnf: .empty, payload: [1]),
            NDEFRecord(tnf: .wellKnown),
            NDEFRecord(tnf: .unknown, type: [1]),
            NDEFRecord(tnf: .unchanged),
            NDEFRecord(tnf: .media, type: [UInt8](repeating: 0x61, count: 256)),
            NDEFRecord(tnf: .media, type: [0x61], id: [UInt8](repeating: 0x61, count: 256)),
        ]
        for record in cases {
            #expect(throws: NDEFError.self, "\(record)") { try NDEFMessage(records: [record]).encoded() }
        }
        #expect(throws: NDEFError.cannotEncode(reason: "chunk size must be at least 1")) {
            try NDEFMessage(records: [.uri("tel:1")]).encoded(chunkSize: 0)
        }
    }
}
