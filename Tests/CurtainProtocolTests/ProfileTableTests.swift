import Testing
@testable import CurtainProtocol

@Suite struct ProfileTableTests {
    @Test func stableIDsResolve() throws {
        #expect(CurtainProfile.all.map(\.id) == [.roombridge, .switchbot, .am43])
        for id in CurtainProfile.ID.allCases { #expect(CurtainProfile.named(id).id == id) }
        #expect(CurtainProfile.named("SwitchBot")?.id == .switchbot)
        #expect(CurtainProfile.named("somfy") == nil)
    }

    @Test func profileFacts() {
        let sb = CurtainProfile.switchbot
        #expect(sb.serviceUUID == "cba20d00-224d-11e6-9fb8-0002a5d5c51b")
        #expect(sb.writeCharacteristicUUID == "cba20002-224d-11e6-9fb8-0002a5d5c51b")
        #expect(sb.notifyCharacteristicUUID == "cba20003-224d-11e6-9fb8-0002a5d5c51b")
        #expect(sb.writeType == .command && sb.positionInverted && !sb.keepsSchedule && sb.motionFromAdvertisements)
        let am = CurtainProfile.am43
        #expect(am.sharesCharacteristic && am.positionInverted && !am.keepsSchedule)
        #expect(am.login == .pin(default: 8888))
        let rb = CurtainProfile.roombridge
        #expect(rb.keepsSchedule && !rb.positionInverted && rb.reportsManualFlag && rb.writeType == .request)
        #expect(!rb.sharesCharacteristic)
    }

    @Test func connectionPolicyIsData() {
        #expect(CurtainProfile.switchbot.connection == .onDemand(hold: .milliseconds(8500)))
        #expect(CurtainProfile.roombridge.connection == .persistent)
        #expect(CurtainProfile.am43.connection == .persistent)
        #expect(CurtainProfile.switchbot.with(hold: .seconds(3)).connection.hold == .seconds(3))
        #expect(CurtainProfile.am43.with(hold: .seconds(3)).connection == .persistent)
    }

    @Test func passwordOnlyChangesSwitchBot() throws {
        let sb = CurtainProfile.switchbot.with(password: "abc")
        #expect(try sb.codec.frames(for: .command(.sync)) == [[0x57, 0x12, 0x35, 0x24, 0x41, 0xC2]])
        let rb = CurtainProfile.roombridge.with(password: "abc")
        #expect(try rb.codec.frames(for: .command(.sync)) == [[0x06]])
    }

    @Test func roomBridgeCodecWrapsTheGATTProfile() throws {
        let codec = RoomBridgeCodec()
        #expect(try codec.frames(for: .command(.moveTo(40))) == [[0x04, 40]])
        #expect(try codec.frames(for: .query(.battery)) == [[0x06]])
        let status = CurtainStatus(motion: .opening, position: 10, target: 100, manual: true)
        #expect(try codec.decode(notification: CurtainFrame.status(status).bytes, replyingTo: nil) == [.status(status)])
        #expect(try codec.decode(notification: [0x83, 0x04, 0x03], replyingTo: nil)
            == [.refused(.roomBridge(opcode: 0x04, code: .outOfRange))])
        let ad = CurtainAdvertisementData(serviceData: [CurtainUUID.service: [55, 0, 0, 80]])
        #expect(codec.decode(advertisement: ad) == [.position(55), .motion(.idle), .battery(80)])
    }

    @Test(arguments: CurtainProfile.all.map(\.id))
    func everyProfileEncodesEveryMotorCommand(id: CurtainProfile.ID) throws {
        let codec = CurtainProfile.named(id).codec
        for command in [CurtainCommand.open, .close, .stop, .moveTo(42)] {
            #expect(try codec.frames(for: .command(command)).count == 1, "\(id) \(command)")
        }
    }

    @Test func positionMapping() {
        #expect(CurtainPositionMapping.wire(fromAPI: 30, inverted: true) == 70)
        #expect(CurtainPositionMapping.wire(fromAPI: 130, inverted: false) == 100)
        #expect(CurtainPositionMapping.api(fromWire: 70, inverted: true) == 30)
        #expect(CurtainPositionMapping.api(fromWire: 200, inverted: true) == 0)
    }
}
