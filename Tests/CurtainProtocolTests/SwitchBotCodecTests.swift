import Testing
@testable import CurtainProtocol

/// Fixtures are quoted from their sources:
/// - pySwitchbot (sblibs/pySwitchbot) `switchbot/devices/curtain.py` and `base_cover.py` (`OPEN_KEYS`,
///   `CLOSE_KEYS`, `POSITION_KEYS`, `STOP_KEYS`), `device.py` (`DEVICE_GET_BASIC_SETTINGS_KEY = "5702"`,
///   `_commandkey`), `tests/test_adv_parser.py` (`test_parse_advertisement_data_curtain`, `…_curtain3`) and
///   `tests/test_curtain.py` (basic-info payloads);
/// - OpenWonderLabs SwitchBotAPI-BLE `devicetypes/curtain.md` (the `570f450105ff32` example: move to 50 %).
@Suite struct SwitchBotCodecTests {
    let codec = SwitchBotCurtainCodec()

    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    @Test func commandsMatchPySwitchbot() throws {
        // curtain.py: OPEN_KEYS[1] + f"{speed:02X}00", CLOSE_KEYS[1] + f"{speed:02X}64", speed 255.
        #expect(try codec.frames(for: .command(.open)) == [Self.bytes("570f450105ff00")])
        #expect(try codec.frames(for: .command(.close)) == [Self.bytes("570f450105ff64")])
        // base_cover.py: STOP_KEYS[1].
        #expect(try codec.frames(for: .command(.stop)) == [Self.bytes("570f450100ff")])
        // device.py: DEVICE_GET_BASIC_SETTINGS_KEY.
        #expect(try codec.frames(for: .command(.sync)) == [Self.bytes("5702")])
        #expect(try codec.frames(for: .query(.battery)) == [Self.bytes("5702")])
    }

    @Test func positionIsInvertedOnTheWire() throws {
        // curtain.md example 570f450105ff32: wire 50 = our 50. pySwitchbot set_position(30) with reverse_mode
        // (its default, our orientation) sends 100 - 30 = 0x46.
        #expect(try codec.frames(for: .command(.moveTo(50))) == [Self.bytes("570f450105ff32")])
        #expect(try codec.frames(for: .command(.moveTo(30))) == [Self.bytes("570f450105ff46")])
        #expect(try codec.frames(for: .command(.moveTo(100))) == [Self.bytes("570f450105ff00")])
    }

    @Test func slowSpeedForCurtain3() throws {
        let slow = SwitchBotCurtainCodec(speed: .slow)
        #expect(try slow.frames(for: .command(.open)) == [Self.bytes("570f45010501" + "00")])
    }

    @Test func passwordCarriesItsCRC32() throws {
        // device.py _commandkey: "571" + key[3] + "%08x" % crc32(password) + key[4:]; crc32("abc") = 352441c2.
        let codec = SwitchBotCurtainCodec(password: "abc")
        #expect(SwitchBotCurtainCodec.crc32(Array("abc".utf8)) == 0x3524_41C2)
        #expect(try codec.frames(for: .command(.sync)) == [Self.bytes("5712352441c2")])
        #expect(try codec.frames(for: .command(.stop)) == [Self.bytes("571f352441c2450100ff")])
    }

    @Test func scheduleAndLoginWriteNothing() throws {
        #expect(try codec.frames(for: .command(.setSchedule(.disabled))).isEmpty)
        #expect(try codec.frames(for: .login(pin: 1234)).isEmpty)
    }

    @Test func outOfRangePositionRefusedBeforeWriting() {
        #expect(throws: CurtainCommandError.positionOutOfRange(101)) {
            try codec.frames(for: .command(.moveTo(101)))
        }
    }

    @Test func okReplyAccepts() throws {
        #expect(try codec.decode(notification: [0x01], replyingTo: .command(.open)) == [.accepted])
        // curtain.md: the 0x45 action reply carries device 0's position (wire 0x32 = 50).
        #expect(try codec.decode(notification: [0x01, 0x46], replyingTo: .command(.moveTo(30)))
            == [.accepted, .position(30)])
    }

    @Test(arguments: [(UInt8(0x02), SwitchBotReplyStatus.error), (0x03, .busy), (0x06, .lowBattery),
                      (0x07, .passwordRequired), (0x09, .wrongPassword), (0x05, .notSupported)])
    func errorRepliesAreTyped(byte: UInt8, status: SwitchBotReplyStatus) throws {
        let events = try codec.decode(notification: [byte], replyingTo: .command(.open))
        #expect(events == [.refused(.switchBot(status))])
    }

    @Test func errorFromAnUncalibratedCurtainMeansCalibrate() {
        #expect(CurtainDeviceError.switchBot(.error).given(calibrated: false) == .switchBotNeedsCalibration)
        #expect(CurtainDeviceError.switchBot(.error).given(calibrated: true) == .switchBot(.error))
        #expect(CurtainDeviceError.switchBot(.busy).given(calibrated: false) == .switchBot(.busy))
    }

    @Test func errorsSayWhatToDo() {
        #expect(CurtainDeviceError.switchBotNeedsCalibration.description
            == "SwitchBot says 'needs calibration': calibrate it in the SwitchBot app once")
        #expect(CurtainDeviceError.switchBot(.wrongPassword).description.contains("correct `password`"))
        #expect(CurtainDeviceError.switchBot(.lowBattery).description.contains("charge"))
    }

    @Test func basicInfoReply() throws {
        // curtain.md 0x02 reply: 01 BAT FW CHAIN STATE1 STATE2 POS TIMERS. State2 0x05: calibrated, opening.
        let reply: [UInt8] = [0x01, 0x57, 0x2A, 0x01, 0x00, 0x05, 0x46, 0x00]
        let events = try codec.decode(notification: reply, replyingTo: .command(.sync))
        #expect(events == [.accepted, .battery(0x57), .calibrated(true), .motion(.opening), .position(30)])
    }

    @Test func basicInfoMotionAsPySwitchbotReadsIt() throws {
        // tests/test_curtain.py test_device_active_opening: payload byte 5 = 67 (0b01000011) means "in motion";
        // the status byte is set to OK here (the test mocks past it).
        let events = try codec.decode(notification: [0x01, 0, 0, 0, 0, 67, 10, 0], replyingTo: .query(.status))
        #expect(events.contains(.moving(true)))
        #expect(events.contains(.position(90)))
        let still = try codec.decode(notification: [0x01, 0, 0, 0, 0, 0, 100, 0], replyingTo: .query(.status))
        #expect(still.contains(.motion(.idle)))
        #expect(still.contains(.position(0)))
    }

    @Test func shortBasicInfoRefused() {
        #expect(throws: CurtainDecodeError.self) {
            try codec.decode(notification: [0x01, 0x57], replyingTo: .command(.sync))
        }
    }

    @Test func curtain2AdvertisementAsPySwitchbotParsesIt() {
        // test_adv_parser.py test_parse_advertisement_data_curtain: calibration True, battery 88, not moving,
        // position 100 (pySwitchbot's reverse mode = our orientation: open), light level 1.
        let ad = CurtainAdvertisementData(
            serviceData: ["0000fd3d-0000-1000-8000-00805f9b34fb": Array("c".utf8) + [0xC0, 0x58, 0x00, 0x11, 0x04]],
            manufacturerData: [2409: [0xE7, 0xAB, 0x46, 0xAC, 0x8F, 0x92, 0x7C, 0x0F, 0x00, 0x11, 0x04]])
        #expect(codec.decode(advertisement: ad)
            == [.position(100), .moving(false), .light(10), .battery(88), .calibrated(true)])
    }

    @Test func curtain3AdvertisementTakesBatteryFromManufacturerData() {
        // test_adv_parser.py test_parse_advertisement_data_curtain3: battery 73 from manufacturer data byte 12.
        let ad = CurtainAdvertisementData(
            serviceData: ["0000FD3D-0000-1000-8000-00805F9B34FB": Array("{".utf8) + [0xC0, 0x49, 0x00, 0x11, 0x04]],
            manufacturerData: [2409: [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0xF7, 0x07, 0x00, 0x11, 0x04, 0x00, 0x49]])
        #expect(codec.decode(advertisement: ad)
            == [.position(100), .moving(false), .light(10), .battery(73), .calibrated(true)])
    }

    @Test func passiveAdvertisementWithoutServiceData() {
        // test_parse_advertisement_data_curtain_passive: manufacturer data only; no battery, no calibration.
        let ad = CurtainAdvertisementData(
            manufacturerData: [2409: [0xE7, 0xAB, 0x46, 0xAC, 0x8F, 0x92, 0x7C, 0x0F, 0x00, 0x11, 0x04]])
        #expect(codec.decode(advertisement: ad) == [.position(100), .moving(false), .light(10)])
    }

    @Test func otherSwitchBotDevicesIgnored() {
        // Model 'H' (Bot) in service data byte 0.
        let ad = CurtainAdvertisementData(serviceData: [SwitchBotCurtainCodec.serviceDataUUID: [0x48, 0x90, 0xD9]])
        #expect(codec.decode(advertisement: ad).isEmpty)
    }

    @Test(arguments: [SwitchBotCurtainAdvertisement.Model.curtain, .curtain3])
    func builtAdvertisementsRoundTrip(model: SwitchBotCurtainAdvertisement.Model) {
        let built = SwitchBotCurtainAdvertisement(model: model, address: [0xC4, 0x7C, 0x8D, 0x6A, 0x3E, 0x22],
                                                  calibrated: false, battery: 64, wirePosition: 70, moving: true,
                                                  lightLevel: 4)
        let ad = CurtainAdvertisementData(serviceData: [SwitchBotCurtainCodec.serviceDataUUID: built.serviceData],
                                          manufacturerData: [SwitchBotCurtainCodec.companyID: built.manufacturerData])
        #expect(codec.decode(advertisement: ad)
            == [.position(30), .moving(true), .light(40), .battery(64), .calibrated(false)])
        #expect(built.manufacturerData.count == (model == .curtain3 ? 13 : 11))
    }
}
