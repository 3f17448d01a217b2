/// What a client asks of a curtain, whatever its wire format.
public enum CurtainWireRequest: Sendable, Hashable, CustomStringConvertible {
    /// Move, stop, schedule or resynchronise (``CurtainCommand``; positions in our API: 0 = closed, 100 = open).
    case command(CurtainCommand)
    /// Log in with a PIN (AM43; ignored by devices without a login).
    case login(pin: UInt16)
    /// Ask the device for something it reports.
    case query(CurtainQuery)

    public var description: String {
        switch self {
        case .command(let c): "\(c)"
        case .login: "LOGIN"
        case .query(let q): "QUERY \(q)"
        }
    }
}

/// Values a client can ask a curtain for.
public enum CurtainQuery: String, Sendable, Hashable, CaseIterable {
    /// Position and motion.
    case status
    /// Battery level.
    case battery
    /// Light level (built-in or solar light sensor).
    case light
}

/// One thing a curtain told us, in our API's terms (positions are 0 = closed, 100 = open, whatever the wire uses).
public enum CurtainDeviceEvent: Sendable, Hashable, CustomStringConvertible {
    /// A complete status (the `roombridge` controller's STATUS frame).
    case status(CurtainStatus)
    /// The current position.
    case position(Int)
    /// The motion, when the device says which way it moves.
    case motion(CurtainMotion)
    /// Whether it moves, when the device does not say which way (SwitchBot advertisements).
    case moving(Bool)
    /// The schedule stored on the device.
    case schedule(CurtainSchedule)
    /// Battery, percent.
    case battery(Int)
    /// Light level, percent of the sensor's range.
    case light(Int)
    /// Whether the device knows its end positions.
    case calibrated(Bool)
    /// The device accepted the request the reply belongs to.
    case accepted
    /// The device refused the request the reply belongs to.
    case refused(CurtainDeviceError)
    /// The device accepted the PIN.
    case loggedIn

    public var description: String {
        switch self {
        case .status(let s): "status \(s)"
        case .position(let p): "position \(p)%"
        case .motion(let m): "motion \(m)"
        case .moving(let m): m ? "moving" : "still"
        case .schedule(let s): "schedule \(s)"
        case .battery(let b): "battery \(b)%"
        case .light(let l): "light \(l)%"
        case .calibrated(let c): c ? "calibrated" : "not calibrated"
        case .accepted: "accepted"
        case .refused(let e): "refused: \(e)"
        case .loggedIn: "logged in"
        }
    }
}

/// Advertising data of one device as BlueZ reports it (`Device1.ServiceData`, `Device1.ManufacturerData`).
public struct CurtainAdvertisementData: Sendable, Hashable {
    /// Service data by lower-case 128-bit UUID.
    public var serviceData: [String: [UInt8]]
    /// Manufacturer data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]]

    public init(serviceData: [String: [UInt8]] = [:], manufacturerData: [UInt16: [UInt8]] = [:]) {
        self.serviceData = Dictionary(serviceData.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.manufacturerData = manufacturerData
    }
}

/// The wire format of one kind of curtain: pure encoding and decoding, no I/O and no state.
public protocol CurtainWireCodec: Sendable {
    /// The values to write, in order, for `request` (an empty list: nothing to write for this device).
    func frames(for request: CurtainWireRequest) throws(CurtainCommandError) -> [[UInt8]]

    /// Decodes one notification. `request` is the request whose reply is awaited, for devices whose replies
    /// do not say what they answer (SwitchBot); it is ignored by self-describing formats.
    func decode(notification: [UInt8], replyingTo request: CurtainWireRequest?) throws(CurtainDecodeError)
        -> [CurtainDeviceEvent]

    /// Decodes what a device advertises; empty when it advertises nothing we understand.
    func decode(advertisement: CurtainAdvertisementData) -> [CurtainDeviceEvent]
}

/// Wire positions of devices whose 0 means open (SwitchBot, AM43) against our API's 0 = closed.
public enum CurtainPositionMapping {
    /// Our position (0 = closed, 100 = open) as the device's, clamped to 0–100.
    public static func wire(fromAPI position: Int, inverted: Bool) -> UInt8 {
        let p = min(max(position, 0), 100)
        return UInt8(inverted ? 100 - p : p)
    }

    /// The device's position as ours, clamped to 0–100.
    public static func api(fromWire position: UInt8, inverted: Bool) -> Int {
        let p = min(Int(position), 100)
        return inverted ? 100 - p : p
    }
}

/// Two-digit upper-case hex of bytes, for messages and logs.
public func curtainHex(_ bytes: [UInt8]) -> String {
    bytes.map { b in
        let s = String(b, radix: 16, uppercase: true)
        return s.count < 2 ? "0" + s : s
    }.joined(separator: " ")
}
