/// What the motor is doing (STATUS byte ST).
public enum CurtainMotion: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case idle = 0
    case opening = 1
    case closing = 2

    public var description: String {
        switch self {
        case .idle: "idle"
        case .opening: "opening"
        case .closing: "closing"
        }
    }
}

/// On the Varlink wire and in JSON: `"idle"`, `"opening"`, `"closing"` (not the STATUS byte).
extension CurtainMotion: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let motion = Self.allCases.first(where: { $0.description == text }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected idle, opening or closing, got \(text)"))
        }
        self = motion
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// One STATUS frame (`81 ST PP TT FL`).
public struct CurtainStatus: Sendable, Hashable, CustomStringConvertible {
    /// Motor state.
    public var motion: CurtainMotion
    /// Current position, percent open (0 = closed, 100 = open).
    public var position: Int
    /// Target position, percent open.
    public var target: Int
    /// FL bit0: the latest motion was started by the wall switch.
    public var manual: Bool
    /// FL bit1: the latest motion was started by the controller's own schedule.
    public var scheduled: Bool

    public init(motion: CurtainMotion, position: Int, target: Int, manual: Bool = false, scheduled: Bool = false) {
        self.motion = motion
        self.position = position
        self.target = target
        self.manual = manual
        self.scheduled = scheduled
    }

    /// True while a wall-switch motion is in progress: remote OPEN/CLOSE/STOP/MOVE_TO are refused.
    public var isManualMotionActive: Bool { motion != .idle && manual }

    /// The FL byte.
    public var flags: UInt8 { (manual ? 0x01 : 0) | (scheduled ? 0x02 : 0) }

    public var description: String {
        var s = "\(motion) at \(position)% → \(target)%"
        if manual { s += " [manual]" }
        if scheduled { s += " [schedule]" }
        return s
    }
}

/// The controller's schedule (SET_SCHEDULE / SCHEDULE layout `FF OH OM CH CM`).
public struct CurtainSchedule: Sendable, Hashable, CustomStringConvertible {
    /// When the curtain opens on its own.
    public var openTime: CurtainTime
    /// FF bit0.
    public var openEnabled: Bool
    /// When the curtain closes on its own.
    public var closeTime: CurtainTime
    /// FF bit1.
    public var closeEnabled: Bool

    public init(openTime: CurtainTime, openEnabled: Bool, closeTime: CurtainTime, closeEnabled: Bool) {
        self.openTime = openTime
        self.openEnabled = openEnabled
        self.closeTime = closeTime
        self.closeEnabled = closeEnabled
    }

    /// Both times disabled at 00:00 (what a cleared controller reports).
    public static let disabled = CurtainSchedule(openTime: .midnight, openEnabled: false,
                                                 closeTime: .midnight, closeEnabled: false)

    /// The FF byte.
    public var flags: UInt8 { (openEnabled ? 0x01 : 0) | (closeEnabled ? 0x02 : 0) }

    /// The five payload bytes `FF OH OM CH CM`.
    public var payload: [UInt8] {
        [flags, UInt8(openTime.hour), UInt8(openTime.minute), UInt8(closeTime.hour), UInt8(closeTime.minute)]
    }

    public var description: String {
        "open \(openTime)\(openEnabled ? "" : " (off)"), close \(closeTime)\(closeEnabled ? "" : " (off)")"
    }

    /// One half of a schedule: a time and whether it is on (how the state and the Varlink interface show it).
    public struct Entry: Sendable, Hashable, Codable {
        public var time: CurtainTime
        public var enabled: Bool

        public init(time: CurtainTime, enabled: Bool) {
            self.time = time
            self.enabled = enabled
        }
    }

    /// The open time and its flag.
    public var open: Entry { Entry(time: openTime, enabled: openEnabled) }
    /// The close time and its flag.
    public var close: Entry { Entry(time: closeTime, enabled: closeEnabled) }
}

/// Advertised service data for the curtain service: `PP ST FL BB`.
public struct CurtainAdvertisement: Sendable, Hashable {
    public var position: Int
    public var motion: CurtainMotion
    public var manual: Bool
    public var scheduled: Bool
    /// Battery, percent.
    public var battery: Int

    public init(position: Int, motion: CurtainMotion, manual: Bool, scheduled: Bool, battery: Int) {
        self.position = position
        self.motion = motion
        self.manual = manual
        self.scheduled = scheduled
        self.battery = battery
    }

    /// The four service-data bytes.
    public var bytes: [UInt8] {
        [UInt8(clamping: position), motion.rawValue, (manual ? 1 : 0) | (scheduled ? 2 : 0), UInt8(clamping: battery)]
    }

    /// Decodes service data; `nil` when it is not 4 valid bytes (service data is optional and advisory).
    public init?(serviceData: [UInt8]) {
        guard serviceData.count == 4, serviceData[0] <= 100, let motion = CurtainMotion(rawValue: serviceData[1]),
              serviceData[2] & ~0x03 == 0, serviceData[3] <= 100 else { return nil }
        self.init(position: Int(serviceData[0]), motion: motion, manual: serviceData[2] & 1 != 0,
                  scheduled: serviceData[2] & 2 != 0, battery: Int(serviceData[3]))
    }
}
