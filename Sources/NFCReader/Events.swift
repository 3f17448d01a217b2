import NDEF

/// A polled modulation.
public enum PollModulation: String, Sendable, Hashable, CaseIterable, Codable {
    /// ISO/IEC 14443-A at 106 kbps (NTAG, Ultralight, MIFARE, ISO-A badges).
    case iso14443a
    /// FeliCa at 212 kbps.
    case felica212
    /// FeliCa at 424 kbps.
    case felica424
}

/// Product family of a detected tag.
public enum TagKind: String, Sendable, Hashable, Codable {
    case ntag213, ntag215, ntag216
    /// MIFARE Ultralight: no GET_VERSION answer and a 48-byte data area.
    case ultralight
    /// Another NFC Forum Type 2 tag (no GET_VERSION answer, CC announces more than 48 bytes:
    /// NTAG203, Ultralight C, …); its memory size is taken from the CC.
    case type2
    /// An ISO/IEC 14443-A card that is not a Type 2 tag (badge, MIFARE Classic, DESFire…).
    case iso14443a
    case felica

    /// True for NFC Forum Type 2 tags.
    public var isType2: Bool { [.ntag213, .ntag215, .ntag216, .ultralight, .type2].contains(self) }
}

/// Radio-level identity of a tag.
public enum TagTechnology: Sendable, Hashable {
    /// ISO/IEC 14443-A: ATQA (SENS_RES, as reported by the PN53x: byte 0 first) and SAK.
    case iso14443a(atqa: [UInt8], sak: UInt8)
    /// FeliCa: IDm (also the `uid`), PMm and system code (when reported).
    case felica(idm: [UInt8], pmm: [UInt8], systemCode: [UInt8]?)
}

/// NDEF content read from a tag.
public enum NDEFContent: Sendable, Hashable {
    /// The tag is not an NFC Forum Type 2 tag; only its identifier is used.
    case notApplicable
    /// Factory-blank or foreign capability container: the tag is not NDEF formatted.
    case notFormatted
    /// Formatted, but without an NDEF message (empty NDEF TLV or terminator).
    case empty
    /// The raw NDEF message bytes and, when they decode, the message.
    case message(bytes: [UInt8], decoded: NDEFMessage?)
    /// The content could not be read or parsed (corrupt TLV, length past the end, …).
    case unreadable(String)
}

/// A tag that arrived on a reader (one per physical tap).
public struct TagArrival: Sendable, Hashable {
    /// Reader identifier (its connstring, or `default`).
    public var reader: String
    /// UID (NFCID1, 4/7/10 bytes) or FeliCa IDm (8 bytes).
    public var uid: [UInt8]
    public var technology: TagTechnology
    public var kind: TagKind
    /// Capability container of a Type 2 tag, when NDEF formatted.
    public var capabilityContainer: Type2CapabilityContainer?
    public var ndef: NDEFContent
    /// Time spent identifying and reading the tag.
    public var readDuration: Duration
}

/// Events of a reader loop.
public enum ReaderEvent: Sendable, Hashable {
    /// The device was opened and initialised (`name` from libnfc, e.g. `pn532_uart:/dev/ttyUSB0`).
    case connected(reader: String, name: String)
    /// The device could not be opened or failed; `reason` holds libnfc's error text.
    case disconnected(reader: String, reason: String)
    case tagArrived(TagArrival)
    /// The tag reported by the last arrival left the field.
    case tagRemoved(reader: String, uid: [UInt8])
    /// A tag was seen but its content could not be read (also reported in the arrival's
    /// `ndef` as `.unreadable`) — the loop keeps running.
    case tagReadFailed(reader: String, uid: [UInt8], reason: String)
}

/// Errors of a tag write (registration).
public enum TagWriteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No tag came onto the reader before the deadline.
    case noTag
    /// The tag on the reader is not the one requested.
    case wrongTag(found: [UInt8])
    /// Not an NFC Forum Type 2 tag (NTAG21x / Ultralight).
    case unsupportedTag(TagKind)
    /// The CC denies write access or lock bits protect the pages to write.
    case readOnly
    /// The message does not fit into the data area.
    case tooSmall(needed: Int, capacity: Int)
    /// The tag is not NDEF formatted and cannot be formatted here (unknown model / foreign CC).
    case notFormattable
    /// The tag left the field (or stopped answering) during the operation; nothing is
    /// guaranteed about its content: tap it again and retry.
    case tagLifted(page: Int)
    /// The tag refused (NAK) a page write.
    case writeRefused(page: Int)
    /// Read-back after writing differs from what was written.
    case verifyFailed(page: Int)
    /// The reader is not connected or was stopped.
    case readerUnavailable(String)

    public var description: String {
        switch self {
        case .noTag: "No tag was presented to the reader in time. Place the tag on the reader and retry."
        case .wrongTag(let uid): "A different tag (UID \(hexString(uid))) is on the reader. Present the tag being registered."
        case .unsupportedTag(let k): "This tag (\(k.rawValue)) cannot be written: use an NTAG213/215/216 or MIFARE Ultralight tag."
        case .readOnly: "The tag is read-only (capability container or lock bits). Use a new tag."
        case .tooSmall(let n, let c): "The message needs \(n) bytes but the tag holds \(c). Use a larger tag (NTAG215/216) or a shorter message."
        case .notFormattable: "The tag is not NDEF formatted and cannot be formatted by RoomBridge. Use a new NTAG21x tag."
        case .tagLifted(let p): "The tag was removed while writing page \(p). Hold it still on the reader and retry."
        case .writeRefused(let p): "The tag refused the write of page \(p) (locked or damaged). Use another tag."
        case .verifyFailed(let p): "Read-back verification failed at page \(p). Retry; if it persists, the tag is faulty."
        case .readerUnavailable(let r): "The NFC reader is unavailable (\(r)). Check that it is connected."
        }
    }
}

/// Result of a successful write.
public struct TagWriteResult: Sendable, Hashable {
    public var uid: [UInt8]
    public var kind: TagKind
    /// Whether the tag was factory-blank and got a capability container.
    public var formatted: Bool
    /// Number of data-area bytes written (whole pages).
    public var bytesWritten: Int
}

/// Lower-case hex.
public func hexString(_ bytes: [UInt8]) -> String {
    let d = Array("0123456789abcdef")
    var s = ""
    for b in bytes { s.append(d[Int(b >> 4)]); s.append(d[Int(b & 0xF)]) }
    return s
}
