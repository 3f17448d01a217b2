/// The A-OK AM43 blinds motor wire format (also sold as Zemismart; the "Blind Engine" app).
///
/// Sources: ESPHome `esphome/components/am43/am43_base.{h,cpp}` (`Am43Encoder`, `Am43Decoder`) and
/// `cover/am43_cover.cpp`; buxtronix/am43 `src/AM43Client.{h,cpp}`. One characteristic (0xFE51 in service 0xFE50)
/// carries requests and notifications. A request is `00 FF 00 00 9A CMD LEN DATA… CHK`, CHK being the XOR of the
/// bytes from `9A` on (ESPHome XORs all bytes and then `FF`, which is the same). A notification is
/// `9A CMD LEN DATA… CHK`. The wire position is 0 = open, 100 = closed.
public struct AM43Codec: CurtainWireCodec, Hashable {
    /// The service (16-bit 0xFE50).
    public static let service = "0000fe50-0000-1000-8000-00805f9b34fb"
    /// The one characteristic, written and notified (16-bit 0xFE51).
    public static let characteristic = "0000fe51-0000-1000-8000-00805f9b34fb"
    /// The PIN a new motor has (buxtronix `AM43_DEFAULT_PIN`).
    public static let defaultPIN: UInt16 = 8888

    /// Command bytes (ESPHome `am43_base.h`, buxtronix `AM43Client.h`).
    public enum Command {
        public static let setState: UInt8 = 0x0A
        public static let setPosition: UInt8 = 0x0D
        public static let login: UInt8 = 0x17
        public static let notifyPosition: UInt8 = 0xA1
        public static let battery: UInt8 = 0xA2
        public static let position: UInt8 = 0xA7
        public static let unknownReply1: UInt8 = 0xA8
        public static let unknownReply2: UInt8 = 0xA9
        public static let light: UInt8 = 0xAA
    }

    /// Data bytes of `0A` (set state).
    public enum State {
        public static let open: UInt8 = 0xDD
        public static let close: UInt8 = 0xEE
        public static let stop: UInt8 = 0xCC
    }

    public static let ack: UInt8 = 0x5A
    public static let nack: UInt8 = 0xA5
    static let header: [UInt8] = [0x00, 0xFF, 0x00, 0x00]
    static let start: UInt8 = 0x9A

    public init() {}

    // MARK: Requests

    public func frames(for request: CurtainWireRequest) throws(CurtainCommandError) -> [[UInt8]] {
        switch request {
        case .command(let command):
            try command.validate()
            switch command {
            case .open: return [Self.request(Command.setState, [State.open])]
            case .close: return [Self.request(Command.setState, [State.close])]
            case .stop: return [Self.request(Command.setState, [State.stop])]
            case .moveTo(let p):
                return [Self.request(Command.setPosition, [CurtainPositionMapping.wire(fromAPI: p, inverted: true)])]
            case .sync:
                return [Command.position, Command.battery, Command.light].map { Self.request($0, [0x01]) }
            case .setSchedule: return []  // the daemon keeps the schedule (profile `am43`, keepsSchedule false)
            }
        case .login(let pin):
            return [Self.request(Command.login, [UInt8(pin >> 8), UInt8(pin & 0xFF)])]
        case .query(.status): return [Self.request(Command.position, [0x01])]
        case .query(.battery): return [Self.request(Command.battery, [0x01])]
        case .query(.light): return [Self.request(Command.light, [0x01])]
        }
    }

    /// `00 FF 00 00 9A CMD LEN DATA… CHK`.
    public static func request(_ command: UInt8, _ data: [UInt8]) -> [UInt8] {
        let body = [start, command, UInt8(data.count)] + data
        return header + body + [xor(body)]
    }

    /// `9A CMD LEN DATA… CHK` (what the motor notifies).
    public static func notification(_ command: UInt8, _ data: [UInt8]) -> [UInt8] {
        let body = [start, command, UInt8(data.count)] + data
        return body + [xor(body)]
    }

    static func xor(_ bytes: [UInt8]) -> UInt8 { bytes.reduce(0, ^) }

    /// Decodes a request as the motor does (for the simulator): command and data, checksum verified.
    public static func decodeRequest(_ bytes: [UInt8]) throws(CurtainDecodeError) -> (command: UInt8, data: [UInt8]) {
        guard bytes.count >= 8, Array(bytes.prefix(4)) == header, bytes[4] == start else {
            throw .badLength(opcode: bytes.count > 5 ? bytes[5] : 0, expected: 8, actual: bytes.count)
        }
        let command = bytes[5], length = Int(bytes[6])
        guard bytes.count == 8 + length else { throw .badLength(opcode: command, expected: 8 + length, actual: bytes.count) }
        let checksum = bytes[bytes.count - 1]
        guard xor(Array(bytes[4..<(bytes.count - 1)])) == checksum else {
            throw .outOfRange(opcode: command, field: "checksum", value: checksum)
        }
        return (command, Array(bytes[7..<(7 + length)]))
    }

    // MARK: Notifications

    public func decode(notification b: [UInt8], replyingTo request: CurtainWireRequest?) throws(CurtainDecodeError)
        -> [CurtainDeviceEvent] {
        guard b.count >= 4, b[0] == Self.start else {
            throw .badLength(opcode: b.count > 1 ? b[1] : 0, expected: 4, actual: b.count)
        }
        let command = b[1]
        guard Self.xor(b) == 0 else { throw .outOfRange(opcode: command, field: "checksum", value: b[b.count - 1]) }
        func need(_ n: Int) throws(CurtainDecodeError) {
            guard b.count >= n else { throw .badLength(opcode: command, expected: n, actual: b.count) }
        }
        func position(_ byte: UInt8) throws(CurtainDecodeError) -> CurtainDeviceEvent {
            guard byte <= 100 else { throw .outOfRange(opcode: command, field: "position", value: byte) }
            return .position(CurtainPositionMapping.api(fromWire: byte, inverted: true))
        }
        switch command {
        case Command.setState, Command.setPosition:
            return [b[3] == Self.ack ? .accepted : .refused(.am43Refused(command: command))]
        case Command.login:
            return [b[3] == Self.ack ? .loggedIn : .refused(.am43WrongPin)]
        case Command.battery:
            try need(8)
            return [.battery(min(Int(b[7]), 100))]
        case Command.position:
            try need(6)
            return [try position(b[5])]
        case Command.notifyPosition:
            try need(5)
            return [try position(b[4])]
        case Command.light:
            try need(5)
            return [.light(min(Int(b[4]), 9) * 100 / 9)]  // 0–9 (ESPHome `light_level_ = 100 * data[4] / 9`)
        case Command.unknownReply1, Command.unknownReply2:
            return []
        default:
            throw .unknownOpcode(command)
        }
    }

    /// The AM43 advertises nothing we read: its state comes from notifications.
    public func decode(advertisement: CurtainAdvertisementData) -> [CurtainDeviceEvent] { [] }
}
