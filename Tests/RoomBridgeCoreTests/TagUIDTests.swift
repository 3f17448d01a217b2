import Foundation
import Testing
@testable import RoomBridgeCore

/// The tag UID is made canonical where it enters, and a `TagUID` holds nothing else.
@Suite struct TagUIDTests {
    /// Text as a client sends it (a `String`, not a literal: the tests' literal conformance would take that).
    func parse(_ text: String) -> TagUID? { TagUID(text) }

    @Test func textIsTakenInItsCanonicalForm() {
        #expect(parse("04:a1:b2:c3")?.hex == "04A1B2C3")
        #expect(parse("04-A1-B2-C3-D4-E5-F6")?.hex == "04A1B2C3D4E5F6")
        #expect(parse("01 02 03 04 05 06 07 08")?.byteCount == 8)
        #expect(parse("04a1b2c3") == parse("04A1B2C3"), "one UID, one value")
    }

    @Test(arguments: ["", "4", "04A1B", "04G1B2C3", "０４Ａ１", "04A1B2C3\n", "D-0001"])
    func whatIsNoUIDIsRefused(_ text: String) {
        #expect(parse(text) == nil, "\(text.debugDescription)")
    }

    @Test func readerBytes() {
        #expect(TagUID(bytes: [0x04, 0xA1, 0x0B, 0xFF])?.hex == "04A10BFF")
        #expect(TagUID(bytes: []) == nil)
    }

    /// On the wire a UID is its text; a client's other spelling is read canonical, and text that is no UID is
    /// a decoding error (a typed InvalidParameter at the socket), never a crash.
    @Test func wireForm() throws {
        let tap = try JSONDecoder().decode(TagRemoval.self, from: Data(#"{"reader":"front","uid":"04:a1:b2:c3","presentMillis":1,"at":0}"#.utf8))
        #expect(tap.uid.hex == "04A1B2C3")
        #expect(String(decoding: try JSONEncoder().encode(tap.uid), as: UTF8.self) == #""04A1B2C3""#)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(TagRemoval.self, from: Data(#"{"reader":"front","uid":"nope","presentMillis":1,"at":0}"#.utf8))
        }
    }
}
