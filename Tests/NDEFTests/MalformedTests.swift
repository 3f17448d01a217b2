import Testing
@testable import NDEF

@Suite("Malformed NDEF input")
struct MalformedTests {
    @Test("every malformed fixture gives its typed error (ndeflib rejects them too)")
    func fixtureTable() throws {
        let rows = try Fixtures.rows("malformed.tsv")
        #expect(rows.count >= 20)
        for row in rows {
            let error = decodeError(bytes(row[1]))
            #expect(error.map(caseName) == row[2], "\(row[0]): \(String(describing: error))")
        }
    }

    @Test("payload length 0xFFFFFFFF reports truncation without allocating")
    func hugeLength() {
        let input = bytes("C2 01 FF FF FF FF 61")
        guard case let .truncated(offset, needed, available)? = decodeError(input) else {
            Issue.record("expected truncated"); return
        }
        #expect(offset == 0 && needed == 0xFFFF_FFFF && available == 1)
    }

    @Test("every prefix of a valid message fails cleanly")
    func truncations() throws {
        let message = NDEFMessage(records: [.uri("https://example.com"), try .text("hello"),
                                            .mime(type: "a/b", payload: [UInt8](repeating: 7, count: 300))])
        for chunk in [nil, 50] as [Int?] {
            let encoded = try message.encoded(chunkSize: chunk)
            for n in 0..<encoded.count {
                #expect(decodeError(Array(encoded.prefix(n))) != nil, "prefix \(n)")
            }
        }
    }

    @Test("errors carry actionable descriptions")
    func descriptions() {
        #expect(NDEFError.tooLarge(needed: 200, capacity: 144).description.contains("NTAG215"))
        #expect(NDEFError.blankCapabilityContainer.description.contains("Format"))
        #expect(NDEFError.notNDEFFormatted(magic: 0x12).description.contains("0x12"))
    }
}
