/// The SwitchBot Curtain (1, 2 and 3) wire format.
///
/// Sources: OpenWonderLabs SwitchBotAPI-BLE `devicetypes/curtain.md` (REQ/RSP packets, 0x02 basic information,
/// 0x0F 0x45 curtain action, broadcast package) and pySwitchbot `switchbot/devices/curtain.py`, `base_cover.py`,
/// `device.py` (`_commandkey`, `_execute_command_locked`) and `adv_parsers/curtain.py` (`process_wocurtain`).
/// The wire position is 0 = open, 100 = closed.
public struct SwitchBotCurtainCodec: CurtainWireCodec, Hashable {
    /// The `SS` byte of a move: `FF` normal, `01` slow (Curtain 3 only; others ignore it).
    public enum Speed: UInt8, Sendable, Hashable {
        case normal = 0xFF
        case slow = 0x01
    }

    /// The communication service.
    public static let service = "cba20d00-224d-11e6-9fb8-0002a5d5c51b"
    /// The characteristic the client writes requests to (write without response).
    public static let tx = "cba20002-224d-11e6-9fb8-0002a5d5c51b"
    /// The characteristic the device notifies replies on.
    public static let rx = "cba20003-224d-11e6-9fb8-0002a5d5c51b"
    /// Service data UUID of SwitchBot advertisements (pySwitchbot `adv_parser.py` `SERVICE_DATA_ORDER`).
    public static let serviceDataUUID = "0000fd3d-0000-1000-8000-00805f9b34fb"
    /// Company identifier of SwitchBot's manufacturer data (Woan Technology, 0x0969 = 2409).
    public static let companyID: UInt16 = 0x0969
    /// Model characters of curtains in service data byte 0 (pySwitchbot `SUPPORTED_TYPES`: `c`/`C` Curtain,
    /// `{`/`[` Curtain 3).
    public static let curtainModels: Set<UInt8> = [0x63, 0x43, 0x7B, 0x5B]

    enum Key {
        static let magic: UInt8 = 0x57
        static let basicInfo: UInt8 = 0x02
        static let extended: UInt8 = 0x0F
        static let curtainSet: [UInt8] = [0x45, 0x01]
        static let unifiedAction: UInt8 = 0x05
        static let stopAction: UInt8 = 0x00
    }

    public var speed: Speed
    /// The password set in the SwitchBot app, if any: requests then carry its CRC-32 (pySwitchbot `_commandkey`).
    public var password: String?

    public init(speed: Speed = .normal, password: String? = nil) {
        self.speed = speed
        self.password = password.flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: Requests

    public func frames(for request: CurtainWireRequest) throws(CurtainCommandError) -> [[UInt8]] {
        switch request {
        case .command(let command):
            try command.validate()
            switch command {
            case .open: return [move(wire: 0)]
            case .close: return [move(wire: 100)]
            case .moveTo(let p): return [move(wire: CurtainPositionMapping.wire(fromAPI: p, inverted: true))]
            case .stop: return [key(Key.extended, Key.curtainSet + [Key.stopAction, 0xFF])]
            case .sync: return [key(Key.basicInfo, [])]
            case .setSchedule: return []  // the daemon keeps the schedule (profile `switchbot`, keepsSchedule false)
            }
        case .login:
            return []  // a password travels in every request instead
        case .query(.status), .query(.battery):
            return [key(Key.basicInfo, [])]
        case .query(.light):
            return []  // only advertised
        }
    }

    /// `57 0F 45 01 05 SS PP`.
    func move(wire position: UInt8) -> [UInt8] {
        key(Key.extended, Key.curtainSet + [Key.unifiedAction, speed.rawValue, position])
    }

    /// `57 0C payload`, or with a password `57 1C CRC32(password) payload` (pySwitchbot `_commandkey`).
    func key(_ command: UInt8, _ payload: [UInt8]) -> [UInt8] {
        guard let password else { return [Key.magic, command] + payload }
        let crc = Self.crc32(Array(password.utf8))
        return [Key.magic, 0x10 | command, UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF),
                UInt8(crc & 0xFF)] + payload
    }

    /// CRC-32 (IEEE 802.3, as zlib's `crc32`), which pySwitchbot uses to encode the password.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    // MARK: Replies

    public func decode(notification bytes: [UInt8], replyingTo request: CurtainWireRequest?) throws(CurtainDecodeError)
        -> [CurtainDeviceEvent] {
        guard let first = bytes.first else { throw .badLength(opcode: 0, expected: 1, actual: 0) }
        let status = SwitchBotReplyStatus(byte: first)
        guard status == .ok else { return [.refused(.switchBot(status))] }
        // Only the basic-info reply is this long: a poll's reply that crossed a command's is still read as one.
        if Self.expectsBasicInfo(request) || bytes.count >= 8 { return try Self.decodeBasicInfo(bytes) }
        // 0x45 action reply: status, then device 0's (and 1's) position (curtain.md "0x45 Curtain setting command").
        var events: [CurtainDeviceEvent] = [.accepted]
        if bytes.count >= 2, bytes[1] <= 100 {
            events.append(.position(CurtainPositionMapping.api(fromWire: bytes[1], inverted: true)))
        }
        return events
    }

    static func expectsBasicInfo(_ request: CurtainWireRequest?) -> Bool {
        switch request {
        case .command(.sync), .query(.status), .query(.battery): true
        default: false
        }
    }

    /// The 0x02 reply: `01 BAT FW CHAIN STATE1 STATE2 POS TIMERS` (curtain.md; pySwitchbot `get_basic_info`).
    static func decodeBasicInfo(_ b: [UInt8]) throws(CurtainDecodeError) -> [CurtainDeviceEvent] {
        guard b.count >= 7 else { throw .badLength(opcode: Key.basicInfo, expected: 8, actual: b.count) }
        guard b[1] <= 100 else { throw .outOfRange(opcode: Key.basicInfo, field: "battery", value: b[1]) }
        // State 2 bits 1:0: 0 still, 1 opening, 2 closing (curtain.md). pySwitchbot also counts bit 6 and the value
        // 3 as "in motion" (`_data[5] & 0b01000011`): then the direction is unknown.
        let motion: CurtainDeviceEvent
        switch (b[5] & 0x03, b[5] & 0x40 != 0) {
        case (1, _): motion = .motion(.opening)
        case (2, _): motion = .motion(.closing)
        case (0, false): motion = .motion(.idle)
        default: motion = .moving(true)
        }
        return [.accepted, .battery(Int(b[1])), .calibrated(b[5] & 0x04 != 0), motion,
                .position(CurtainPositionMapping.api(fromWire: b[6], inverted: true))]
    }

    // MARK: Advertisements

    /// Position, motion, battery, light and calibration (pySwitchbot `process_wocurtain`): device bytes come from
    /// manufacturer data 8…10 when it is long enough, else from service data 3…5; the battery from manufacturer
    /// data 12 (Curtain 3) or service data 2; calibration from service data 1 bit 6.
    public func decode(advertisement: CurtainAdvertisementData) -> [CurtainDeviceEvent] {
        let svc = advertisement.serviceData[Self.serviceDataUUID]
        let mfr = advertisement.manufacturerData[Self.companyID]
        if let svc, let model = svc.first, !Self.curtainModels.contains(model & 0x7F) { return [] }
        let device: ArraySlice<UInt8>
        let battery: UInt8?
        if let mfr, mfr.count >= 13 {
            device = mfr[8..<11]
            battery = mfr[12]
        } else if let mfr, mfr.count >= 11 {
            device = mfr[8..<11]
            battery = svc.flatMap { $0.count >= 3 ? $0[2] : nil }
        } else if let svc, svc.count >= 6 {
            device = svc[3..<6]
            battery = svc[2]
        } else {
            return []
        }
        let d0 = device[device.startIndex], d1 = device[device.startIndex + 1]
        var events: [CurtainDeviceEvent] = [
            .position(CurtainPositionMapping.api(fromWire: d0 & 0x7F, inverted: true)),
            .moving(d0 & 0x80 != 0),
        ]
        let lightLevel = Int(d1 >> 4)  // 1–10 (curtain.md "LightLevel")
        if lightLevel > 0 { events.append(.light(min(lightLevel, 10) * 10)) }
        if let battery { events.append(.battery(min(Int(battery & 0x7F), 100))) }
        if let svc, svc.count >= 2 { events.append(.calibrated(svc[1] & 0x40 != 0)) }
        return events
    }
}

/// What a SwitchBot Curtain advertises, for building advertisements (the simulator) and for tests.
public struct SwitchBotCurtainAdvertisement: Sendable, Hashable {
    public enum Model: Sendable, Hashable {
        /// Curtain 1/2: model `c`, 11 bytes of manufacturer data.
        case curtain
        /// Curtain 3: model `{`, 13 bytes of manufacturer data ending with the battery.
        case curtain3

        var character: UInt8 { self == .curtain ? 0x63 : 0x7B }
    }

    public var model: Model
    /// The device address, carried in manufacturer data bytes 0…5.
    public var address: [UInt8]
    public var calibrated: Bool
    public var battery: Int
    /// Wire position: 0 = open, 100 = closed.
    public var wirePosition: Int
    public var moving: Bool
    /// Light level 1–10 (0: no reading).
    public var lightLevel: Int
    public var chainLength: Int

    public init(model: Model, address: [UInt8], calibrated: Bool, battery: Int, wirePosition: Int, moving: Bool,
                lightLevel: Int, chainLength: Int = 1) {
        self.model = model
        self.address = address
        self.calibrated = calibrated
        self.battery = battery
        self.wirePosition = wirePosition
        self.moving = moving
        self.lightLevel = lightLevel
        self.chainLength = chainLength
    }

    var deviceBytes: [UInt8] {
        [(moving ? 0x80 : 0) | UInt8(clamping: min(max(wirePosition, 0), 100)),
         UInt8(clamping: min(max(lightLevel, 0), 15)) << 4 | UInt8(clamping: min(max(chainLength, 0), 7)),
         0x04]  // byte 10/5: undocumented; the value seen in pySwitchbot's test fixtures
    }

    /// Service data for `0000fd3d-…`: model, status (bit 7 connectable, bit 6 calibrated), battery, device bytes.
    public var serviceData: [UInt8] {
        [model.character, 0x80 | (calibrated ? 0x40 : 0), UInt8(clamping: min(max(battery, 0), 100))] + deviceBytes
    }

    /// Manufacturer data for company 0x0969: address, two bytes seen in pySwitchbot's fixtures, device bytes, and
    /// for the Curtain 3 one more byte and the battery.
    public var manufacturerData: [UInt8] {
        var bytes = Array(address.prefix(6)) + Array(repeating: 0, count: max(0, 6 - address.count))
        bytes += [0xF7, 0x07] + deviceBytes
        if model == .curtain3 { bytes += [0x00, UInt8(clamping: min(max(battery, 0), 100))] }
        return bytes
    }
}
