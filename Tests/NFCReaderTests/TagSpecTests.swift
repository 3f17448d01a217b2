import PN532Simulator
import Testing

@Suite struct TagSpecTests {
    private func uid(_ spec: String) throws -> [UInt8] {
        guard case .type2(let tag) = try TagSpec.parse(spec).makeCard() else {
            Issue.record("\(spec) is not a Type 2 tag")
            return []
        }
        return tag.uid
    }

    @Test("each shorthand NTAG is a distinct tag, the same one every time")
    func shorthandTagsHaveDistinctStableUIDs() throws {
        let specs = ["ntag213", "ntag213:blank", "ntag215", "ntag215:blank", "ntag216", "ultralight"]
        let uids = try specs.map(uid)
        #expect(Set(uids).count == specs.count, "UIDs: \(uids)")
        #expect(try specs.map(uid) == uids)
        #expect(uids.allSatisfy { $0.count == 7 && $0[0] == 0x04 })
        #expect(try uid("NTAG213") == uid("ntag213"))
    }

    @Test("an explicit UID still wins")
    func explicitUID() throws {
        #expect(try uid(#"{"type":"ntag213","uid":"04A1B2C3D4E5F6"}"#) == [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6])
    }
}
