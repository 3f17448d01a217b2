import Testing
@testable import NDEF

@Suite("Type 2 Tag")
struct Type2Tests {
    @Test("capability containers of the supported tags")
    func ccBytes() throws {
        #expect(Type2CapabilityContainer.ntag213.bytes == bytes("E1 10 12 00"))
        #expect(Type2CapabilityContainer.ntag215.bytes == bytes("E1 10 3E 00"))
        #expect(Type2CapabilityContainer.ntag216.bytes == bytes("E1 10 6D 00"))
        #expect(Type2CapabilityContainer.ultralight.bytes == bytes("E1 10 06 00"))
        #expect(Type2TagModel.ntag215.dataAreaSize == 496)
        let cc = try Type2CapabilityContainer(bytes: bytes("E1 10 6D 00"))
        #expect(cc.dataAreaSize == 872 && cc.isWritable && cc.isReadable && cc.majorVersion == 1 && cc.minorVersion == 0)
        let readOnly = try Type2CapabilityContainer(bytes: bytes("E1 11 12 0F 01 03 A0 10"))  // 16-byte READ prefix
        #expect(!readOnly.isWritable && readOnly.isReadable && readOnly.minorVersion == 1)
    }

    @Test("non-NDEF capability containers give typed errors")
    func ccErrors() {
        #expect(throws: NDEFError.blankCapabilityContainer) { try Type2CapabilityContainer(bytes: bytes("00 00 00 00")) }
        #expect(throws: NDEFError.notNDEFFormatted(magic: 0xE2)) { try Type2CapabilityContainer(bytes: bytes("E2 10 12 00")) }
        #expect(throws: NDEFError.unsupportedMappingVersion(major: 2, minor: 0)) {
            try Type2CapabilityContainer(bytes: bytes("E1 20 12 00"))
        }
        #expect(throws: NDEFError.invalidCapabilityContainerLength(3)) { try Type2CapabilityContainer(bytes: bytes("E1 10 12")) }
    }

    @Test("NTAG213 dump (ndeflib): Lock Control TLV + NDEF TLV + Terminator")
    func ntag213Dump() throws {
        let image = try Fixtures.data("ntag213-device.bin")
        #expect(image.count == 45 * 4)
        let cc = try Type2CapabilityContainer(bytes: image[12..<16])
        #expect(cc == .ntag213)
        let dataArea = Array(image[16..<(16 + cc.dataAreaSize)])
        guard case let .ndef(range) = try Type2TLVScanner.locate(in: dataArea, dataAreaSize: cc.dataAreaSize) else {
            Issue.record("no NDEF TLV found"); return
        }
        #expect(range.lowerBound == 7)  // 01 03 xx xx xx | 03 len
        let message = try NDEFMessage.decode(Array(dataArea[range]))
        #expect(try DeviceTag.identify(message) == .device(DeviceTagRecord(deviceId: "D-0001", model: "Pixel 7", serial: "SN123")))
    }

    @Test("incremental locate asks for exactly the bytes it needs")
    func incremental() throws {
        let full = bytes("01 03 A0 10 44 00 00 03 05 D1 01 01 55 00 FE 00")
        let size = 48
        var reads: [Int] = []
        var available = 0
        var result = try Type2TLVScanner.locate(in: [], dataAreaSize: size)
        while case let .needMore(total) = result {
            #expect(total > available)
            reads.append(total)
            available = total
            result = try Type2TLVScanner.locate(in: Array(full.prefix(available)), dataAreaSize: size)
        }
        #expect(result == .ndef(range: 9..<14))
        #expect(reads == [1, 2, 6, 7, 8, 9, 14])
        // With page-sized (16-byte) reads a single read is enough.
        #expect(try Type2TLVScanner.locate(in: full, dataAreaSize: size) == .ndef(range: 9..<14))
    }

    @Test("TLV vectors", arguments: [
        // (data area, size, expected)
        ("03 00 FE", 48, "none"),                                  // empty NDEF TLV (factory NTAG)
        ("FE 03 03 D0 00 00", 48, "none"),                         // terminator first
        ("00 00 00 03 03 D0 00 00 FE", 48, "ndef 5..<8"),          // NULL padding
        ("02 03 A0 10 04 FD 02 AA BB 03 03 D0 00 00", 48, "ndef 11..<14"), // memory control (behind the data area) + proprietary
        ("00 00 00 00", 4, "none"),                                // all NULL, end of data area
        ("03 03 D0 00", 48, "more 5"),                             // value not fully read
        ("03 FF", 48, "more 4"),                                   // 3-byte length header incomplete
        ("03 FF 01 00", 496, "more 260"),                          // 3-byte length 256
        ("03 10", 8, "error tlvOutOfBounds"),                      // past data area
        ("01 FF FF FF", 2040, "error invalidTLVLength"),           // reserved 0xFFFF
        ("03", 1, "error tlvOutOfBounds"),                         // no room for the length
        ("", -1, "error invalidDataAreaSize"),
        ("", 0, "none"),
        ("01 03 A0 10 44 03 03 D0 00 00 FE", 144, "ndef 7..<10"),  // Ultralight C lock bytes at tag byte 160: outside
        ("01 03 18 10 44 03 03 D0 00 00 FE", 144, "error reservedAreaInsideNDEF"), // lock bytes at data byte 8..<10
        ("02 03 15 02 04 03 03 D0 00 00 FE", 144, "ndef 7..<10"),   // memory control, 2 bytes at data 5..<7: before the NDEF value
        ("FD 00 05 01 AA 03 00", 48, "none"),                            // proprietary TLV, then an unknown 05 TLV, empty NDEF
    ])
    func tlvVectors(input: String, size: Int, expected: String) {
        let result: String
        do {
            switch try Type2TLVScanner.locate(in: bytes(input), dataAreaSize: size) {
            case .noNDEFMessage: result = "none"
            case let .needMore(total): result = "more \(total)"
            case let .ndef(range): result = "ndef \(range.lowerBound)..<\(range.upperBound)"
            }
        } catch {
            result = "error \(caseName(error))"
        }
        #expect(result == expected)
    }

    @Test("3-byte length NDEF TLV, written and located")
    func threeByteLength() throws {
        let message = NDEFMessage(records: [.mime(type: "a/b", payload: [UInt8](repeating: 0x5A, count: 400))])
        let encoded = try message.encoded()
        let area = try Type2TagImage.dataArea(for: message, capacity: Type2TagModel.ntag215.dataAreaSize)
        #expect(Array(area.prefix(4)) == [0x03, 0xFF, UInt8(encoded.count >> 8), UInt8(encoded.count & 0xFF)])
        #expect(area[4 + encoded.count] == 0xFE)
        #expect(area.count % 4 == 0)
        #expect(try Type2TLVScanner.locate(in: area, dataAreaSize: 496) == .ndef(range: 4..<(4 + encoded.count)))
        #expect(try Type2TLVScanner.decodeMessage(in: area, dataAreaSize: 496) == message)
    }

    @Test("writer: 1-byte length, terminator, padding, and capacity limits")
    func writer() throws {
        let message = NDEFMessage(records: [.uri("tel:1")])  // D1 01 02 55 05 31 = 6 bytes
        let area = try Type2TagImage.dataArea(for: message, capacity: 144)
        #expect(area == bytes("03 06 D1 01 02 55 05 31 FE 00 00 00"))
        // Exactly fitting TLV: no room for the terminator, still valid.
        let tight = try Type2TagImage.dataArea(for: message, capacity: 8)
        #expect(tight == bytes("03 06 D1 01 02 55 05 31"))
        #expect(try Type2TLVScanner.decodeMessage(in: tight, dataAreaSize: 8) == message)
        #expect(throws: NDEFError.tooLarge(needed: 8, capacity: 7)) { try Type2TagImage.dataArea(for: message, capacity: 7) }
        let big = NDEFMessage(records: [.mime(type: "a/b", payload: [UInt8](repeating: 0, count: 900))])
        #expect(throws: NDEFError.tooLarge(needed: 4 + 909, capacity: 872)) {
            try Type2TagImage.dataArea(for: big, capacity: Type2TagModel.ntag216.dataAreaSize)
        }
        #expect(try Type2TagImage.dataArea(forMessageBytes: [], capacity: 48) == bytes("03 00 FE 00"))
        #expect(Type2TagImage.tlvSize(messageLength: 254) == 256 && Type2TagImage.tlvSize(messageLength: 255) == 259)
    }

    @Test("tear-safe write sequence: length 0 first, data pages, then the real length")
    func writeSequence() throws {
        let message = NDEFMessage(records: [.uri("tel:1")])  // TLV 03 06 D1 01 02 55 05 31 FE
        let writes = try Type2TagImage.writeSequence(for: message, capacity: 144)
        #expect(writes == [
            Type2PageWrite(page: 4, bytes: bytes("03 00 D1 01")),
            Type2PageWrite(page: 5, bytes: bytes("02 55 05 31")),
            Type2PageWrite(page: 6, bytes: bytes("FE 00 00 00")),
            Type2PageWrite(page: 4, bytes: bytes("03 06 D1 01")),
        ])
        // Applying the writes in order to a tag image gives the data area; after the first
        // write alone the tag reads as empty.
        var memory = [UInt8](repeating: 0, count: 144)
        for (n, write) in writes.enumerated() {
            memory.replaceSubrange((write.page - 4) * 4..<(write.page - 3) * 4, with: write.bytes)
            if n == 0 { #expect(try Type2TLVScanner.locate(in: memory, dataAreaSize: 144) == .noNDEFMessage) }
        }
        #expect(try Type2TLVScanner.decodeMessage(in: memory, dataAreaSize: 144) == message)
        let large = NDEFMessage(records: [.mime(type: "a/b", payload: [UInt8](repeating: 1, count: 300))])
        let largeWrites = try Type2TagImage.writeSequence(for: large, capacity: 496)
        #expect(largeWrites.first?.bytes == bytes("03 00 01 35"))  // 3-byte length hidden behind 00
        #expect(largeWrites.last?.bytes == bytes("03 FF 01 35"))
    }

    @Test("blank tag (no NDEF TLV) and data shorter than the NDEF TLV")
    func blankAndShort() throws {
        #expect(try Type2TLVScanner.decodeMessage(in: bytes("03 00 FE 00"), dataAreaSize: 144) == nil)
        #expect(throws: NDEFError.self) { try Type2TLVScanner.decodeMessage(in: bytes("03 07 D1 01"), dataAreaSize: 144) }
    }
}
