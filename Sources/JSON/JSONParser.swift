/// Why a JSON text was rejected, with the byte offset where the problem was found.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        case unexpectedEndOfInput
        case unexpectedByte(UInt8)
        case trailingData
        case invalidNumber
        case numberOutOfRange
        case invalidEscape
        case invalidUnicodeEscape
        case loneSurrogate
        case controlCharacterInString
        case invalidUTF8
        case duplicateKey(String)
        case tooDeeplyNested(maxDepth: Int)
    }

    public var reason: Reason
    /// Byte offset in the input.
    public var offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "invalid JSON at byte \(offset): \(explanation)" }

    /// What is wrong, without the offset (e.g. "duplicate object key \"v\"").
    public var explanation: String {
        let what: String
        switch reason {
        case .unexpectedEndOfInput: what = "unexpected end of input"
        case .unexpectedByte(let b): what = "unexpected byte 0x\(String(b, radix: 16))"
        case .trailingData: what = "data after the JSON value"
        case .invalidNumber: what = "invalid number"
        case .numberOutOfRange: what = "number out of range"
        case .invalidEscape: what = "invalid escape sequence in string"
        case .invalidUnicodeEscape: what = "invalid \\u escape in string"
        case .loneSurrogate: what = "lone UTF-16 surrogate in \\u escape"
        case .controlCharacterInString: what = "unescaped control character in string"
        case .invalidUTF8: what = "invalid UTF-8"
        case .duplicateKey(let k): what = "duplicate object key \"\(k)\""
        case .tooDeeplyNested(let max): what = "JSON nested deeper than \(max) levels"
        }
        return what
    }
}

/// A strict RFC 8259 JSON parser.
///
/// Rejects invalid UTF-8 (overlong forms, encoded surrogates, code points above U+10FFFF),
/// lone surrogates in `\u` escapes, unescaped control characters, duplicate object keys,
/// non-finite numbers, trailing data, and nesting deeper than `maxDepth` (so hostile input
/// cannot exhaust the stack). Whitespace is space, tab, CR and LF only.
public enum JSONParser {
    /// The default nesting limit for arrays and objects.
    public static let defaultMaxDepth = 64

    /// Parses exactly one JSON value occupying all of `bytes` (surrounding whitespace allowed).
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        var p = Parser(bytes: bytes, maxDepth: maxDepth)
        p.skipWhitespace()
        let value = try p.parseValue(depth: 0)
        p.skipWhitespace()
        if p.pos != bytes.count { throw JSONParseError(.trailingData, at: p.pos) }
        return value
    }
}

private struct Parser {
    let bytes: [UInt8]
    let maxDepth: Int
    var pos = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard pos < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: pos) }
        return bytes[pos]
    }

    mutating func expectLiteral(_ literal: StaticString, value: JSONValue) throws(JSONParseError) -> JSONValue {
        let start = pos
        let count = literal.utf8CodeUnitCount
        var ok = true
        literal.withUTF8Buffer { lit in
            for i in 0..<count {
                if start + i >= bytes.count || bytes[start + i] != lit[i] { ok = false; return }
            }
        }
        guard ok else {
            if start + count > bytes.count { throw JSONParseError(.unexpectedEndOfInput, at: bytes.count) }
            throw JSONParseError(.unexpectedByte(bytes[start]), at: start)
        }
        pos += count
        return value
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        let b = try peek()
        switch b {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expectLiteral("true", value: .bool(true))
        case UInt8(ascii: "f"): return try expectLiteral("false", value: .bool(false))
        case UInt8(ascii: "n"): return try expectLiteral("null", value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw JSONParseError(.unexpectedByte(b), at: pos)
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw JSONParseError(.tooDeeplyNested(maxDepth: maxDepth), at: pos) }
        pos += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") { pos += 1; return .object(members) }
        while true {
            skipWhitespace()
            let keyStart = pos
            let b = try peek()
            guard b == UInt8(ascii: "\"") else { throw JSONParseError(.unexpectedByte(b), at: pos) }
            let key = try parseString()
            skipWhitespace()
            let colon = try peek()
            guard colon == UInt8(ascii: ":") else { throw JSONParseError(.unexpectedByte(colon), at: pos) }
            pos += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if members.updateValue(value, forKey: key) != nil {
                throw JSONParseError(.duplicateKey(key), at: keyStart)
            }
            skipWhitespace()
            let sep = try peek()
            pos += 1
            if sep == UInt8(ascii: ",") { continue }
            if sep == UInt8(ascii: "}") { return .object(members) }
            throw JSONParseError(.unexpectedByte(sep), at: pos - 1)
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw JSONParseError(.tooDeeplyNested(maxDepth: maxDepth), at: pos) }
        pos += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") { pos += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            let sep = try peek()
            pos += 1
            if sep == UInt8(ascii: ",") { continue }
            if sep == UInt8(ascii: "]") { return .array(elements) }
            throw JSONParseError(.unexpectedByte(sep), at: pos - 1)
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = pos
        var isInteger = true
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < bytes.count, isDigit(bytes[pos]) else { throw JSONParseError(.invalidNumber, at: start) }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < bytes.count, isDigit(bytes[pos]) { throw JSONParseError(.invalidNumber, at: start) }
        } else {
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw JSONParseError(.invalidNumber, at: start) }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            isInteger = false
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw JSONParseError(.invalidNumber, at: start) }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        if isInteger, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw JSONParseError(.numberOutOfRange, at: start) }
        return .double(d)
    }

    func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(b - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard pos + 4 <= bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: bytes.count) }
        var v: UInt32 = 0
        for i in 0..<4 {
            guard let h = hexValue(bytes[pos + i]) else { throw JSONParseError(.invalidUnicodeEscape, at: pos + i) }
            v = v << 4 | h
        }
        pos += 4
        return v
    }

    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | (scalar >> 6)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | (scalar >> 12)))
            out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            out.append(UInt8(0xF0 | (scalar >> 18)))
            out.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// Validates one multi-byte UTF-8 sequence starting at `pos` (lead byte >= 0x80) and
    /// returns its length (Unicode 15, table 3-7: well-formed byte sequences).
    func utf8SequenceLength() throws(JSONParseError) -> Int {
        let b0 = bytes[pos]
        let length: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; hi = 0x9F  // excludes encoded surrogates
        case 0xF0: length = 4; lo = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; hi = 0x8F  // <= U+10FFFF
        default: throw JSONParseError(.invalidUTF8, at: pos)
        }
        guard pos + length <= bytes.count else { throw JSONParseError(.invalidUTF8, at: pos) }
        let b1 = bytes[pos + 1]
        guard b1 >= lo && b1 <= hi else { throw JSONParseError(.invalidUTF8, at: pos + 1) }
        for i in 2..<max(length, 2) {
            let b = bytes[pos + i]
            guard b >= 0x80 && b <= 0xBF else { throw JSONParseError(.invalidUTF8, at: pos + i) }
        }
        return length
    }

    mutating func parseString() throws(JSONParseError) -> String {
        pos += 1  // opening quote
        var out: [UInt8] = []
        while true {
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: pos) }
            let b = bytes[pos]
            switch b {
            case UInt8(ascii: "\""):
                pos += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                pos += 1
                guard pos < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: pos) }
                let e = bytes[pos]
                pos += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    let escapeStart = pos - 2
                    let unit = try parseHex4()
                    var scalar = unit
                    if unit >= 0xD800 && unit <= 0xDBFF {
                        // A high surrogate must be followed by \u and a low surrogate.
                        guard pos + 2 <= bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u")
                        else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
                        pos += 2
                        let low = try parseHex4()
                        guard low >= 0xDC00 && low <= 0xDFFF else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
                        scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    } else if unit >= 0xDC00 && unit <= 0xDFFF {
                        throw JSONParseError(.loneSurrogate, at: escapeStart)
                    }
                    Parser.appendUTF8(scalar, to: &out)
                default:
                    throw JSONParseError(.invalidEscape, at: pos - 2)
                }
            case 0x00..<0x20:
                throw JSONParseError(.controlCharacterInString, at: pos)
            case 0x20..<0x80:
                out.append(b)
                pos += 1
            default:
                let n = try utf8SequenceLength()
                out.append(contentsOf: bytes[pos..<pos + n])
                pos += n
            }
        }
    }
}
