import Testing
@testable import CurtainProtocol

/// Fixtures are quoted from their sources:
/// - openhab/openhab-addons `bundles/org.openhab.binding.bluetooth.am43/src/test/java/org/openhab/binding/bluetooth/am43/CommandTest.java`
///   (`00ff00009a0a01cc5d` stop, `00ff00009a0a01dd4c` open, `00ff00009aa701013d` get all/position);
/// - TheBazeman/A-OK-AM43-Blinds-Drive `README.md` (`00ff00009a0d0164f2` 100 % closed, `00ff00009a0d010096` 0 %);
/// - GylleTanken/python-zemismart-roller-shade `Zemismart.py` (login with 8888: `00ff00009a170222b815`);
/// - ESPHome `esphome/components/am43/am43_base.cpp`: `Am43Encoder::get_battery_level_request()` (A2, data 01) and
///   `get_light_level_request()` (AA, data 01) through `encode_()` and `checksum_()` (XOR of the whole frame, then
///   ^0xFF — the same as XOR from `9A` on, since `00 FF 00 00` XOR to 0xFF) give `00ff00009aa2010138` battery and
///   `00ff00009aaa010130` light;
/// - replies `9a a7 07 0f 32 4e 00 00 00 30 79` (position 0x4e) and `9a aa 02 00 00 32` (light 0), as quoted in an
///   `am43.js` driver we could not locate again; their layout agrees with ESPHome's `Am43Decoder::decode` (position
///   at byte 5 of `A7`, light at byte 4 of `AA`);
/// - reply layouts from ESPHome `esphome/components/am43/am43_base.cpp` `Am43Decoder::decode` (battery at byte 7,
///   position at byte 5 of `A7` and byte 4 of `A1`, light at byte 4, ACK/NACK at byte 3).
@Suite struct AM43CodecTests {
    let codec = AM43Codec()
    static func bytes(_ hex: String) -> [UInt8] { SwitchBotCodecTests.bytes(hex) }

    @Test func requestsMatchQuotedFrames() throws {
        #expect(try codec.frames(for: .command(.stop)) == [Self.bytes("00ff00009a0a01cc5d")])
        #expect(try codec.frames(for: .command(.open)) == [Self.bytes("00ff00009a0a01dd4c")])
        #expect(try codec.frames(for: .query(.status)) == [Self.bytes("00ff00009aa701013d")])
        #expect(try codec.frames(for: .query(.battery)) == [Self.bytes("00ff00009aa2010138")])
        #expect(try codec.frames(for: .query(.light)) == [Self.bytes("00ff00009aaa010130")])
        #expect(try codec.frames(for: .login(pin: 8888)) == [Self.bytes("00ff00009a170222b815")])
    }

    @Test func closeUsesEE() throws {
        let frame = try #require(try codec.frames(for: .command(.close)).first)
        #expect(Array(frame[5...7]) == [0x0A, 0x01, 0xEE])
        #expect(try AM43Codec.decodeRequest(frame) == (0x0A, [0xEE]))
    }

    @Test func moveToInvertsThePosition() throws {
        // Wire 100 = closed = our 0; wire 0 = open = our 100.
        #expect(try codec.frames(for: .command(.moveTo(0))) == [Self.bytes("00ff00009a0d0164f2")])
        #expect(try codec.frames(for: .command(.moveTo(100))) == [Self.bytes("00ff00009a0d010096")])
    }

    @Test func syncAsksPositionBatteryAndLight() throws {
        let frames = try codec.frames(for: .command(.sync))
        #expect(frames.map { $0[5] } == [0xA7, 0xA2, 0xAA])
        #expect(try codec.frames(for: .command(.setSchedule(.disabled))).isEmpty)
    }

    @Test func decodeRequestChecksTheChecksum() throws {
        #expect(try AM43Codec.decodeRequest(Self.bytes("00ff00009a0d0164f2")) == (0x0D, [0x64]))
        #expect(throws: CurtainDecodeError.outOfRange(opcode: 0x0D, field: "checksum", value: 0xF3)) {
            try AM43Codec.decodeRequest(Self.bytes("00ff00009a0d0164f3"))
        }
        #expect(throws: CurtainDecodeError.self) { try AM43Codec.decodeRequest(Self.bytes("00ff00009a0d02")) }
    }

    @Test func quotedRepliesDecode() throws {
        #expect(try codec.decode(notification: Self.bytes("9aa7070f324e0000003079"), replyingTo: nil)
            == [.position(100 - 0x4E)])
        #expect(try codec.decode(notification: Self.bytes("9aaa02000032"), replyingTo: nil) == [.light(0)])
    }

    @Test func repliesBuiltFromTheDecoderLayout() throws {
        let ack = AM43Codec.notification(0x0A, [AM43Codec.ack])
        #expect(try codec.decode(notification: ack, replyingTo: nil) == [.accepted])
        let nack = AM43Codec.notification(0x0D, [AM43Codec.nack])
        #expect(try codec.decode(notification: nack, replyingTo: nil) == [.refused(.am43Refused(command: 0x0D))])
        #expect(try codec.decode(notification: AM43Codec.notification(0x17, [0x5A]), replyingTo: nil) == [.loggedIn])
        #expect(try codec.decode(notification: AM43Codec.notification(0x17, [0xA5]), replyingTo: nil)
            == [.refused(.am43WrongPin)])
        #expect(try codec.decode(notification: AM43Codec.notification(0xA2, [0, 0, 0, 0, 77]), replyingTo: nil)
            == [.battery(77)])
        #expect(try codec.decode(notification: AM43Codec.notification(0xA1, [0, 30]), replyingTo: nil)
            == [.position(70)])
        #expect(try codec.decode(notification: AM43Codec.notification(0xAA, [0, 9]), replyingTo: nil) == [.light(100)])
    }

    @Test func badNotificationsRefused() {
        #expect(throws: CurtainDecodeError.outOfRange(opcode: 0xA7, field: "checksum", value: 0x78)) {
            try codec.decode(notification: Self.bytes("9aa7070f324e0000003078"), replyingTo: nil)
        }
        #expect(throws: CurtainDecodeError.self) { try codec.decode(notification: [0x9A, 0xA2], replyingTo: nil) }
        #expect(throws: CurtainDecodeError.unknownOpcode(0x42)) {
            try codec.decode(notification: AM43Codec.notification(0x42, [0]), replyingTo: nil)
        }
        // A battery reply too short for byte 7.
        #expect(throws: CurtainDecodeError.badLength(opcode: 0xA2, expected: 8, actual: 6)) {
            try codec.decode(notification: AM43Codec.notification(0xA2, [0, 0]), replyingTo: nil)
        }
    }

    @Test func wrongPinSaysWhatToDo() {
        #expect(CurtainDeviceError.am43WrongPin.description.contains("default 8888"))
    }
}
