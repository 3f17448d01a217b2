import Testing
@testable import CurtainProtocol

@Suite struct CommandEncodingTests {
    static let schedule = CurtainSchedule(openTime: try! CurtainTime(hour: 7, minute: 30), openEnabled: true,
                                          closeTime: try! CurtainTime(hour: 21, minute: 5), closeEnabled: false)

    @Test(arguments: [
        (CurtainCommand.open, [0x01] as [UInt8]),
        (.close, [0x02]),
        (.stop, [0x03]),
        (.moveTo(0), [0x04, 0]),
        (.moveTo(40), [0x04, 40]),
        (.moveTo(100), [0x04, 100]),
        (.setSchedule(schedule), [0x05, 0x01, 7, 30, 21, 5]),
        (.setSchedule(.disabled), [0x05, 0x00, 0, 0, 0, 0]),
        (.sync, [0x06]),
    ])
    func encodes(command: CurtainCommand, bytes: [UInt8]) throws {
        #expect(try command.encode() == bytes)
        #expect(try CurtainCommand.decode(bytes) == command)
    }

    @Test(arguments: [101, 255, -1, 1000])
    func refusesBadPosition(_ p: Int) {
        #expect(throws: CurtainCommandError.positionOutOfRange(p)) { try CurtainCommand.moveTo(p).encode() }
    }

    @Test func drivesMotor() {
        #expect(CurtainCommand.open.drivesMotor)
        #expect(CurtainCommand.close.drivesMotor)
        #expect(CurtainCommand.stop.drivesMotor)
        #expect(CurtainCommand.moveTo(3).drivesMotor)
        #expect(!CurtainCommand.sync.drivesMotor)
        #expect(!CurtainCommand.setSchedule(.disabled).drivesMotor)
    }

    @Test(arguments: [
        ([] as [UInt8], CurtainDecodeError.badLength(opcode: 0, expected: 1, actual: 0)),
        ([0x00], .unknownOpcode(0x00)),
        ([0x07], .unknownOpcode(0x07)),
        ([0x81, 0, 0, 0, 0], .unknownOpcode(0x81)),
        ([0x01, 0x00], .badLength(opcode: 1, expected: 1, actual: 2)),
        ([0x04], .badLength(opcode: 4, expected: 2, actual: 1)),
        ([0x04, 1, 2], .badLength(opcode: 4, expected: 2, actual: 3)),
        ([0x05, 0, 0, 0, 0], .badLength(opcode: 5, expected: 6, actual: 5)),
        ([0x06, 6], .badLength(opcode: 6, expected: 1, actual: 2)),
        ([0x04, 101], .outOfRange(opcode: 4, field: "position", value: 101)),
        ([0x05, 0x04, 0, 0, 0, 0], .outOfRange(opcode: 5, field: "flags", value: 4)),
        ([0x05, 0, 24, 0, 0, 0], .outOfRange(opcode: 5, field: "open hour", value: 24)),
        ([0x05, 0, 0, 60, 0, 0], .outOfRange(opcode: 5, field: "open minute", value: 60)),
        ([0x05, 0, 0, 0, 24, 0], .outOfRange(opcode: 5, field: "close hour", value: 24)),
        ([0x05, 0, 0, 0, 0, 60], .outOfRange(opcode: 5, field: "close minute", value: 60)),
    ])
    func controllerSideDecodeErrors(bytes: [UInt8], error: CurtainDecodeError) {
        #expect(throws: error) { try CurtainCommand.decode(bytes) }
    }

    @Test func decodeErrorCodes() {
        #expect(CurtainDecodeError.unknownOpcode(9).errorCode == .unknownOpcode)
        #expect(CurtainDecodeError.unknownOpcode(9).attError == 0x80)
        #expect(CurtainDecodeError.badLength(opcode: 1, expected: 1, actual: 2).errorCode == .badLength)
        #expect(CurtainDecodeError.badLength(opcode: 1, expected: 1, actual: 2).attError == 0x0D)
        #expect(CurtainDecodeError.outOfRange(opcode: 4, field: "position", value: 200).errorCode == .outOfRange)
        #expect(CurtainDecodeError.outOfRange(opcode: 4, field: "position", value: 200).attError == 0x13)
        #expect(CurtainDecodeError.outOfRange(opcode: 4, field: "position", value: 200).opcode == 4)
    }
}

@Suite struct TimeTests {
    @Test(arguments: [("07:30", 7, 30), ("7:05", 7, 5), ("00:00", 0, 0), ("23:59", 23, 59)])
    func parses(text: String, h: Int, m: Int) throws {
        let t = try CurtainTime(parsing: text)
        #expect(t.hour == h && t.minute == m)
    }

    @Test(arguments: ["", "7", "07:3", "07:300", "a7:30", "07-30", "07:30:00", ":30", "123:00", " 7:30", "+7:30"])
    func refusesBadFormat(_ text: String) {
        #expect(throws: CurtainCommandError.badTimeFormat(text)) { try CurtainTime(parsing: text) }
    }

    @Test func refusesOutOfRange() {
        #expect(throws: CurtainCommandError.hourOutOfRange(24)) { try CurtainTime(parsing: "24:00") }
        #expect(throws: CurtainCommandError.minuteOutOfRange(60)) { try CurtainTime(parsing: "12:60") }
        #expect(throws: CurtainCommandError.hourOutOfRange(-1)) { try CurtainTime(hour: -1, minute: 0) }
        #expect(throws: CurtainCommandError.minuteOutOfRange(-1)) { try CurtainTime(hour: 0, minute: -1) }
    }

    @Test func formats() throws {
        #expect(try CurtainTime(hour: 7, minute: 5).description == "07:05")
        #expect(try CurtainTime(hour: 23, minute: 59).description == "23:59")
        #expect(CurtainTime.midnight.description == "00:00")
        #expect(try CurtainTime(hour: 6, minute: 0) < CurtainTime(hour: 6, minute: 1))
    }

    @Test func errorMessagesSayWhatToDo() {
        #expect(CurtainCommandError.positionOutOfRange(101).description.contains("0 (closed) to 100 (open)"))
        #expect(CurtainCommandError.badTimeFormat("x").description.contains("HH:MM"))
    }
}
