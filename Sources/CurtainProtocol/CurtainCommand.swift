/// A command written by the client to the command characteristic.
public enum CurtainCommand: Sendable, Hashable, CustomStringConvertible {
    /// `01`: move to 100 %.
    case open
    /// `02`: move to 0 %.
    case close
    /// `03`: stop where it is.
    case stop
    /// `04 PP`: move to a position, 0–100 %.
    case moveTo(Int)
    /// `05 FF OH OM CH CM`: replace the controller's schedule.
    case setSchedule(CurtainSchedule)
    /// `06`: the controller answers with STATUS then SCHEDULE.
    case sync

    /// Opcode bytes.
    public enum Opcode {
        public static let open: UInt8 = 0x01
        public static let close: UInt8 = 0x02
        public static let stop: UInt8 = 0x03
        public static let moveTo: UInt8 = 0x04
        public static let setSchedule: UInt8 = 0x05
        public static let sync: UInt8 = 0x06
    }

    /// The opcode byte of this command.
    public var opcode: UInt8 {
        switch self {
        case .open: Opcode.open
        case .close: Opcode.close
        case .stop: Opcode.stop
        case .moveTo: Opcode.moveTo
        case .setSchedule: Opcode.setSchedule
        case .sync: Opcode.sync
        }
    }

    /// True for commands that move (or stop) the motor: the ones manual priority refuses.
    public var drivesMotor: Bool {
        switch self {
        case .open, .close, .stop, .moveTo: true
        case .setSchedule, .sync: false
        }
    }

    /// Checks the parameters (position 0–100); times are checked when a ``CurtainTime`` is made.
    public func validate() throws(CurtainCommandError) {
        if case .moveTo(let p) = self, !(0...100).contains(p) { throw .positionOutOfRange(p) }
    }

    /// The bytes to write, after ``validate()``.
    public func encode() throws(CurtainCommandError) -> [UInt8] {
        try validate()
        switch self {
        case .open, .close, .stop, .sync: return [opcode]
        case .moveTo(let p): return [opcode, UInt8(p)]
        case .setSchedule(let s): return [opcode] + s.payload
        }
    }

    /// Fixed total length (opcode included) of the command with this opcode, or nil if unknown.
    public static func length(ofOpcode op: UInt8) -> Int? {
        switch op {
        case Opcode.open, Opcode.close, Opcode.stop, Opcode.sync: 1
        case Opcode.moveTo: 2
        case Opcode.setSchedule: 6
        default: nil
        }
    }

    /// Decodes written bytes the way a controller does (used by the simulator).
    /// Errors are checked in order: empty/unknown opcode, length, range.
    public static func decode(_ bytes: [UInt8]) throws(CurtainDecodeError) -> CurtainCommand {
        guard let op = bytes.first else { throw .badLength(opcode: 0, expected: 1, actual: 0) }
        guard let len = length(ofOpcode: op) else { throw .unknownOpcode(op) }
        guard bytes.count == len else { throw .badLength(opcode: op, expected: len, actual: bytes.count) }
        switch op {
        case Opcode.open: return .open
        case Opcode.close: return .close
        case Opcode.stop: return .stop
        case Opcode.sync: return .sync
        case Opcode.moveTo:
            guard bytes[1] <= 100 else { throw .outOfRange(opcode: op, field: "position", value: bytes[1]) }
            return .moveTo(Int(bytes[1]))
        default:
            return .setSchedule(try decodeSchedule(opcode: op, Array(bytes[1...])))
        }
    }

    public var description: String {
        switch self {
        case .open: "OPEN"
        case .close: "CLOSE"
        case .stop: "STOP"
        case .moveTo(let p): "MOVE_TO \(p)"
        case .setSchedule(let s): "SET_SCHEDULE \(s)"
        case .sync: "SYNC"
        }
    }
}

/// Decodes `FF OH OM CH CM`, shared by SET_SCHEDULE and SCHEDULE.
func decodeSchedule(opcode: UInt8, _ p: [UInt8]) throws(CurtainDecodeError) -> CurtainSchedule {
    guard p[0] & ~0x03 == 0 else { throw .outOfRange(opcode: opcode, field: "flags", value: p[0]) }
    guard p[1] <= 23 else { throw .outOfRange(opcode: opcode, field: "open hour", value: p[1]) }
    guard p[2] <= 59 else { throw .outOfRange(opcode: opcode, field: "open minute", value: p[2]) }
    guard p[3] <= 23 else { throw .outOfRange(opcode: opcode, field: "close hour", value: p[3]) }
    guard p[4] <= 59 else { throw .outOfRange(opcode: opcode, field: "close minute", value: p[4]) }
    return CurtainSchedule(openTime: CurtainTime(unchecked: Int(p[1]), Int(p[2])), openEnabled: p[0] & 1 != 0,
                           closeTime: CurtainTime(unchecked: Int(p[3]), Int(p[4])), closeEnabled: p[0] & 2 != 0)
}
