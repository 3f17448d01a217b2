import Testing
@testable import CurtainProtocol

@Suite struct FrameTests {
    @Test(arguments: [
        ([0x81, 0, 0, 0, 0] as [UInt8], CurtainFrame.status(CurtainStatus(motion: .idle, position: 0, target: 0))),
        ([0x81, 1, 42, 100, 1], .status(CurtainStatus(motion: .opening, position: 42, target: 100, manual: true))),
        ([0x81, 2, 60, 0, 2], .status(CurtainStatus(motion: .closing, position: 60, target: 0, scheduled: true))),
        ([0x81, 0, 100, 100, 3], .status(CurtainStatus(motion: .idle, position: 100, target: 100, manual: true, scheduled: true))),
        ([0x82, 3, 6, 45, 22, 0], .schedule(CurtainSchedule(openTime: try! CurtainTime(hour: 6, minute: 45), openEnabled: true,
                                                           closeTime: try! CurtainTime(hour: 22, minute: 0), closeEnabled: true))),
        ([0x82, 2, 0, 0, 18, 30], .schedule(CurtainSchedule(openTime: .midnight, openEnabled: false,
                                                           closeTime: try! CurtainTime(hour: 18, minute: 30), closeEnabled: true))),
        ([0x83, 0x09, 0x01], .error(opcode: 9, code: .unknownOpcode)),
        ([0x83, 0x04, 0x02], .error(opcode: 4, code: .badLength)),
        ([0x83, 0x04, 0x03], .error(opcode: 4, code: .outOfRange)),
        ([0x83, 0x01, 0x04], .error(opcode: 1, code: .rejected)),
    ])
    func roundTrips(bytes: [UInt8], frame: CurtainFrame) throws {
        #expect(try CurtainFrame.decode(bytes) == frame)
        #expect(frame.bytes == bytes)
    }

    @Test(arguments: [
        ([] as [UInt8], CurtainDecodeError.badLength(opcode: 0, expected: 1, actual: 0)),
        ([0x80], .unknownOpcode(0x80)),
        ([0x01], .unknownOpcode(0x01)),
        ([0x84, 0, 0], .unknownOpcode(0x84)),
        ([0x81, 0, 0, 0], .badLength(opcode: 0x81, expected: 5, actual: 4)),
        ([0x81, 0, 0, 0, 0, 0], .badLength(opcode: 0x81, expected: 5, actual: 6)),
        ([0x82, 0, 0, 0, 0], .badLength(opcode: 0x82, expected: 6, actual: 5)),
        ([0x83, 0], .badLength(opcode: 0x83, expected: 3, actual: 2)),
        ([0x81, 3, 0, 0, 0], .outOfRange(opcode: 0x81, field: "motion", value: 3)),
        ([0x81, 0, 101, 0, 0], .outOfRange(opcode: 0x81, field: "position", value: 101)),
        ([0x81, 0, 0, 101, 0], .outOfRange(opcode: 0x81, field: "target", value: 101)),
        ([0x81, 0, 0, 0, 4], .outOfRange(opcode: 0x81, field: "flags", value: 4)),
        ([0x82, 8, 0, 0, 0, 0], .outOfRange(opcode: 0x82, field: "flags", value: 8)),
        ([0x82, 0, 25, 0, 0, 0], .outOfRange(opcode: 0x82, field: "open hour", value: 25)),
        ([0x82, 0, 0, 0, 0, 99], .outOfRange(opcode: 0x82, field: "close minute", value: 99)),
        ([0x83, 1, 0], .outOfRange(opcode: 0x83, field: "error code", value: 0)),
        ([0x83, 1, 5], .outOfRange(opcode: 0x83, field: "error code", value: 5)),
    ])
    func refusesBadFrames(bytes: [UInt8], error: CurtainDecodeError) {
        #expect(throws: error) { try CurtainFrame.decode(bytes) }
    }

    @Test func manualMotionActive() {
        #expect(CurtainStatus(motion: .opening, position: 1, target: 100, manual: true).isManualMotionActive)
        #expect(CurtainStatus(motion: .closing, position: 1, target: 0, manual: true).isManualMotionActive)
        #expect(!CurtainStatus(motion: .idle, position: 1, target: 1, manual: true).isManualMotionActive)
        #expect(!CurtainStatus(motion: .opening, position: 1, target: 100, manual: false, scheduled: true).isManualMotionActive)
    }

    @Test func advertisement() {
        let ad = CurtainAdvertisement(serviceData: [55, 1, 1, 80])
        #expect(ad == CurtainAdvertisement(position: 55, motion: .opening, manual: true, scheduled: false, battery: 80))
        #expect(ad?.bytes == [55, 1, 1, 80])
        #expect(CurtainAdvertisement(serviceData: [55, 1, 1]) == nil)
        #expect(CurtainAdvertisement(serviceData: [101, 0, 0, 0]) == nil)
        #expect(CurtainAdvertisement(serviceData: [1, 3, 0, 0]) == nil)
        #expect(CurtainAdvertisement(serviceData: [1, 0, 4, 0]) == nil)
    }

    @Test func uuids() {
        #expect(CurtainUUID.matches(CurtainUUID.service, "5C3A0001-8F4E-4B8E-9E61-637572746E00"))
        #expect(!CurtainUUID.matches(CurtainUUID.service, CurtainUUID.command))
    }
}
