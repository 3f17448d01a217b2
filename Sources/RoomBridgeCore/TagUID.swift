#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A tag's or card's identifier (an ISO 14443-A UID, a FeliCa IDm) in its one canonical form: upper-case hex,
/// whole bytes, no separators. It is made once, at the edge (the reader's bytes, a client's text), and a value of
/// this type cannot hold another form, so nothing after the edge canonicalises again. On the wire it is that text.
public struct TagUID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Upper-case hex, e.g. `04A1B2C3D4E5F6`.
    public let hex: String

    /// The UID written as people and tools write it: hex digits in either case, bytes optionally separated by
    /// `:`, `-` or spaces (`04:a1:b2:c3`). Nil when it is not whole bytes of hex, or empty.
    public init?(_ text: String) {
        let stripped = text.filter { !":- ".contains($0) }.uppercased()
        guard !stripped.isEmpty, stripped.count % 2 == 0, stripped.allSatisfy({ $0.isHexDigit && $0.isASCII }) else {
            return nil
        }
        hex = stripped
    }

    /// The UID a reader reported, as bytes. Nil when there are none.
    public init?(bytes: [UInt8]) {
        guard !bytes.isEmpty else { return nil }
        let digits = Array("0123456789ABCDEF")
        hex = String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    /// How many bytes the UID has (4, 7 or 10 for ISO 14443-A; 8 for a FeliCa IDm).
    public var byteCount: Int { hex.count / 2 }

    public var description: String { hex }

    public static func < (a: TagUID, b: TagUID) -> Bool { a.hex < b.hex }
}

extension TagUID: Codable {
    /// Reads the text form; a UID in another spelling (lower case, separators) is taken in its canonical form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let uid = TagUID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "\"\(text)\" is not a tag UID: give whole bytes of hex, such as 04A1B2C3"))
        }
        self = uid
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(hex)
    }
}
