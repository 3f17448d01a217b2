// Errors of the curtain wire codecs: a command refused before anything is written, bytes that do not decode,
// and the ATT error codes of the GATT write. What the user is told is ``CurtainError`` (CurtainError.swift).

/// A command refused by the client before anything is written.
public enum CurtainCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    case positionOutOfRange(Int)
    case hourOutOfRange(Int)
    case minuteOutOfRange(Int)
    case badTimeFormat(String)

    public var description: String {
        switch self {
        case .positionOutOfRange(let p): "position \(p) is out of range: use 0 (closed) to 100 (open)"
        case .hourOutOfRange(let h): "hour \(h) is out of range: use 0 to 23"
        case .minuteOutOfRange(let m): "minute \(m) is out of range: use 0 to 59"
        case .badTimeFormat(let t): "\"\(t)\" is not a time: use HH:MM (24-hour), e.g. 07:30"
        }
    }
}

/// Bytes that do not follow the curtain profile (frames on the client side, commands on the controller side).
public enum CurtainDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownOpcode(UInt8)
    case badLength(opcode: UInt8, expected: Int, actual: Int)
    case outOfRange(opcode: UInt8, field: String, value: UInt8)

    /// The EC byte a controller sends in an ERROR frame for this problem.
    public var errorCode: CurtainErrorCode {
        switch self {
        case .unknownOpcode: .unknownOpcode
        case .badLength: .badLength
        case .outOfRange: .outOfRange
        }
    }

    /// The ATT error a controller returns to a write request for this problem.
    public var attError: UInt8 {
        switch self {
        case .unknownOpcode: ATTError.curtainUnknownOpcode
        case .badLength: ATTError.invalidAttributeValueLength
        case .outOfRange: ATTError.valueNotAllowed
        }
    }

    /// The opcode the problem is about (0 for an empty value).
    public var opcode: UInt8 {
        switch self {
        case .unknownOpcode(let op): op
        case .badLength(let op, _, _): op
        case .outOfRange(let op, _, _): op
        }
    }

    public var description: String {
        switch self {
        case .unknownOpcode(let op): "unknown opcode \(hex(op))"
        case .badLength(let op, let e, let a): "opcode \(hex(op)) needs \(e) bytes, got \(a)"
        case .outOfRange(let op, let f, let v): "opcode \(hex(op)): \(f) \(v) is out of range"
        }
    }
}

/// ATT error codes used by the profile (Core spec Vol 3 Part F 3.4.1.1).
public enum ATTError {
    /// 0x0D Invalid Attribute Value Length.
    public static let invalidAttributeValueLength: UInt8 = 0x0D
    /// 0x13 Value Not Allowed.
    public static let valueNotAllowed: UInt8 = 0x13
    /// 0x80 first application error: the profile's "unknown opcode".
    public static let curtainUnknownOpcode: UInt8 = 0x80
}
