#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NDEF
import RoomBridgeCore

extension TagKind {
    /// The tag type as shown to people and clients (`Tap.tagType`).
    public var displayName: String {
        switch self {
        case .ntag213: "NTAG213"
        case .ntag215: "NTAG215"
        case .ntag216: "NTAG216"
        case .ultralight: "MIFARE Ultralight"
        case .type2: "Type 2"
        case .iso14443a: "ISO14443-A"
        case .felica: "FeliCa"
        }
    }
}

extension TagArrival {
    /// The arrival as a `SystemState` tap: identity, decoded records and the device record. Nil when the reader
    /// reported no UID (libnfc always has one for a selected target).
    public func tap(readerName: String, at: Date) -> Tap? {
        guard let uid = TagUID(bytes: uid) else { return nil }
        var tap = Tap(reader: readerName, uid: uid, tagType: kind.displayName,
                      readMillis: Double(readDuration.components.seconds) * 1000
                          + Double(readDuration.components.attoseconds) / 1e15,
                      at: at)
        if case .iso14443a(let atqa, let sak) = technology {
            tap.atqa = hexString(atqa).uppercased()
            tap.sak = hexString([sak]).uppercased()
        }
        switch ndef {
        case .notApplicable, .empty:
            break
        case .notFormatted:
            tap.readError = nil
        case .unreadable(let reason):
            tap.readError = reason
        case .message(let bytes, let decoded):
            guard let message = decoded else {
                do {
                    _ = try NDEFMessage.decode(bytes)
                } catch {
                    tap.readError = "the NDEF message is malformed: \(error)"
                }
                if tap.readError == nil { tap.readError = "the NDEF message is malformed" }
                break
            }
            tap.records = message.records.map(TagRecord.init(summarizing:))
            do throws(DeviceTagError) {
                if case .device(let device) = try DeviceTag.identify(message) {
                    tap.device = device
                }
            } catch {
                if case .unsupportedVersion = error {
                    tap.readError = error.description  // not damaged: written by a newer RoomBridge
                } else {
                    tap.readError = "the device record is damaged: \(error)"
                }
            }
        }
        return tap
    }
}

extension TagRecord {
    /// A client-facing summary of an NDEF record.
    public init(summarizing record: NDEFRecord) {
        let tnf: String
        switch record.tnf {
        case .empty: tnf = "empty"
        case .wellKnown: tnf = "wellKnown"
        case .media: tnf = "mime"
        case .absoluteURI: tnf = "absoluteURI"
        case .external: tnf = "external"
        case .unknown: tnf = "unknown"
        case .unchanged: tnf = "unchanged"
        }
        var text: String? = nil
        var uri: String? = nil
        switch try? record.content() {
        case .text(let t, _, _): text = t
        case .uri(let u): uri = u
        case .absoluteURI(let u, _): uri = u
        case .mime(let type, let payload):
            if type.hasPrefix("text/") || type.hasSuffix("json") { text = String(validating: payload, as: UTF8.self) }
        default: break
        }
        self.init(tnf: tnf, type: record.typeString ?? hexString(record.type).uppercased(),
                  id: record.id.isEmpty ? nil : (String(validating: record.id, as: UTF8.self) ?? hexString(record.id)),
                  text: text, uri: uri, payloadHex: hexString(record.payload).uppercased())
    }
}
