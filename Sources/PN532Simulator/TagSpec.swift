import Foundation
import JSON
import NDEF

/// Description of a simulated card, as given on the command line, in a JSON file or over the
/// control socket. Examples:
///
/// - `{"type":"ntag215","uid":"04a1b2c3d4e5f6","ndef":"d1010b55..."}`: NDEF message in an
///   NDEF-formatted NTAG215 (`format` is `ndef` when `ndef` is given, else `empty`).
/// - `{"type":"ntag213","format":"blank"}`: factory-blank, CC all zeros (not NDEF formatted).
/// - `{"type":"ultralight","memory":"<hex of all 64 bytes>"}` or `"dumpFile":"tag.mfd"`.
/// - `{"type":"isoA","uid":"01020304","sak":8}`; `{"type":"felica","idm":"...","pmm":"..."}`.
public struct TagSpec: Codable, Sendable, Equatable {
    /// `ntag213`, `ntag215`, `ntag216`, `ultralight`, `isoA`, `felica`.
    public var type: String
    public var uid: String?
    /// `blank` (CC zero), `empty` (CC + empty NDEF TLV), `ndef` (CC + `ndef` message).
    public var format: String?
    /// NDEF message bytes (hex) to place in an NDEF TLV.
    public var ndef: String?
    /// Raw data-area bytes (hex) written from page 4 (TLVs included), CC set as for `empty`.
    public var dataArea: String?
    /// Whole memory image (hex) — overrides everything but `uid` is then taken from it.
    public var memory: String?
    /// Path of a raw dump (as written by `nfc-mfultralight r`).
    public var dumpFile: String?
    /// Set CC write access to 0x0F and all static/dynamic lock bits.
    public var readOnly: Bool?
    public var sak: UInt8?
    public var atqa: String?
    public var idm: String?
    public var pmm: String?
    public var systemCode: String?
    public var baudRates: [Int]?

    public init(type: String, uid: String? = nil, format: String? = nil, ndef: String? = nil,
                dataArea: String? = nil, memory: String? = nil, dumpFile: String? = nil,
                readOnly: Bool? = nil, sak: UInt8? = nil, atqa: String? = nil, idm: String? = nil,
                pmm: String? = nil, systemCode: String? = nil, baudRates: [Int]? = nil) {
        self.type = type; self.uid = uid; self.format = format; self.ndef = ndef
        self.dataArea = dataArea; self.memory = memory; self.dumpFile = dumpFile
        self.readOnly = readOnly; self.sak = sak; self.atqa = atqa; self.idm = idm
        self.pmm = pmm; self.systemCode = systemCode; self.baudRates = baudRates
    }

    /// Parses a textual spec: JSON object, `@file.json`, or shorthand `ntag213[:blank|:empty]`,
    /// `ultralight`, `isoa:<uid>`, `felica:<idm>`, `dump:<model>:<path>`, `device:<id>[:<model>[:<serial>]]`.
    public static func parse(_ text: String) throws(SimulatorError) -> TagSpec {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("{") {
            do { return try JSONValueDecoder().decode(TagSpec.self, from: JSONValue(parsing: t)) } catch {
                throw .badSpec("invalid JSON tag spec: \(error)")
            }
        }
        if t.hasPrefix("@") {
            guard let data = FileManager.default.contents(atPath: String(t.dropFirst())) else {
                throw .badSpec("cannot read tag spec file \(t.dropFirst())")
            }
            do { return try JSONValueDecoder().decode(TagSpec.self, from: JSONValue(parsing: Array(data))) } catch {
                throw .badSpec("invalid JSON in \(t.dropFirst()): \(error)")
            }
        }
        let parts = t.split(separator: ":", maxSplits: 2).map(String.init)
        guard let head = parts.first?.lowercased() else { throw .badSpec("empty tag spec") }
        switch head {
        case "ntag213", "ntag215", "ntag216", "ultralight":
            // Each shorthand is its own tag: a UID derived from the spec text, the same every time.
            return TagSpec(type: head, uid: stableUID(t.lowercased()), format: parts.count > 1 ? parts[1] : nil)
        case "isoa":
            return TagSpec(type: "isoA", uid: parts.count > 1 ? parts[1] : nil)
        case "device":
            // device:<id>[:<model>[:<serial>]] — an NTAG215 carrying a RoomBridge device record,
            // with a UID derived from the ID so the same device is the same tag every time.
            guard parts.count > 1, !parts[1].isEmpty else { throw .badSpec("use device:<id>[:<model>[:<serial>]]") }
            let rest = parts.count > 2 ? parts[2].split(separator: ":", maxSplits: 1).map(String.init) : []
            let record = DeviceTagRecord(deviceId: parts[1], model: rest.first, serial: rest.count > 1 ? rest[1] : nil)
            let message: [UInt8]
            do { message = try record.message().encoded() } catch { throw .badSpec("device record: \(error)") }
            return TagSpec(type: "ntag215", uid: stableUID(parts[1]), ndef: message.map { String(format: "%02X", $0) }.joined())
        case "felica":
            return TagSpec(type: "felica", idm: parts.count > 1 ? parts[1] : nil)
        case "dump":
            guard parts.count == 3 else { throw .badSpec("use dump:<model>:<path>") }
            return TagSpec(type: parts[1], dumpFile: parts[2])
        default:
            throw .badSpec("unknown tag spec '\(text)' (try ntag213, ntag215:blank, ultralight, isoa:01020304, felica, a JSON object or @file.json)")
        }
    }

    /// A 7-byte NXP UID (manufacturer byte 04) derived from `key` (FNV-1a): stable across runs,
    /// different for different keys.
    static func stableUID(_ key: String) -> String {
        var h: UInt64 = 0xcbf29ce484222325
        for b in key.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return "04" + (0..<6).map { String(format: "%02X", UInt8((h >> (8 * UInt64($0))) & 0xFF)) }.joined()
    }

    /// Builds the card.
    public func makeCard() throws(SimulatorError) -> SimulatedCard {
        switch type.lowercased() {
        case "ntag213", "ntag215", "ntag216", "ultralight":
            return .type2(try makeType2(Type2Model(rawValue: type.lowercased())!))
        case "isoa", "iso14443a":
            let u = try bytes(uid, "uid") ?? [0x01, 0x02, 0x03, 0x04]
            guard [4, 7, 10].contains(u.count) else { throw .badSpec("ISO14443-A UID must have 4, 7 or 10 bytes") }
            let defaultAtqa: [UInt8] = u.count == 4 ? [0x00, 0x04] : u.count == 7 ? [0x00, 0x44] : [0x00, 0x84]
            let a = try bytes(atqa, "atqa") ?? defaultAtqa
            guard a.count == 2 else { throw .badSpec("atqa must have 2 bytes") }
            return .isoA(uid: u, atqa: a, sak: sak ?? 0x08)
        case "felica":
            let i = try bytes(idm, "idm") ?? [0x01, 0x2E, 0x4C, 0x11, 0x22, 0x33, 0x44, 0x55]
            let p = try bytes(pmm, "pmm") ?? [0x03, 0x01, 0x4B, 0x02, 0x4F, 0x49, 0x93, 0xFF]
            let s = try bytes(systemCode, "systemCode") ?? [0x88, 0xB4]
            guard i.count == 8, p.count == 8, s.count == 2 else { throw .badSpec("FeliCa idm/pmm need 8 bytes, systemCode 2") }
            return .felica(FeliCaCard(idm: i, pmm: p, systemCode: s), baudRates: baudRates ?? [212, 424])
        default:
            throw .badSpec("unknown tag type '\(type)'")
        }
    }

    private func bytes(_ s: String?, _ name: String) throws(SimulatorError) -> [UInt8]? {
        guard let s else { return nil }
        guard let b = parseHex(s) else { throw .badSpec("\(name) is not valid hex") }
        return b
    }

    private func makeType2(_ model: Type2Model) throws(SimulatorError) -> Type2Tag {
        let size = model.pageCount * 4
        if let dumpFile {
            guard let d = FileManager.default.contents(atPath: dumpFile) else { throw .badSpec("cannot read dump \(dumpFile)") }
            return Type2Tag(model: model, memory: Array(d))
        }
        if let m = try bytes(memory, "memory") { return Type2Tag(model: model, memory: m) }
        let u = try bytes(uid, "uid") ?? [0x04, 0x6F, 0x2A, 0x12, 0x9B, 0x5C, 0x80]
        guard u.count == 7 else { throw .badSpec("Type 2 tags have a 7-byte UID") }
        var mem = Type2Tag.header(uid: u) + [UInt8](repeating: 0, count: size - 12)
        let fmt = format ?? (ndef != nil ? "ndef" : "empty")
        if fmt != "blank" {
            mem[12 ..< 16] = [0xE1, 0x10, UInt8(model.dataAreaSize / 8), 0x00]
            var area: [UInt8]
            if let raw = try bytes(dataArea, "dataArea") {
                area = raw
            } else {
                let msg = try bytes(ndef, "ndef") ?? []
                area = msg.count < 0xFF ? [0x03, UInt8(msg.count)] : [0x03, 0xFF, UInt8(msg.count >> 8), UInt8(msg.count & 0xFF)]
                area += msg + [0xFE]
            }
            guard area.count <= model.dataAreaSize else { throw .badSpec("data area larger than \(model.dataAreaSize) bytes") }
            mem.replaceSubrange(16 ..< 16 + area.count, with: area)
        }
        if let dyn = model.dynamicLockPage {   // NTAG factory configuration pages
            mem.replaceSubrange(dyn * 4 ..< dyn * 4 + 20, with: [0x00, 0x00, 0x00, 0xBD,  0x04, 0x00, 0x00, 0xFF,
                                                                0x00, 0x05, 0x00, 0x00,  0xFF, 0xFF, 0xFF, 0xFF,
                                                                0x00, 0x00, 0x00, 0x00])
        }
        if readOnly == true {
            mem[15] = 0x0F
            mem[10] = 0xFF; mem[11] = 0xFF
            if let dyn = model.dynamicLockPage { mem[dyn * 4] = 0xFF; mem[dyn * 4 + 1] = 0xFF; mem[dyn * 4 + 2] = 0xFF }
        }
        return Type2Tag(model: model, memory: mem)
    }
}

/// Errors of the simulator and its control interface.
public enum SimulatorError: Error, CustomStringConvertible, Sendable {
    case badSpec(String)
    case system(String)
    case control(String)

    public var description: String {
        switch self {
        case .badSpec(let m): "bad tag spec: \(m)"
        case .system(let m): m
        case .control(let m): m
        }
    }
}
