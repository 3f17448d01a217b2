/// The Type Name Format of an NDEF record (NFC Forum NDEF 1.0, §3.2.6).
public enum TypeNameFormat: UInt8, Hashable, Sendable, CaseIterable {
    /// TNF 0: no type, no ID, no payload.
    case empty = 0
    /// TNF 1: NFC Forum well-known type (RTD), e.g. `T` (Text) or `U` (URI).
    case wellKnown = 1
    /// TNF 2: media type (RFC 2046), e.g. `application/json`.
    case media = 2
    /// TNF 3: absolute URI (RFC 3986) as the type.
    case absoluteURI = 3
    /// TNF 4: NFC Forum external type, `domain:type`.
    case external = 4
    /// TNF 5: unknown payload type; the type field is empty.
    case unknown = 5
    /// TNF 6: continuation chunk of a chunked record; only valid inside a chunk sequence.
    case unchanged = 6
}

/// One logical NDEF record: chunked records are already reassembled when decoding.
///
/// This is the raw view; see ``NDEFRecord/content()`` for a typed view.
public struct NDEFRecord: Hashable, Sendable {
    /// Type name format.
    public var tnf: TypeNameFormat
    /// Type field (up to 255 bytes), interpreted according to `tnf`.
    public var type: [UInt8]
    /// Optional record identifier (up to 255 bytes; empty if absent).
    public var id: [UInt8]
    /// Payload bytes.
    public var payload: [UInt8]

    /// Creates a raw record.
    public init(tnf: TypeNameFormat, type: [UInt8] = [], id: [UInt8] = [], payload: [UInt8] = []) {
        self.tnf = tnf
        self.type = type
        self.id = id
        self.payload = payload
    }

    /// The Empty record (TNF 0).
    public static let empty = NDEFRecord(tnf: .empty)

    /// The type field decoded as a string (ASCII/UTF-8), or `nil` if it is not valid UTF-8.
    public var typeString: String? { String(validating: type, as: UTF8.self) }
}

/// Record flags in the NDEF header octet.
enum NDEFFlag {
    static let mb: UInt8 = 0x80
    static let me: UInt8 = 0x40
    static let cf: UInt8 = 0x20
    static let sr: UInt8 = 0x10
    static let il: UInt8 = 0x08
    static let tnfMask: UInt8 = 0x07
}
