/// A JSON value as carried in Varlink messages.
///
/// Numbers without a fraction or exponent that fit in `Int64` parse as ``int(_:)``; every other
/// number parses as ``double(_:)``. Object member order is not kept (serialization sorts keys).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

// MARK: - Convenience accessors

extension JSONValue {
    /// `true` for ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The boolean, if this is ``bool(_:)``.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The string, if this is ``string(_:)``.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The integer, if this is ``int(_:)`` or a ``double(_:)`` holding a whole number in `Int64` range.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d): return Int64(exactly: d)
        default: return nil
        }
    }

    /// The number as a `Double`, if this is ``int(_:)`` or ``double(_:)``.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The elements, if this is ``array(_:)``.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// The members, if this is ``object(_:)``.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }

    /// The member `key` of an object (`nil` if this is not an object or has no such member).
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The element at `index` of an array (`nil` if this is not an array or the index is out of range).
    public subscript(index: Int) -> JSONValue? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    /// A short name of the JSON type ("null", "bool", "int", "float", "string", "array", "object").
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "float"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var o: [String: JSONValue] = [:]
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}

// MARK: - Parsing and serialization entry points

extension JSONValue {
    /// Parses one JSON text (RFC 8259, strict). See ``JSONParser``.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = JSONParser.defaultMaxDepth) throws(JSONParseError) {
        self = try JSONParser.parse(Array(bytes), maxDepth: maxDepth)
    }

    /// Parses one JSON text from a string.
    public init(parsing text: String, maxDepth: Int = JSONParser.defaultMaxDepth) throws(JSONParseError) {
        self = try JSONParser.parse(Array(text.utf8), maxDepth: maxDepth)
    }

    /// Compact serialization (no whitespace, object keys sorted) as UTF-8 bytes.
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        JSONSerializer.write(self, into: &out)
        return out
    }

    /// Indented serialization (two spaces a level, object keys sorted) as UTF-8 bytes.
    public func indentedBytes() -> [UInt8] {
        var out: [UInt8] = []
        JSONSerializer.writeIndented(self, into: &out)
        return out
    }

    /// Compact serialization (no whitespace, object keys sorted) as a string.
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serialized() }
}
