import CurtainProtocol

/// The firmware of a simulated curtain behind ``BlueZSimulator``'s GATT objects and advertisements: pure,
/// deterministic logic driven by writes, a clock and local inputs. Each method returns the notification values
/// the device sends, in order.
public protocol SimulatedCurtain: Sendable {
    /// The profile whose service and characteristics the simulator exports.
    var profile: CurtainProfile { get }
    /// `GattCharacteristic1.Flags` of the write characteristic.
    var writeFlags: [String] { get }
    /// `GattCharacteristic1.Flags` of the notify characteristic (merged with ``writeFlags`` when they are one).
    var notifyFlags: [String] { get }
    /// The state in our API's orientation (0 = closed), for tests and the status line.
    var status: CurtainStatus { get }
    /// The schedule the device acts on (`.disabled` for devices that keep none).
    var schedule: CurtainSchedule { get }
    /// The device's time of day, seconds since midnight.
    var secondsOfDay: Double { get }
    /// What it advertises now.
    var advertisement: CurtainAdvertisementData { get }
    /// What a read of the notify characteristic returns; nil when it cannot be read.
    var readValue: [UInt8]? { get }

    /// Bytes written to the write characteristic (`withResponse`: write request rather than command).
    mutating func write(_ bytes: [UInt8], withResponse: Bool) -> SimulatedWriteOutcome
    /// Notifications sent right after a client subscribes.
    func subscribeNotifications() -> [[UInt8]]
    /// Lets simulated time pass.
    mutating func advance(by seconds: Double) -> [[UInt8]]
    /// A local input: the wall switch, the touch-and-go pull, the motor's own remote.
    mutating func press(_ button: CurtainMotorModel.SwitchPress) -> [[UInt8]]
    /// The schedule changed on the device itself.
    mutating func setScheduleLocally(_ schedule: CurtainSchedule) -> [[UInt8]]
    /// The link went down (a device may forget a login).
    mutating func linkDropped()
    /// The battery is now at `percent` (devices without one ignore it); the frames it sends, if any.
    mutating func setBattery(_ percent: Int) -> [[UInt8]]
}

extension SimulatedCurtain {
    /// A mains-powered device: no battery.
    public mutating func setBattery(_ percent: Int) -> [[UInt8]] { [] }
}

/// The outcome of a write.
public enum SimulatedWriteOutcome: Sendable, Hashable {
    /// Accepted; these notifications follow.
    case accepted([[UInt8]])
    /// A write request refused with this ATT error code.
    case attError(UInt8)
    /// Refused without an ATT error; these notifications tell the client.
    case refused([[UInt8]])
}

/// Which device model ``BlueZSimulator`` runs, by profile ID, with its options.
public enum SimulatedCurtainKind: Sendable, Hashable {
    case roombridge
    case switchbot(SwitchBotCurtainModel.Options)
    case am43(AM43CurtainModel.Options)

    /// The default options for a profile.
    public init(_ id: CurtainProfile.ID) {
        switch id {
        case .roombridge: self = .roombridge
        case .switchbot: self = .switchbot(.init())
        case .am43: self = .am43(.init())
        }
    }

    /// Builds the device with this motor state.
    func make(motor: CurtainMotorModel, address: String) -> any SimulatedCurtain {
        switch self {
        case .roombridge: RoomBridgeCurtainModel(motor: motor)
        case .switchbot(let options): SwitchBotCurtainModel(motor: motor, address: address, options: options)
        case .am43(let options): AM43CurtainModel(motor: motor, options: options)
        }
    }
}

/// Our own controller (docs/curtain-gatt.md): ``CurtainMotorModel``'s frames are the notifications.
public struct RoomBridgeCurtainModel: SimulatedCurtain {
    public var motor: CurtainMotorModel
    public let profile = CurtainProfile.roombridge
    public let writeFlags = ["write-without-response", "write"]
    public let notifyFlags = ["read", "notify"]

    public init(motor: CurtainMotorModel) { self.motor = motor }

    public var status: CurtainStatus { motor.status }
    public var schedule: CurtainSchedule { motor.schedule }
    public var secondsOfDay: Double { motor.secondsOfDay }
    public var readValue: [UInt8]? { CurtainFrame.status(motor.status).bytes }
    public var advertisement: CurtainAdvertisementData {
        CurtainAdvertisementData(serviceData: [CurtainUUID.service: motor.advertisement.bytes])
    }

    public mutating func write(_ bytes: [UInt8], withResponse: Bool) -> SimulatedWriteOutcome {
        switch motor.write(bytes, withResponse: withResponse) {
        case .accepted(let frames): .accepted(frames.map(\.frame.bytes))
        case .attError(let code): .attError(code)
        case .errorFrame(let frame): .refused([frame.frame.bytes])
        }
    }

    public func subscribeNotifications() -> [[UInt8]] { motor.subscribeFrames().map(\.frame.bytes) }
    public mutating func advance(by seconds: Double) -> [[UInt8]] { motor.advance(by: seconds).map(\.frame.bytes) }
    public mutating func press(_ button: CurtainMotorModel.SwitchPress) -> [[UInt8]] {
        motor.press(button).map(\.frame.bytes)
    }
    public mutating func setScheduleLocally(_ schedule: CurtainSchedule) -> [[UInt8]] {
        motor.setScheduleLocally(schedule).map(\.frame.bytes)
    }
    public mutating func linkDropped() {}
}
