/// A frame notified by the controller on the status characteristic.
public enum CurtainFrame: Sendable, Hashable, CustomStringConvertible {
    /// `81 ST PP TT FL`.
    case status(CurtainStatus)
    /// `82 FF OH OM CH CM`.
    case schedule(CurtainSchedule)
    /// `83 OP EC`: a bad write-without-response command.
    case error(opcode: UInt8, code: CurtainErrorCode)

    /// Opcode bytes.
    public enum Opcode {
        public static let status: UInt8 = 0x81
        public static let schedule: UInt8 = 0x82
        public static let error: UInt8 = 0x83
    }

    /// Decodes a notification or read value; refuses bad length, unknown opcode and out-of-range fields.
    public static func decode(_ bytes: [UInt8]) throws(CurtainDecodeError) -> CurtainFrame {
        guard let op = bytes.first else { throw .badLength(opcode: 0, expected: 1, actual: 0) }
        let expected: Int
        switch op {
        case Opcode.status: expected = 5
        case Opcode.schedule: expected = 6
        case Opcode.error: expected = 3
        default: throw .unknownOpcode(op)
        }
        guard bytes.count == expected else { throw .badLength(opcode: op, expected: expected, actual: bytes.count) }
        switch op {
        case Opcode.status:
            guard let motion = CurtainMotion(rawValue: bytes[1]) else {
                throw .outOfRange(opcode: op, field: "motion", value: bytes[1])
            }
            guard bytes[2] <= 100 else { throw .outOfRange(opcode: op, field: "position", value: bytes[2]) }
            guard bytes[3] <= 100 else { throw .outOfRange(opcode: op, field: "target", value: bytes[3]) }
            guard bytes[4] & ~0x03 == 0 else { throw .outOfRange(opcode: op, field: "flags", value: bytes[4]) }
            return .status(CurtainStatus(motion: motion, position: Int(bytes[2]), target: Int(bytes[3]),
                                         manual: bytes[4] & 1 != 0, scheduled: bytes[4] & 2 != 0))
        case Opcode.schedule:
            return .schedule(try decodeSchedule(opcode: op, Array(bytes[1...])))
        default:
            guard let code = CurtainErrorCode(rawValue: bytes[2]) else {
                throw .outOfRange(opcode: op, field: "error code", value: bytes[2])
            }
            return .error(opcode: bytes[1], code: code)
        }
    }

    /// The frame's bytes.
    public var bytes: [UInt8] {
        switch self {
        case .status(let s):
            [Opcode.status, s.motion.rawValue, UInt8(clamping: s.position), UInt8(clamping: s.target), s.flags]
        case .schedule(let s):
            [Opcode.schedule] + s.payload
        case .error(let op, let code):
            [Opcode.error, op, code.rawValue]
        }
    }

    public var description: String {
        switch self {
        case .status(let s): "STATUS \(s)"
        case .schedule(let s): "SCHEDULE \(s)"
        case .error(let op, let code): "ERROR op \(hex(op)): \(code)"
        }
    }
}

/// EC byte of an ERROR frame.
public enum CurtainErrorCode: UInt8, Sendable, Hashable, CustomStringConvertible {
    case unknownOpcode = 0x01
    case badLength = 0x02
    case outOfRange = 0x03
    case rejected = 0x04

    public var description: String {
        switch self {
        case .unknownOpcode: "unknown opcode"
        case .badLength: "bad length"
        case .outOfRange: "out of range"
        case .rejected: "rejected"
        }
    }
}

func hex(_ b: UInt8) -> String {
    let s = String(b, radix: 16)
    return "0x" + (s.count < 2 ? "0" : "") + s
}
