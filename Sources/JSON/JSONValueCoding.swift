// Codable bridging between Swift values and JSONValue, without Foundation.

// MARK: - Encoder

/// Encodes any `Encodable` value to a ``JSONValue``.
///
/// Optionals encoded with `encodeIfPresent` (the synthesized default) are omitted. Integers
/// become ``JSONValue/int(_:)``; `UInt`/`UInt64` values above `Int64.max` cannot be
/// represented as a Varlink `int` and fail with `EncodingError.invalidValue`.
public struct JSONValueEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let box = EncodingBox()
        try box.encode(value, codingPath: [])
        return box.materialize()
    }

    /// Encodes a value that must become a JSON object (e.g. Varlink parameters).
    public func encodeObject<T: Encodable>(_ value: T) throws -> [String: JSONValue] {
        let json = try encode(value)
        guard case .object(let o) = json else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "expected a value that encodes to a JSON object, got \(json.typeName)"))
        }
        return o
    }
}

final class EncodingBox {
    /// A member or element: a value written at once (no box of its own), or a box that a
    /// value's `encode(to:)` fills.
    enum Slot {
        case value(JSONValue)
        case box(EncodingBox)

        func materialize() -> JSONValue {
            switch self {
            case .value(let v): return v
            case .box(let b): return b.materialize()
            }
        }
    }

    enum Content {
        case empty
        case value(JSONValue)
        case array([Slot])
        /// Members in the order written, hashed once when the object is materialized (a key
        /// written twice keeps its last value).
        case object([(key: String, slot: Slot)])
    }
    var content: Content = .empty

    func materialize() -> JSONValue {
        switch content {
        case .empty: return .object([:])  // a type that encoded nothing at all
        case .value(let v): return v
        case .array(let a): return .array(a.map { $0.materialize() })
        case .object(let members):
            var o = [String: JSONValue](minimumCapacity: members.count)
            for member in members { o[member.key] = member.slot.materialize() }
            return .object(o)
        }
    }

    func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        if T.self == JSONValue.self {
            content = .value(value as! JSONValue)
            return
        }
        if let date = JSONDates.encode(value) {
            content = .value(date)
            return
        }
        try value.encode(to: BoxEncoder(box: self, codingPath: codingPath))
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; self.intValue = nil }
    init(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
}

struct BoxEncoder: Encoder {
    let box: EncodingBox
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = box.content {} else { box.content = .object([]) }
        return KeyedEncodingContainer(KeyedBoxContainer<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = box.content {} else { box.content = .array([]) }
        return UnkeyedBoxContainer(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleBoxContainer(box: box, codingPath: codingPath)
    }
}

func encodeInteger<T: BinaryInteger>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue {
    guard let i = Int64(exactly: value) else {
        throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit in a Varlink int (Int64)"))
    }
    return .int(i)
}

struct SingleBoxContainer: SingleValueEncodingContainer {
    let box: EncodingBox
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.content = .value(.null) }
    mutating func encode(_ value: Bool) throws { box.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { box.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { box.content = .value(.double(value)) }
    mutating func encode(_ value: Float) throws { box.content = .value(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: Int8) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: Int16) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: Int32) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: Int64) throws { box.content = .value(.int(value)) }
    mutating func encode(_ value: UInt) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: UInt8) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: UInt16) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: UInt32) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode(_ value: UInt64) throws { box.content = .value(try encodeInteger(value, codingPath: codingPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try box.encode(value, codingPath: codingPath) }
}

struct KeyedBoxContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: EncodingBox
    var codingPath: [any CodingKey]

    private func add(_ slot: EncodingBox.Slot, _ key: Key) {
        if case .object(var members) = box.content {
            box.content = .empty  // keep the array uniquely referenced while mutating
            members.append((key.stringValue, slot))
            box.content = .object(members)
        }
    }

    private func child(_ key: Key) -> EncodingBox {
        let child = EncodingBox()
        add(.box(child), key)
        return child
    }

    private func set(_ value: JSONValue, _ key: Key) { add(.value(value), key) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    // Each integer type its own witness, so that the synthesized code does not reach the generic
    // method below and its cast to `any BinaryInteger` (a conformance lookup per field).
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(try encodeInteger(value, codingPath: codingPath + [key]), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(try encodeInteger(value, codingPath: codingPath + [key]), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let path = codingPath + [key]
        if let i = value as? any BinaryInteger {
            set(try encodeInteger(i, codingPath: path), key)
            return
        }
        try child(key).encode(value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let c = child(key)
        c.content = .object([])
        return KeyedEncodingContainer(KeyedBoxContainer<NestedKey>(box: c, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let c = child(key)
        c.content = .array([])
        return UnkeyedBoxContainer(box: c, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { BoxEncoder(box: child(Key(stringValue: "super")!), codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { BoxEncoder(box: child(key), codingPath: codingPath + [key]) }
}

struct UnkeyedBoxContainer: UnkeyedEncodingContainer {
    let box: EncodingBox
    var codingPath: [any CodingKey]
    var count: Int {
        if case .array(let a) = box.content { return a.count }
        return 0
    }

    private func add(_ slot: EncodingBox.Slot) {
        if case .array(var a) = box.content {
            box.content = .empty
            a.append(slot)
            box.content = .array(a)
        }
    }

    private func append() -> EncodingBox {
        let child = EncodingBox()
        add(.box(child))
        return child
    }

    private func append(_ value: JSONValue) { add(.value(value)) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt) throws { append(try encodeInteger(value, codingPath: codingPath + [AnyKey(intValue: count)])) }
    mutating func encode(_ value: UInt64) throws { append(try encodeInteger(value, codingPath: codingPath + [AnyKey(intValue: count)])) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = codingPath + [AnyKey(intValue: count)]
        if let i = value as? any BinaryInteger {
            append(try encodeInteger(i, codingPath: path))
            return
        }
        try append().encode(value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [AnyKey(intValue: count)]
        let c = append()
        c.content = .object([])
        return KeyedEncodingContainer(KeyedBoxContainer<NestedKey>(box: c, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [AnyKey(intValue: count)]
        let c = append()
        c.content = .array([])
        return UnkeyedBoxContainer(box: c, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder { BoxEncoder(box: append(), codingPath: codingPath) }
}

// MARK: - Decoder

/// Decodes any `Decodable` value from a ``JSONValue``.
///
/// Strict about types: a string never decodes as a number, a number never as a bool. An
/// integer type accepts ``JSONValue/int(_:)`` in range, and a ``JSONValue/double(_:)`` only if
/// it holds a whole number in range (3.0 yes, 3.5 no). Errors are `DecodingError`s whose
/// coding path names the field; ``JSONValueDecoder/fieldPath(of:)`` renders it as
/// `"outer.inner[2].name"`.
public struct JSONValueDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        return try decodeScalar(type, from: value, codingPath: [])
    }

    /// Decodes from a parameters object.
    public func decode<T: Decodable>(_ type: T.Type, from parameters: [String: JSONValue]) throws -> T {
        try decode(type, from: .object(parameters))
    }

    /// The dotted path of the field a `DecodingError` is about (`""` for the top level).
    /// For a missing key the missing key is included.
    public static func fieldPath(of error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let ctx): return render(ctx.codingPath + [key])
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx), .dataCorrupted(let ctx): return render(ctx.codingPath)
        @unknown default: return ""
        }
    }

    static func render(_ path: [any CodingKey]) -> String {
        var s = ""
        for key in path {
            if let i = key.intValue, key.stringValue == String(i) {
                s += "[\(i)]"
            } else {
                if !s.isEmpty { s += "." }
                s += key.stringValue
            }
        }
        return s
    }
}

struct ValueDecoder: Decoder {
    let value: JSONValue
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let o) = value else {
            throw DecodingError.typeMismatch([String: JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an object, found \(value.typeName)"))
        }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(object: o, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let a) = value else {
            throw DecodingError.typeMismatch([JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an array, found \(value.typeName)"))
        }
        return UnkeyedValueContainer(array: a, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(value: value, codingPath: codingPath)
    }
}

func decodeScalar<T: Decodable>(_ type: T.Type, from value: JSONValue, codingPath: [any CodingKey]) throws -> T {
    func mismatch(_ expected: String) -> DecodingError {
        .typeMismatch(T.self, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(value.typeName)"))
    }
    if T.self == JSONValue.self { return value as! T }
    if JSONDates.isDate(T.self) { return try JSONDates.decode(value, codingPath: codingPath) as! T }
    if T.self == Bool.self {
        guard case .bool(let b) = value else { throw mismatch("a bool") }
        return b as! T
    }
    if T.self == String.self {
        guard case .string(let s) = value else { throw mismatch("a string") }
        return s as! T
    }
    if T.self == Double.self {
        guard let d = value.doubleValue else { throw mismatch("a number") }
        return d as! T
    }
    if T.self == Float.self {
        guard let d = value.doubleValue else { throw mismatch("a number") }
        return Float(d) as! T
    }
    if let intType = T.self as? any FixedWidthInteger.Type {
        return try decodeInteger(intType, value: value, codingPath: codingPath) as! T
    }
    return try T(from: ValueDecoder(value: value, codingPath: codingPath))
}

func decodeInteger<I: FixedWidthInteger>(_ type: I.Type, value: JSONValue, codingPath: [any CodingKey]) throws -> I {
    switch value {
    case .int(let i):
        guard let r = I(exactly: i) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(i) is out of range for \(I.self)"))
        }
        return r
    case .double(let d):
        guard d.rounded(.towardZero) == d else {
            throw DecodingError.typeMismatch(I.self, .init(codingPath: codingPath, debugDescription: "expected an integer, found \(d)"))
        }
        guard let r = I(exactly: d) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(d) is out of range for \(I.self)"))
        }
        return r
    default:
        throw DecodingError.typeMismatch(I.self, .init(codingPath: codingPath, debugDescription: "expected an integer, found \(value.typeName)"))
    }
}

struct SingleValueContainer: SingleValueDecodingContainer {
    let value: JSONValue
    var codingPath: [any CodingKey]
    func decodeNil() -> Bool { value.isNull }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if value.isNull, T.self != JSONValue.self {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath, debugDescription: "expected \(T.self), found null"))
        }
        return try decodeScalar(type, from: value, codingPath: codingPath)
    }
}

struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    var codingPath: [any CodingKey]
    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let v = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing field \"\(key.stringValue)\""))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool { (object[key.stringValue] ?? .null).isNull }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let v = try value(key)
        if v.isNull, T.self != JSONValue.self {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath + [key], debugDescription: "field \"\(key.stringValue)\" is null"))
        }
        return try decodeScalar(type, from: v, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: object["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    var codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    init(array: [JSONValue], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, [any CodingKey]) {
        let path = codingPath + [AnyKey(intValue: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: path, debugDescription: "array has only \(array.count) elements"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if array[currentIndex].isNull { currentIndex += 1; return true }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (v, path) = try next(T.self)
        if v.isNull, T.self != JSONValue.self {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: path, debugDescription: "element is null"))
        }
        return try decodeScalar(type, from: v, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, path) = try next([String: JSONValue].self)
        return try ValueDecoder(value: v, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (v, path) = try next([JSONValue].self)
        return try ValueDecoder(value: v, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (v, path) = try next(JSONValue.self)
        return ValueDecoder(value: v, codingPath: path)
    }
}

// MARK: - JSONValue: Codable

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if let d = decoder as? ValueDecoder { self = d.value; return }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        if let e = encoder as? BoxEncoder { e.box.content = .value(self); return }
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}
