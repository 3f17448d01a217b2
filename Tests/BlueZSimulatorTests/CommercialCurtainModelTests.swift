import CurtainProtocol
import Testing
@testable import BlueZSimulator

/// The SwitchBot and AM43 device models, driven with the requests real clients send (pySwitchbot keys, frames
/// quoted in AM43 sources — see Tests/CurtainProtocolTests for their origin) and read back with our codecs.
@Suite struct SwitchBotModelTests {
    static func hex(_ s: String) -> [UInt8] {
        stride(from: 0, to: s.count, by: 2).map { i in
            let a = s.index(s.startIndex, offsetBy: i)
            return UInt8(s[a..<s.index(a, offsetBy: 2)], radix: 16)!
        }
    }

    static func model(position: Int = 0, _ options: SwitchBotCurtainModel.Options = .init()) -> SwitchBotCurtainModel {
        SwitchBotCurtainModel(motor: CurtainMotorModel(position: position, speed: 10), address: "C4:7C:8D:6A:3E:22",
                              options: options)
    }

    func replies(_ model: inout SwitchBotCurtainModel, _ hex: String) -> [[UInt8]] {
        guard case .accepted(let notes) = model.write(Self.hex(hex), withResponse: false) else { return [] }
        return notes
    }

    @Test func pySwitchbotOpenSequenceOpensAndIsAdvertised() {
        var m = Self.model()
        // curtain.py open(): OPEN_KEYS[0], then OPEN_KEYS[1] + "ff00"; each answered with status 01.
        #expect(replies(&m, "570f4501010100") == [[0x01]])
        #expect(replies(&m, "570f450105ff00") == [[0x01]])
        #expect(m.status.motion == .opening && m.status.target == 100)
        let moving = SwitchBotCurtainCodec().decode(advertisement: m.advertisement)
        #expect(moving.contains(.moving(true)))
        #expect(m.advance(by: 20).isEmpty)  // motion is advertised, never notified
        let done = SwitchBotCurtainCodec().decode(advertisement: m.advertisement)
        #expect(done.contains(.position(100)) && done.contains(.moving(false)))
    }

    @Test func moveAndStop() {
        var m = Self.model(position: 100)
        #expect(replies(&m, "570f450105ff46") == [[0x01]])  // wire 70 = our 30
        #expect(m.status.target == 30)
        _ = m.advance(by: 2)
        #expect(replies(&m, "570f450100ff") == [[0x01]])
        #expect(m.status.motion == .idle && m.status.position == 80)
    }

    @Test func basicInfoDecodesWithOurCodec() throws {
        var m = Self.model(position: 30)
        let notes = replies(&m, "5702")
        #expect(notes.count == 1)
        let events = try SwitchBotCurtainCodec().decode(notification: notes[0], replyingTo: .command(.sync))
        #expect(events == [.accepted, .battery(87), .calibrated(true), .motion(.idle), .position(30)])
    }

    /// What a client polling `57 02` during a pull reads: pySwitchbot `devices/curtain.py` `get_basic_info` takes
    /// byte 5 `& 0b01000011` as "in motion" and byte 6 as the wire position.
    @Test func basicInfoDuringAPullReportsTheMotion() throws {
        var m = Self.model()
        _ = m.press(.open)
        _ = m.advance(by: 2)
        let info = replies(&m, "5702")[0]
        #expect(info[5] & 0b0100_0011 != 0)
        #expect(info[6] == 80)  // 20 % open
        let events = try SwitchBotCurtainCodec().decode(notification: info, replyingTo: .query(.status))
        #expect(events.contains(.motion(.opening)) && events.contains(.position(20)))
        // Read by length even when a command's reply was awaited (a poll crossing a command).
        #expect(try SwitchBotCurtainCodec().decode(notification: info, replyingTo: .command(.open)) == events)
    }

    @Test func touchAndGoIsAdvertisedMotionOnly() {
        var m = Self.model()
        #expect(m.press(.open).isEmpty)
        #expect(m.status.isManualMotionActive)
        #expect(SwitchBotCurtainCodec().decode(advertisement: m.advertisement).contains(.moving(true)))
    }

    @Test func passwordChecked() {
        var m = Self.model(.init(password: "abc"))
        #expect(replies(&m, "5702") == [[0x07]])
        #expect(replies(&m, "571200000000") == [[0x09]])
        #expect(replies(&m, "5712352441c2").first?.first == 0x01)
        #expect(replies(&m, "571f352441c2450105ff00") == [[0x01]])
        #expect(m.status.motion == .opening)
    }

    @Test func uncalibratedRefusesMoves() {
        var m = Self.model(.init(calibrated: false))
        #expect(replies(&m, "570f450105ff00") == [[0x02]])
        #expect(m.status.motion == .idle)
        #expect(SwitchBotCurtainCodec().decode(advertisement: m.advertisement).contains(.calibrated(false)))
    }

    @Test func unknownRequestsNotSupported() {
        var m = Self.model()
        #expect(replies(&m, "570f460401") == [[0x05]])
        #expect(replies(&m, "00") == [[0x05]])
    }
}

@Suite struct AM43ModelTests {
    static func model(position: Int = 0, pin: UInt16 = 8888) -> AM43CurtainModel {
        AM43CurtainModel(motor: CurtainMotorModel(position: position, speed: 10, statusInterval: 0.5),
                         options: .init(pin: pin))
    }

    func notes(_ m: inout AM43CurtainModel, _ hex: String) -> [[UInt8]] {
        guard case .accepted(let n) = m.write(SwitchBotModelTests.hex(hex), withResponse: false) else { return [] }
        return n
    }

    func events(_ n: [[UInt8]]) throws -> [CurtainDeviceEvent] {
        try n.flatMap { try AM43Codec().decode(notification: $0, replyingTo: nil) }
    }

    @Test func commandsBeforeLoginAreRefused() throws {
        var m = Self.model()
        #expect(try events(notes(&m, "00ff00009a0a01dd4c")) == [.refused(.am43Refused(command: 0x0A))])
        #expect(m.status.motion == .idle)
    }

    @Test func loginThenOpenPushesPositions() throws {
        var m = Self.model()
        #expect(try events(notes(&m, "00ff00009a170222b815")) == [.loggedIn])
        #expect(try events(notes(&m, "00ff00009a0a01dd4c")) == [.accepted, .position(0)])
        #expect(m.status.motion == .opening)
        let pushes = try events(m.advance(by: 1))
        #expect(pushes == [.position(5), .position(10)])
        _ = m.advance(by: 20)
        #expect(m.status.position == 100 && m.status.motion == .idle)
    }

    @Test func wrongPinRefused() throws {
        var m = Self.model(pin: 1234)
        #expect(try events(notes(&m, "00ff00009a170222b815")) == [.refused(.am43WrongPin)])
    }

    @Test func queriesAnswered() throws {
        var m = Self.model(position: 30)
        _ = notes(&m, "00ff00009a170222b815")
        #expect(try events(notes(&m, "00ff00009aa701013d")) == [.position(30)])
        #expect(try events(notes(&m, "00ff00009aa2010138")) == [.battery(76)])
        #expect(try events(notes(&m, "00ff00009aaa010130")) == [.light(44)])
    }

    @Test func moveToQuotedFrame() throws {
        var m = Self.model(position: 100)
        _ = notes(&m, "00ff00009a170222b815")
        #expect(try events(notes(&m, "00ff00009a0d0164f2")).first == .accepted)  // wire 100 = closed
        #expect(m.status.target == 0)
    }

    @Test func badChecksumIgnored() {
        var m = Self.model()
        _ = notes(&m, "00ff00009a170222b815")
        #expect(notes(&m, "00ff00009a0a01dd4d").isEmpty)
        #expect(m.status.motion == .idle)
    }

    @Test func remoteButtonPushesAndLoginForgottenOnLinkDrop() throws {
        var m = Self.model()
        _ = notes(&m, "00ff00009a170222b815")
        #expect(try events(m.press(.open)) == [.position(0)])
        #expect(m.status.isManualMotionActive)
        m.linkDropped()
        #expect(try events(notes(&m, "00ff00009a0a01cc5d")) == [.refused(.am43Refused(command: 0x0A))])
    }
}
