import Testing
@testable import NDEF

@Suite("Device tags")
struct DeviceTagTests {
    @Test("device tag fixtures (ndeflib)")
    func fixtures() throws {
        let rows = try Fixtures.rows("device.tsv")
        #expect(rows.count >= 15)
        for row in rows {
            let message = try NDEFMessage.decode(bytes(row[1]))
            let result: String
            do {
                switch try DeviceTag.identify(message) {
                case let .device(device): result = "device:\(device.deviceId)"
                case let .other(records):
                    result = "other"
                    #expect(records == message.records)
                }
            } catch {
                result = "error:\(caseName(error))"
            }
            #expect(result == row[2], "\(row[0])")
        }
    }

    @Test("spec example payload decodes and encodes identically")
    func specExample() throws {
        let json = #"{"v":1,"deviceId":"D-0001","model":"Pixel 7","serial":"SN123"}"#
        let device = try DeviceTagRecord(payload: Array(json.utf8))
        #expect(device == DeviceTagRecord(deviceId: "D-0001", model: "Pixel 7", serial: "SN123"))
        #expect(try device.payload() == Array(json.utf8))
    }

    @Test("message to write: optional URI first, then the device MIME record")
    func writeMessage() throws {
        let device = DeviceTagRecord(deviceId: "D-0002", model: "Laptop \"X\"\n", serial: nil)
        let message = try device.message(uri: "https://rooms.example/d/D-0002")
        #expect(message.records.count == 2)
        #expect(try message.records[0].content() == .uri("https://rooms.example/d/D-0002"))
        #expect(message.records[1].tnf == .media)
        #expect(message.records[1].typeString == DeviceTagRecord.mimeType)
        let decoded = try NDEFMessage.decode(message.encoded())
        #expect(try DeviceTag.identify(decoded) == .device(device))
        #expect(try device.message().records.count == 1)
        // With the URI it fits an NTAG213; the 38-byte MIME type alone makes a device record
        // (3 + 38 + payload bytes) too large for a 48-byte MIFARE Ultralight.
        _ = try Type2TagImage.dataArea(for: message, capacity: Type2TagModel.ntag213.dataAreaSize)
        let minimal = try DeviceTagRecord(deviceId: "D").message()
        #expect(throws: NDEFError.tooLarge(needed: 2 + 3 + 38 + 22, capacity: 48)) {
            try Type2TagImage.dataArea(for: minimal, capacity: Type2TagModel.ultralight.dataAreaSize)
        }
    }

    @Test("decode edge cases", arguments: [
        (#"{"deviceId":"A"}"#, "ok A v1"),
        (#" { "v" : 1 , "deviceId" : "B\u00e9\ud83d\ude00" , "model" : null , "x" : [ 1.5e3 , -0 , true ] } "#, "ok Bé😀 v1"),
        (#"{"v":2,"deviceId":"A"}"#, "unsupportedVersion"),
        (#"{"v":99,"deviceId":"A"}"#, "unsupportedVersion"),
        (#"{"deviceId":""}"#, "invalidField"),
        (#"{"v":"1","deviceId":"A"}"#, "invalidField"),
        (#"{"v":1.5,"deviceId":"A"}"#, "invalidField"),
        (#"{"v":0,"deviceId":"A"}"#, "invalidField"),
        (#"{"deviceId":"A","model":3}"#, "invalidField"),
        (#"{"deviceId":"A","deviceId":"B"}"#, "invalidJSON"),
        (#"{"deviceId":"A"} x"#, "invalidJSON"),
        (#"{"deviceId":"\ud800"}"#, "invalidJSON"),
        (#"{"deviceId":"a\u0000b"}"#, "invalidField"),
        (#"{"deviceId":"a\nb"}"#, "invalidField"),
        (#"{"deviceId":"A",}"#, "invalidJSON"),
        (#"{"v":01,"deviceId":"A"}"#, "invalidJSON"),
        (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "invalidJSON"),
        ("", "invalidJSON"),
        ("\"D-1\"", "notAnObject"),
    ])
    func decodeCases(json: String, expected: String) {
        let result: String
        do {
            let device = try DeviceTagRecord(payload: Array(json.utf8))
            result = "ok \(device.deviceId) v\(device.version)"
        } catch {
            result = caseName(error)
        }
        #expect(result == expected)
    }

    @Test("payload size limit is 512 bytes, both ways")
    func sizeLimit() throws {
        let prefix = #"{"deviceId":"A","pad":""#
        let exact = prefix + String(repeating: "x", count: 512 - prefix.utf8.count - 2) + #""}"#
        #expect(exact.utf8.count == 512)
        #expect(try DeviceTagRecord(payload: Array(exact.utf8)).deviceId == "A")
        let over = prefix + String(repeating: "x", count: 513 - prefix.utf8.count - 2) + #""}"#
        #expect(throws: DeviceTagError.payloadTooLarge(size: 513, limit: 512)) { try DeviceTagRecord(payload: Array(over.utf8)) }
        let long = DeviceTagRecord(deviceId: "D", model: String(repeating: "m", count: 600))
        #expect(throws: DeviceTagError.self) { try long.payload() }
        #expect(throws: DeviceTagError.cannotEncode(reason: "the device ID is empty")) { try DeviceTagRecord(deviceId: "").payload() }
    }

    @Test("media type matching ignores case and parameters")
    func mediaTypeMatching() throws {
        let upper = NDEFRecord(tnf: .media, type: Array("Application/VND.RoomBridge.Device+JSON; charset=utf-8".utf8),
                               payload: Array(#"{"deviceId":"U"}"#.utf8))
        #expect(try DeviceTag.identify(NDEFMessage(records: [upper])) == .device(DeviceTagRecord(deviceId: "U")))
        // Our type in a non-MIME record (external) is just another record.
        let external = NDEFRecord(tnf: .external, type: Array("roombridge.example:device".utf8), payload: Array(#"{"deviceId":"E"}"#.utf8))
        #expect(try DeviceTag.identify(NDEFMessage(records: [external])) == .other([external]))
        #expect(try DeviceTag.identify(NDEFMessage(records: [])) == .other([]))
    }

    @Test("identify from message bytes reports NDEF errors as NDEFError")
    func identifyBytes() throws {
        #expect(throws: NDEFError.missingMessageBegin) { try DeviceTag.identify(messageBytes: bytes("51 01 00 54")) }
        let encoded = try DeviceTagRecord(deviceId: "Z").message().encoded()
        #expect(try DeviceTag.identify(messageBytes: encoded) == .device(DeviceTagRecord(deviceId: "Z")))
    }
}
