import CurtainProtocol

/// A SwitchBot Curtain's firmware as the simulator plays it.
///
/// Requests and replies follow OpenWonderLabs SwitchBotAPI-BLE `devicetypes/curtain.md` and what pySwitchbot
/// sends (`switchbot/devices/curtain.py`, `base_cover.py`, `device.py`): every request on `cba20002` is answered by
/// one notification on `cba20003` whose byte 0 is the status. The position, motion, battery, light level and
/// calibration are advertised (service data `fd3d`, manufacturer data 0x0969, pySwitchbot `process_wocurtain`);
/// motion is not notified. The wire position is 0 = open; the motor model runs in our orientation (0 = closed).
///
/// Simplifications: one curtain (chain length 1); requests of the 0x0F 0x46 family ("get") and anything else
/// unknown are answered `05` (not supported); an uncalibrated curtain answers moves with `02`; a real curtain
/// reports the position in the 0x45 reply only on some firmware, the simulator does not.
public struct SwitchBotCurtainModel: SimulatedCurtain {
    public struct Options: Sendable, Hashable {
        /// Curtain 1/2 (`c`) or Curtain 3 (`{`) advertisements.
        public var model: SwitchBotCurtainAdvertisement.Model = .curtain3
        /// The password set in the app, if any: requests must then carry its CRC-32.
        public var password: String?
        public var calibrated = true
        public var battery = 87
        /// Light level 1–10.
        public var lightLevel = 3
        /// Firmware version ×10, as byte 2 of the basic-info reply.
        public var firmware: UInt8 = 0x2A

        public init(model: SwitchBotCurtainAdvertisement.Model = .curtain3, password: String? = nil,
                    calibrated: Bool = true, battery: Int = 87, lightLevel: Int = 3) {
            self.model = model
            self.password = password
            self.calibrated = calibrated
            self.battery = battery
            self.lightLevel = lightLevel
        }
    }

    public var motor: CurtainMotorModel
    public var options: Options
    let address: [UInt8]
    public let profile = CurtainProfile.switchbot
    public let writeFlags = ["write-without-response", "write"]
    public let notifyFlags = ["notify"]

    public init(motor: CurtainMotorModel, address: String, options: Options = Options()) {
        self.motor = motor
        self.options = options
        self.address = address.split(separator: ":").compactMap { UInt8($0, radix: 16) }
    }

    public var status: CurtainStatus { motor.status }
    public var schedule: CurtainSchedule { .disabled }
    public var secondsOfDay: Double { motor.secondsOfDay }
    public var readValue: [UInt8]? { nil }

    var wirePosition: Int { 100 - motor.position }

    public var advertisement: CurtainAdvertisementData {
        let ad = SwitchBotCurtainAdvertisement(model: options.model, address: address, calibrated: options.calibrated,
                                               battery: options.battery, wirePosition: wirePosition,
                                               moving: motor.motion != .idle, lightLevel: options.lightLevel)
        return CurtainAdvertisementData(serviceData: [SwitchBotCurtainCodec.serviceDataUUID: ad.serviceData],
                                        manufacturerData: [SwitchBotCurtainCodec.companyID: ad.manufacturerData])
    }

    // MARK: Requests

    public mutating func write(_ bytes: [UInt8], withResponse: Bool) -> SimulatedWriteOutcome {
        .accepted([reply(to: bytes)])
    }

    /// The one-notification answer to a request (motion it starts shows in advertisements).
    mutating func reply(to bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 2, bytes[0] == 0x57 else { return [SwitchBotReplyStatus.notSupported.byte] }
        var payload = Array(bytes.dropFirst(2))
        let command = bytes[1] & 0x0F
        let encrypted = bytes[1] & 0xF0 == 0x10
        if let password = options.password {
            guard encrypted else { return [SwitchBotReplyStatus.passwordRequired.byte] }
            let crc = SwitchBotCurtainCodec.crc32(Array(password.utf8))
            let expected = [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            guard Array(payload.prefix(4)) == expected else { return [SwitchBotReplyStatus.wrongPassword.byte] }
            payload.removeFirst(4)
        } else if encrypted {
            payload.removeFirst(min(4, payload.count))
        }
        switch (command, payload.first, payload.dropFirst().first) {
        case (0x02, _, _):
            return basicInfo
        case (0x0F, 0x45, 0x01):
            return curtainAction(Array(payload.dropFirst(2)))
        default:
            return [SwitchBotReplyStatus.notSupported.byte]
        }
    }

    /// `0x45 0x01` then `05 SS PP` / `01 01 PP` (move to wire PP) or `00 FF` / `00 01` (stop) — the unified and the
    /// older single-device forms pySwitchbot sends (`OPEN_KEYS`, `POSITION_KEYS`, `STOP_KEYS`).
    mutating func curtainAction(_ p: [UInt8]) -> [UInt8] {
        switch (p.first, p.count) {
        case (0x05, 3), (0x01, 3):
            guard p[2] <= 100 else { return [SwitchBotReplyStatus.error.byte] }
            guard options.calibrated else { return [SwitchBotReplyStatus.error.byte] }
            _ = motor.apply(.moveTo(100 - Int(p[2])))
            return [SwitchBotReplyStatus.ok.byte]
        case (0x00, 2):
            _ = motor.apply(.stop)
            return [SwitchBotReplyStatus.ok.byte]
        default:
            return [SwitchBotReplyStatus.notSupported.byte]
        }
    }

    /// `01 BAT FW CHAIN STATE1 STATE2 POS TIMERS` (curtain.md, "0x02 Get the basic information").
    var basicInfo: [UInt8] {
        let motion: UInt8 = switch motor.motion {
        case .idle: 0
        case .opening: 1
        case .closing: 2
        }
        let state2 = (options.calibrated ? 0x04 : 0) | motion
        return [SwitchBotReplyStatus.ok.byte, UInt8(clamping: options.battery), options.firmware, 0x01, 0x00, state2,
                UInt8(clamping: wirePosition), 0x00]
    }

    public func subscribeNotifications() -> [[UInt8]] { [] }

    // MARK: Time and local inputs: nothing is notified, advertisements change.

    public mutating func advance(by seconds: Double) -> [[UInt8]] {
        _ = motor.advance(by: seconds)
        return []
    }

    /// The touch-and-go pull (and its stop).
    public mutating func press(_ button: CurtainMotorModel.SwitchPress) -> [[UInt8]] {
        _ = motor.press(button)
        return []
    }

    public mutating func setScheduleLocally(_ schedule: CurtainSchedule) -> [[UInt8]] { [] }
    /// Heard in the next advertisement and status reply.
    public mutating func setBattery(_ percent: Int) -> [[UInt8]] {
        options.battery = percent
        return []
    }
    public mutating func linkDropped() {}
}
