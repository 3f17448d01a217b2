/// Compact, deterministic JSON serialization: no whitespace, object keys sorted by their UTF-8
/// bytes, strings escaped per RFC 8259 (quote, backslash and control characters), non-finite
/// doubles written as `null` (JSON cannot represent them).
public enum JSONSerializer {
    /// Appends the serialization of `value` to `out`.
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): writeDouble(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(e, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            out.append(UInt8(ascii: "{"))
            for (i, member) in sortedMembers(o).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The members of an object in key order (by UTF-8 bytes), each with its value, so that no
    /// key is hashed again to find it.
    static func sortedMembers(_ o: [String: JSONValue]) -> [(key: String, value: JSONValue)] {
        o.sorted { utf8Precedes($0.key, $1.key) }
    }

    /// `a` before `b` by their UTF-8 bytes, compared in place where the strings are contiguous
    /// (as native strings are), else byte by byte through their views.
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        let inPlace = a.utf8.withContiguousStorageIfAvailable { pa in
            b.utf8.withContiguousStorageIfAvailable { pb in
                let n = min(pa.count, pb.count)
                var i = 0
                while i < n {
                    if pa[i] != pb[i] { return pa[i] < pb[i] }
                    i += 1
                }
                return pa.count < pb.count
            }
        }
        if let result = inPlace ?? nil { return result }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Appends `value` indented by two spaces per level, one member or element per line, for
    /// files people read (exports); keys sorted as in the compact form.
    public static func writeIndented(_ value: JSONValue, into out: inout [UInt8], level: Int = 0) {
        func newline(_ level: Int) {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
        }
        switch value {
        case .array(let a) where !a.isEmpty:
            out.append(UInt8(ascii: "["))
            for (i, e) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(level + 1)
                writeIndented(e, into: &out, level: level + 1)
            }
            newline(level)
            out.append(UInt8(ascii: "]"))
        case .object(let o) where !o.isEmpty:
            out.append(UInt8(ascii: "{"))
            for (i, member) in sortedMembers(o).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(level + 1)
                writeString(member.key, into: &out)
                out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
                writeIndented(member.value, into: &out, level: level + 1)
            }
            newline(level)
            out.append(UInt8(ascii: "}"))
        default:
            write(value, into: &out)
        }
    }

    static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
        // Swift's shortest round-trip description is valid JSON for finite values
        // ("1.5", "3.0", "1e-05", "5e+20").
        out.append(contentsOf: d.description.utf8)
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        // Most strings need no escape: copy them whole.
        let plain = s.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if plain {
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20, 0x7F:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
