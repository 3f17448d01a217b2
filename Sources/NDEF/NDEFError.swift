/// Errors raised while decoding or encoding NDEF messages and Type 2 Tag memory.
///
/// Every malformed input maps to one of these cases; the decoders never trap and never
/// allocate a buffer sized by an unchecked length field.
public enum NDEFError: Error, Hashable, Sendable {
    // MARK: Message / record structure
    /// The input holds no bytes at all.
    case emptyMessage
    /// The record at `offset` needs `needed` more bytes but only `available` remain.
    case truncated(offset: Int, needed: Int, available: Int)
    /// The first record does not have the MB (message begin) flag.
    case missingMessageBegin
    /// A record other than the first has the MB flag set.
    case unexpectedMessageBegin(recordIndex: Int)
    /// The input ended before a record with the ME (message end) flag.
    case missingMessageEnd
    /// Bytes follow the record that carries the ME flag.
    case trailingBytes(offset: Int, count: Int)
    /// TNF value 7 is reserved by the NFC Forum.
    case reservedTNF(offset: Int)
    /// A record violates a TNF-specific rule (e.g. Empty with a payload, Unknown with a type).
    case invalidRecord(offset: Int, reason: String)
    /// Chunked record violation (Unchanged outside a chunk, a chunk that never ends, …).
    case invalidChunk(offset: Int, reason: String)
    /// A record (or a reassembled chunked record) is larger than the configured limit.
    case recordTooLarge(size: Int, limit: Int)
    /// The message has more records than the configured limit.
    case tooManyRecords(limit: Int)
    /// A field cannot be encoded (type or ID longer than 255 bytes, payload over 4 GiB, …).
    case cannotEncode(reason: String)

    // MARK: Record payloads (typed view)
    /// A Text record payload is malformed.
    case invalidText(reason: String)
    /// A URI record uses an identifier code outside the NFC Forum table 0x00–0x23.
    case invalidURIPrefix(code: UInt8)
    /// A URI / Absolute URI / type string is not valid UTF-8 / ASCII.
    case invalidURI(reason: String)
    /// A type field (MIME type, external type) is malformed.
    case invalidType(reason: String)

    // MARK: Type 2 Tag
    /// The capability container is all zero: a factory-blank tag that is not NDEF formatted yet.
    case blankCapabilityContainer
    /// The capability container does not start with the NDEF magic number 0xE1.
    case notNDEFFormatted(magic: UInt8)
    /// The capability container announces a major mapping version this reader does not support.
    case unsupportedMappingVersion(major: UInt8, minor: UInt8)
    /// A capability container needs exactly 4 bytes.
    case invalidCapabilityContainerLength(Int)
    /// A TLV block's length runs past the end of the data area.
    case tlvOutOfBounds(tag: UInt8, offset: Int, length: Int, dataAreaSize: Int)
    /// A TLV block uses a reserved length encoding (3-byte length 0xFFFF).
    case invalidTLVLength(tag: UInt8, offset: Int)
    /// A Lock/Memory Control TLV reserves bytes (from data-area offset `offset`) inside the NDEF
    /// message; such tags are not supported.
    case reservedAreaInsideNDEF(offset: Int)
    /// The data area size is not usable (negative or larger than a Type 2 Tag can be).
    case invalidDataAreaSize(Int)
    /// The encoded NDEF TLV does not fit into the tag's data area.
    case tooLarge(needed: Int, capacity: Int)
}

extension NDEFError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .emptyMessage:
            return "The NDEF message is empty (no records). Write a message to the tag first."
        case let .truncated(offset, needed, available):
            return "NDEF record at byte \(offset) is truncated: it needs \(needed) more bytes but only \(available) remain. The tag content is damaged or was only partly read; re-read or rewrite the tag."
        case .missingMessageBegin:
            return "The first NDEF record lacks the MB (message begin) flag; the data is not an NDEF message."
        case let .unexpectedMessageBegin(index):
            return "NDEF record #\(index) has the MB flag although it is not the first record; the message is malformed."
        case .missingMessageEnd:
            return "The NDEF message ends without a record carrying the ME (message end) flag; it is truncated or malformed."
        case let .trailingBytes(offset, count):
            return "\(count) unexpected bytes follow the last NDEF record (at byte \(offset)); the message length is inconsistent."
        case let .reservedTNF(offset):
            return "NDEF record at byte \(offset) uses the reserved TNF value 7."
        case let .invalidRecord(offset, reason):
            return "Invalid NDEF record at byte \(offset): \(reason)."
        case let .invalidChunk(offset, reason):
            return "Invalid chunked NDEF record at byte \(offset): \(reason)."
        case let .recordTooLarge(size, limit):
            return "NDEF record of \(size) bytes exceeds the limit of \(limit) bytes."
        case let .tooManyRecords(limit):
            return "The NDEF message has more than \(limit) records."
        case let .cannotEncode(reason):
            return "Cannot encode NDEF record: \(reason)."
        case let .invalidText(reason):
            return "Invalid NDEF Text record: \(reason)."
        case let .invalidURIPrefix(code):
            return "Invalid NDEF URI record: identifier code 0x\(hex(code)) is not in the NFC Forum table (0x00–0x23)."
        case let .invalidURI(reason):
            return "Invalid URI in NDEF record: \(reason)."
        case let .invalidType(reason):
            return "Invalid NDEF record type: \(reason)."
        case .blankCapabilityContainer:
            return "The tag is blank (capability container 00 00 00 00): it is not NDEF formatted. Format it (write the capability container) before use."
        case let .notNDEFFormatted(magic):
            return "The tag is not NDEF formatted: capability container magic is 0x\(hex(magic)), expected 0xE1."
        case let .unsupportedMappingVersion(major, minor):
            return "The tag uses Type 2 mapping version \(major).\(minor); only major version 1 is supported."
        case let .invalidCapabilityContainerLength(count):
            return "A Type 2 capability container has 4 bytes, got \(count)."
        case let .tlvOutOfBounds(tag, offset, length, size):
            return "TLV 0x\(hex(tag)) at data-area byte \(offset) declares \(length) bytes, past the end of the \(size)-byte data area; the tag content is damaged."
        case let .invalidTLVLength(tag, offset):
            return "TLV 0x\(hex(tag)) at data-area byte \(offset) uses the reserved length 0xFFFF."
        case let .reservedAreaInsideNDEF(offset):
            return "The tag reserves memory (lock or vendor bytes at data-area byte \(offset)) inside the NDEF message; this tag layout is not supported. Use an NTAG213/215/216."
        case let .invalidDataAreaSize(size):
            return "Invalid Type 2 data area size \(size)."
        case let .tooLarge(needed, capacity):
            return "The NDEF message needs \(needed) bytes but the tag holds only \(capacity); use a larger tag (e.g. NTAG215/216) or a shorter message."
        }
    }
}

@inline(__always)
func hex(_ byte: UInt8) -> String {
    let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
