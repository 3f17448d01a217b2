import CurtainProtocol

/// An A-OK AM43 blinds motor's firmware as the simulator plays it.
///
/// Frames follow ESPHome `esphome/components/am43` (`Am43Encoder`, `Am43Decoder`) and buxtronix/am43
/// (`AM43Client.cpp`): requests `00 FF 00 00 9A CMD LEN DATA CHK` on 0xFE51, answers `9A CMD LEN DATA CHK` notified on
/// the same characteristic. `0A`/`0D`/`17` are answered ACK (`5A`) or NACK (`A5`) at byte 3; `A2` with the battery at
/// byte 7; `A7` with the position at byte 5; `AA` with the light level (0–9) at byte 4; `A1` pushes the position
/// (byte 4). The wire position is 0 = open.
///
/// Simplifications: motor commands and queries before a correct PIN are answered NACK (ESPHome logs "Bad pin?" for
/// such a NACK); the login is forgotten when the link drops (ESPHome and buxtronix log in again on every
/// connection); `A1` is pushed every status interval while the motor runs and when it stops (real motors push it at
/// least when a motion ends: "Finished moving" in python-zemismart-roller-shade).
public struct AM43CurtainModel: SimulatedCurtain {
    public struct Options: Sendable, Hashable {
        public var pin: UInt16 = AM43Codec.defaultPIN
        public var battery = 76
        /// Light level 0–9.
        public var lightLevel = 4

        public init(pin: UInt16 = AM43Codec.defaultPIN, battery: Int = 76, lightLevel: Int = 4) {
            self.pin = pin
            self.battery = battery
            self.lightLevel = lightLevel
        }
    }

    public var motor: CurtainMotorModel
    public var options: Options
    public private(set) var loggedIn = false
    public let profile = CurtainProfile.am43
    public let writeFlags = ["read", "write-without-response", "write", "notify"]
    public let notifyFlags = ["read", "write-without-response", "write", "notify"]

    public init(motor: CurtainMotorModel, options: Options = Options()) {
        self.motor = motor
        self.options = options
    }

    public var status: CurtainStatus { motor.status }
    public var schedule: CurtainSchedule { .disabled }
    public var secondsOfDay: Double { motor.secondsOfDay }
    public var readValue: [UInt8]? { positionPush }
    public var advertisement: CurtainAdvertisementData { CurtainAdvertisementData() }

    var wirePosition: UInt8 { UInt8(clamping: 100 - motor.position) }
    var positionPush: [UInt8] { AM43Codec.notification(AM43Codec.Command.notifyPosition, [0x00, wirePosition]) }

    public mutating func write(_ bytes: [UInt8], withResponse: Bool) -> SimulatedWriteOutcome {
        let request: (command: UInt8, data: [UInt8])
        do throws(CurtainDecodeError) {
            request = try AM43Codec.decodeRequest(bytes)
        } catch {
            // A frame that does not parse (length, header or checksum) is ignored, as the motor does.
            return .accepted([])
        }
        return .accepted(answer(request.command, request.data))
    }

    mutating func answer(_ command: UInt8, _ data: [UInt8]) -> [[UInt8]] {
        typealias C = AM43Codec.Command
        func ack(_ ok: Bool) -> [[UInt8]] { [AM43Codec.notification(command, [ok ? AM43Codec.ack : AM43Codec.nack])] }
        if command == C.login {
            loggedIn = data.count == 2 && UInt16(data[0]) << 8 | UInt16(data[1]) == options.pin
            return ack(loggedIn)
        }
        guard loggedIn else { return ack(false) }
        switch (command, data.first) {
        case (C.setState, AM43Codec.State.open?): return ack(true) + motion(.open)
        case (C.setState, AM43Codec.State.close?): return ack(true) + motion(.close)
        case (C.setState, AM43Codec.State.stop?): return ack(true) + motion(.stop)
        case (C.setPosition, let p?) where p <= 100: return ack(true) + motion(.moveTo(100 - Int(p)))
        case (C.setState, _), (C.setPosition, _): return ack(false)
        case (C.battery, _):
            return [AM43Codec.notification(C.battery, [0x00, 0x00, 0x00, 0x00, UInt8(clamping: options.battery)])]
        case (C.position, _):
            // Flags, speed, position, length (2), diameter, type — the layout of a quoted reply
            // (`9a a7 07 0f 32 4e 00 00 00 30 79`).
            return [AM43Codec.notification(C.position, [0x0F, 0x32, wirePosition, 0x00, 0x00, 0x00, 0x30])]
        case (C.light, _):
            return [AM43Codec.notification(C.light, [0x00, UInt8(clamping: min(max(options.lightLevel, 0), 9))])]
        default:
            return ack(false)
        }
    }

    /// Starts or stops the motor; a stop (or an immediate arrival) pushes the position at once.
    mutating func motion(_ command: CurtainCommand) -> [[UInt8]] {
        let frames = motor.apply(command)  // first: `pushes` must see the position after the change
        return pushes(for: frames)
    }

    /// An `A1` push when the motor model reports (periodically while moving, and when it stops).
    func pushes(for frames: [CurtainMotorModel.TimedFrame]) -> [[UInt8]] {
        frames.isEmpty ? [] : [positionPush]
    }

    public func subscribeNotifications() -> [[UInt8]] { [] }

    public mutating func advance(by seconds: Double) -> [[UInt8]] {
        var out: [[UInt8]] = []
        // Step so that every STATUS the motor produces becomes a push carrying the position of that moment.
        var left = seconds
        while left > 0 {
            let step = min(left, max(motor.statusInterval, 0.01))
            let frames = motor.advance(by: step)
            out += pushes(for: frames)
            left -= step
        }
        return out
    }

    /// The motor's own remote or button.
    public mutating func press(_ button: CurtainMotorModel.SwitchPress) -> [[UInt8]] {
        let frames = motor.press(button)
        return pushes(for: frames)
    }

    public mutating func setScheduleLocally(_ schedule: CurtainSchedule) -> [[UInt8]] { [] }

    /// Heard in the next advertisement and status reply.
    public mutating func setBattery(_ percent: Int) -> [[UInt8]] {
        options.battery = percent
        return []
    }
    public mutating func linkDropped() { loggedIn = false }
}
