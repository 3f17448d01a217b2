// Simulated PICCs: NFC Forum Type 2 tags (NXP NTAG213/215/216, MIFARE Ultralight), plain
// ISO/IEC 14443-A badges and FeliCa cards. Behaviour follows the NXP datasheets
// (NTAG213/215/216 rev. 3.2 §9/§10, MF0ICU1 §7/§8); pure logic, no I/O.

/// What a PICC answers to one frame (CRC already checked and removed).
public enum TagReply: Equatable, Sendable {
    /// A data frame (CRC is added by the PCD side of the simulator when needed).
    case data([UInt8])
    /// A 4-bit ACK (0xA).
    case ack
    /// A 4-bit NAK (0x0 invalid argument, 0x1 CRC error, 0x4 auth, 0x5 EEPROM write error).
    case nak(UInt8)
    /// No answer: the PCD times out.
    case silent
}

/// Kind of Type 2 tag.
public enum Type2Model: String, Codable, Sendable, CaseIterable {
    case ntag213, ntag215, ntag216, ultralight

    /// Total number of 4-byte pages.
    public var pageCount: Int {
        switch self {
        case .ntag213: 45
        case .ntag215: 135
        case .ntag216: 231
        case .ultralight: 16
        }
    }
    /// NDEF data-area size announced in a factory CC (byte 2 × 8).
    public var dataAreaSize: Int {
        switch self {
        case .ntag213: 144
        case .ntag215: 496
        case .ntag216: 872
        case .ultralight: 48
        }
    }
    /// Page holding the dynamic lock bytes (NTAG only).
    var dynamicLockPage: Int? {
        switch self {
        case .ntag213: 0x28
        case .ntag215: 0x82
        case .ntag216: 0xE2
        case .ultralight: nil
        }
    }
    /// First configuration page (CFG0), NTAG only.
    var firstConfigPage: Int? { dynamicLockPage.map { $0 + 1 } }
    /// GET_VERSION storage-size byte.
    var storageSize: UInt8? {
        switch self {
        case .ntag213: 0x0F
        case .ntag215: 0x11
        case .ntag216: 0x13
        case .ultralight: nil
        }
    }
    var isNTAG: Bool { self != .ultralight }
}

/// An NFC Forum Type 2 tag with its EEPROM image.
public struct Type2Tag: Sendable {
    public let model: Type2Model
    /// Full memory image, `model.pageCount * 4` bytes (pages 0…n-1).
    public private(set) var memory: [UInt8]

    /// Creates a tag from a full memory image (shorter images are zero-padded).
    public init(model: Type2Model, memory: [UInt8]) {
        self.model = model
        var m = Array(memory.prefix(model.pageCount * 4))
        if m.count < model.pageCount * 4 { m += [UInt8](repeating: 0, count: model.pageCount * 4 - m.count) }
        self.memory = m
    }

    /// The 7-byte UID stored in pages 0–1 (bytes 0-2 and 4-7).
    public var uid: [UInt8] { Array(memory[0 ..< 3]) + Array(memory[4 ..< 8]) }

    /// Builds pages 0–2 (UID, check bytes, internal byte, static lock bytes 0) for a 7-byte UID.
    public static func header(uid: [UInt8]) -> [UInt8] {
        precondition(uid.count == 7)
        let bcc0 = 0x88 ^ uid[0] ^ uid[1] ^ uid[2]
        let bcc1 = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]
        return [uid[0], uid[1], uid[2], bcc0, uid[3], uid[4], uid[5], uid[6], bcc1, 0x48, 0x00, 0x00]
    }

    private var lastPage: Int { model.pageCount - 1 }

    private func page(_ p: Int) -> [UInt8] { Array(memory[p * 4 ..< p * 4 + 4]) }

    /// Bytes as returned by READ/FAST_READ: PWD and PACK pages read as zeros on NTAG.
    private func readable(_ p: Int) -> [UInt8] {
        if let cfg = model.firstConfigPage, p == cfg + 2 || p == cfg + 3 { return [0, 0, 0, 0] }
        return page(p)
    }

    /// Handles one command frame (without CRC).
    public mutating func handle(_ frame: [UInt8]) -> TagReply {
        guard let cmd = frame.first else { return .silent }
        switch cmd {
        case 0x30 where frame.count == 2:                 // READ: 4 pages, roll-over at the end
            let start = Int(frame[1])
            guard start <= lastPage else { return .nak(0x0) }
            var out: [UInt8] = []
            for i in 0 ..< 4 { out += readable((start + i) % model.pageCount) }
            return .data(out)
        case 0x3A where frame.count == 3 && model.isNTAG: // FAST_READ start..end
            let start = Int(frame[1]), end = Int(frame[2])
            guard start <= end, end <= lastPage else { return .nak(0x0) }
            var out: [UInt8] = []
            for p in start ... end { out += readable(p) }
            return .data(out)
        case 0x60 where frame.count == 1 && model.isNTAG: // GET_VERSION
            return .data([0x00, 0x04, 0x04, 0x02, 0x01, 0x00, model.storageSize!, 0x03])
        case 0x3C where frame.count == 2 && model.isNTAG: // READ_SIG (no real ECC signature)
            return .data([UInt8](repeating: 0, count: 32))
        case 0x39 where frame.count == 2 && model.isNTAG: // READ_CNT (counter disabled → NAK)
            return .nak(0x0)
        case 0x1B where frame.count == 5 && model.isNTAG: // PWD_AUTH: no password set → PACK 00 00
            return .data([0x00, 0x00])
        case 0xA2 where frame.count == 6:                 // WRITE one page
            return write(page: Int(frame[1]), Array(frame[2 ..< 6]))
        case 0xA0 where frame.count == 18:                // COMPATIBILITY_WRITE (both parts at once)
            return write(page: Int(frame[1]), Array(frame[2 ..< 6]))
        default:
            // Unknown command / wrong length: the tag returns to IDLE without answering
            // (MF0ICU1 §7.1; nfc-mfultralight re-selects after a failed GET_VERSION).
            return .silent
        }
    }

    /// Whether a page may be written, from the static (page 2) and dynamic lock bits.
    public func isLocked(page p: Int) -> Bool {
        let lock0 = memory[10], lock1 = memory[11]
        switch p {
        case 0, 1: return true
        case 2: return false            // lock bytes themselves: block-lock bits handled in write
        case 3: return lock0 & 0x08 != 0
        case 4 ... 7: return lock0 & (1 << UInt8(p)) != 0
        case 8 ... 15: return lock1 & (1 << UInt8(p - 8)) != 0
        default: break
        }
        guard let dyn = model.dynamicLockPage else { return true }
        if p == dyn || p >= dyn + 1 { return false }   // dynamic lock page and config pages
        let d0 = memory[dyn * 4], d1 = memory[dyn * 4 + 1]
        let bits = UInt16(d0) | UInt16(d1) << 8
        let granularity = model == .ntag213 ? 2 : 16
        let bit = (p - 16) / granularity
        return bit < 16 && bits & (1 << UInt16(bit)) != 0
    }

    private mutating func write(page p: Int, _ data: [UInt8]) -> TagReply {
        guard p >= 2, p <= lastPage else { return .nak(0x0) }
        if p == 2 {
            // Only lock bytes 2-3 are written, OR-ed; block-locking bits freeze their fields.
            let old0 = memory[10], old1 = memory[11]
            var new0 = old0 | data[2], new1 = old1 | data[3]
            if old0 & 0x01 != 0 { new0 = (new0 & ~0x08) | (old0 & 0x08) }                 // BL-CC
            if old0 & 0x02 != 0 {                                                           // BL 9-4
                new0 = (new0 & ~0xF0) | (old0 & 0xF0); new1 = (new1 & ~0x03) | (old1 & 0x03)
            }
            if old0 & 0x04 != 0 { new1 = (new1 & ~0xFC) | (old1 & 0xFC) }                 // BL 15-10
            memory[10] = new0; memory[11] = new1
            return .ack
        }
        if isLocked(page: p) { return .nak(0x0) }
        if p == 3 {                                       // OTP / CC: bits can only be set
            for i in 0 ..< 4 { memory[12 + i] |= data[i] }
            return .ack
        }
        if let dyn = model.dynamicLockPage, p == dyn {
            for i in 0 ..< 3 { memory[dyn * 4 + i] |= data[i] }
            return .ack
        }
        for i in 0 ..< 4 { memory[p * 4 + i] = data[i] }
        return .ack
    }
}

/// A FeliCa card answering polling and Request Response.
public struct FeliCaCard: Sendable, Equatable {
    public var idm: [UInt8]
    public var pmm: [UInt8]
    public var systemCode: [UInt8]

    public init(idm: [UInt8], pmm: [UInt8], systemCode: [UInt8] = [0x88, 0xB4]) {
        self.idm = idm; self.pmm = pmm; self.systemCode = systemCode
    }

    /// Response to a polling request `00 SC1 SC2 RC TSN` (without length byte): `01 IDm PMm [SC]`.
    func poll(_ request: [UInt8]) -> [UInt8]? {
        guard request.count >= 5, request[0] == 0x00 else { return nil }
        let sc = Array(request[1 ... 2])
        guard sc == [0xFF, 0xFF] || sc == systemCode
            || (sc[0] == 0xFF && sc[1] == systemCode[1]) || (sc[1] == 0xFF && sc[0] == systemCode[0]) else { return nil }
        var out: [UInt8] = [0x01] + idm + pmm
        if request[3] == 0x01 { out += systemCode }
        return out
    }

    /// Handles a FeliCa frame including its leading length byte.
    func handle(_ frame: [UInt8]) -> TagReply {
        guard frame.count >= 2, Int(frame[0]) == frame.count else { return .silent }
        switch frame[1] {
        case 0x04 where frame.count == 10 && Array(frame[2 ..< 10]) == idm:  // Request Response
            return .data([0x0B, 0x05] + idm + [0x00])
        case 0x00:
            if let r = poll(Array(frame[1...])) { return .data([UInt8(r.count + 1)] + r) }
            return .silent
        default:
            return .silent
        }
    }
}

/// A card in the simulated RF field.
public enum SimulatedCard: Sendable {
    /// A Type 2 tag (NTAG21x / Ultralight): ATQA 00 44, SAK 00.
    case type2(Type2Tag)
    /// An ISO/IEC 14443-A badge that only answers anticollision (e.g. a MIFARE Classic
    /// credential whose sectors are not readable without keys).
    case isoA(uid: [UInt8], atqa: [UInt8], sak: UInt8)
    /// A FeliCa card; `baudRates` lists the polling speeds it answers (212, 424).
    case felica(FeliCaCard, baudRates: [Int])

    /// Short human description for `list`.
    public var summary: String {
        switch self {
        case .type2(let t): "\(t.model.rawValue) uid=\(hex(t.uid))"
        case .isoA(let uid, let atqa, let sak): "iso14443a uid=\(hex(uid)) atqa=\(hex(atqa)) sak=\(hex([sak]))"
        case .felica(let c, let br): "felica idm=\(hex(c.idm)) pmm=\(hex(c.pmm)) sc=\(hex(c.systemCode)) br=\(br)"
        }
    }

    /// ISO-A identification: (ATQA bytes as sent by the PN532, SAK, UID), nil for FeliCa.
    var isoAIdentity: (atqa: [UInt8], sak: UInt8, uid: [UInt8])? {
        switch self {
        case .type2(let t): ([0x00, 0x44], 0x00, t.uid)
        case .isoA(let uid, let atqa, let sak): (atqa, sak, uid)
        case .felica: nil
        }
    }
}

/// Lower-case hex without separators.
public func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    var s = ""
    for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 0x0F)]) }
    return s
}

/// Parses hex (separators `:`, ` `, `-` allowed); nil when malformed.
public func parseHex(_ text: String) -> [UInt8]? {
    let cleaned = text.filter { !":- \n\t".contains($0) }
    guard cleaned.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    var it = cleaned.makeIterator()
    while let a = it.next(), let b = it.next() {
        guard let v = UInt8(String([a, b]), radix: 16) else { return nil }
        out.append(v)
    }
    return out
}
