internal import CDBus

/// One entry of a D-Bus dictionary (`{KV}`), in wire order.
public struct DBusDictEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue
    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// A D-Bus value of any type.
///
/// Reading from the bus always yields `.bytes` for `ay` and `.dictionary` for `a{..}`; when
/// writing, `.array(elementSignature: "y", …)` is accepted too. Arrays carry their element
/// signature so that empty arrays have a type.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    case unixFD(DBusUnixFD)
    /// `ay`, stored compactly.
    case bytes([UInt8])
    /// `aX` for any element type X except dict entries.
    case array(elementSignature: DBusSignature, [DBusValue])
    /// `a{KV}`; entries in wire order.
    case dictionary(keySignature: DBusSignature, valueSignature: DBusSignature, [DBusDictEntry])
    /// `(…)`; at least one field.
    case structure([DBusValue])
    /// `v`.
    case variant(DBusValue)

    /// The D-Bus signature of this value (one complete type).
    public var signature: DBusSignature {
        DBusSignature(unchecked: signatureString)
    }

    var signatureString: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let e, _): "a" + e.rawValue
        case .dictionary(let k, let v, _): "a{" + k.rawValue + v.rawValue + "}"
        case .structure(let fields): "(" + fields.map(\.signatureString).joined() + ")"
        case .variant: "v"
        }
    }

    /// Checks that the signature is one valid complete type (nesting limits included).
    package func validateSignature() throws(DBusError) {
        let sig = signatureString
        guard sig.utf8.count <= 255, sig.withCString({ dbus_signature_validate_single($0, nil) }) != 0 else {
            throw DBusError(name: DBusError.invalidSignatureName,
                            message: "value of type '\(sig.prefix(80))' is not marshallable (too deeply nested or too long)")
        }
    }

    /// Checks that the value can be marshalled (consistent element types, valid strings, nesting
    /// limits). libdbus aborts the process on such programming errors, so we check first.
    package func validate(depth: Int = 0) throws(DBusError) {
        guard depth <= 64 else { throw DBusError.invalidArgs("D-Bus value nested deeper than 64 containers") }
        switch self {
        case .string(let s):
            guard !s.utf8.contains(0), s.withCString({ dbus_validate_utf8($0, nil) }) != 0 else {
                throw DBusError.invalidArgs("D-Bus strings must be UTF-8 without NUL characters: \(s.debugDescription)")
            }
        case .unixFD(let fd):
            guard fd.rawValue >= 0 else { throw DBusError.invalidArgs("the unix fd was taken (take()) and is no longer valid") }
        case .array(let e, let elements):
            guard e.isSingleCompleteType, !e.rawValue.hasPrefix("{") else {
                throw DBusError.invalidArgs("array element signature '\(e)' is not a single complete type")
            }
            for el in elements {
                guard el.signatureString == e.rawValue else {
                    throw DBusError.invalidArgs("array of '\(e)' contains an element of type '\(el.signature)'")
                }
                try el.validate(depth: depth + 1)
            }
        case .dictionary(let k, let v, let entries):
            guard DBusSignature.isBasic(k), v.isSingleCompleteType else {
                throw DBusError.invalidArgs("dictionary key '\(k)' must be a basic type and value '\(v)' one complete type")
            }
            for entry in entries {
                guard entry.key.signatureString == k.rawValue, entry.value.signatureString == v.rawValue else {
                    throw DBusError.invalidArgs("dictionary a{\(k)\(v)} contains an entry of type {\(entry.key.signature)\(entry.value.signature)}")
                }
                try entry.value.validate(depth: depth + 2)
                try entry.key.validate(depth: depth + 2)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidArgs("D-Bus structures must have at least one field") }
            for f in fields { try f.validate(depth: depth + 1) }
        case .variant(let inner):
            try inner.validateSignature()
            try inner.validate(depth: depth + 1)
        default:
            break
        }
    }
}

extension DBusValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "int32 \(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "double \(v)"
        case .string(let v): v.debugDescription
        case .objectPath(let v): "objpath \(v)"
        case .signature(let v): "signature \(v)"
        case .unixFD(let v): "\(v)"
        case .bytes(let b): "bytes [" + b.map { String($0, radix: 16) }.joined(separator: " ") + "]"
        case .array(_, let els): "[" + els.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let es): "{" + es.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fs): "(" + fs.map(\.description).joined(separator: ", ") + ")"
        case .variant(let v): "<\(v)>"
        }
    }
}

// MARK: - Convenience constructors and accessors

extension DBusValue {
    /// `a{sv}` from a Swift dictionary (entries sorted by key for a stable wire order).
    public static func stringVariantDictionary(_ dict: [String: DBusValue]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v",
                    dict.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
    }

    /// `as` from Swift strings.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(elementSignature: "s", strings.map(DBusValue.string))
    }

    /// The value inside any number of variant wrappers.
    public var unwrappingVariants: DBusValue {
        var v = self
        while case .variant(let inner) = v { v = inner }
        return v
    }

    /// Throws unless this is a `s` (or `o`/`g`, whose text is returned). Variants are unwrapped.
    public func string() throws(DBusError) -> String {
        switch unwrappingVariants {
        case .string(let s): return s
        case .objectPath(let p): return p.rawValue
        case .signature(let g): return g.rawValue
        default: throw DBusError.typeMismatch(expected: "s", got: self)
        }
    }

    public func objectPath() throws(DBusError) -> DBusObjectPath {
        if case .objectPath(let p) = unwrappingVariants { return p }
        throw DBusError.typeMismatch(expected: "o", got: self)
    }

    public func bool() throws(DBusError) -> Bool {
        if case .boolean(let b) = unwrappingVariants { return b }
        throw DBusError.typeMismatch(expected: "b", got: self)
    }

    /// Any integer type (`y n q i u x t`) that fits into `Int64`; throws otherwise.
    public func integer() throws(DBusError) -> Int64 {
        switch unwrappingVariants {
        case .byte(let v): return Int64(v)
        case .int16(let v): return Int64(v)
        case .uint16(let v): return Int64(v)
        case .int32(let v): return Int64(v)
        case .uint32(let v): return Int64(v)
        case .int64(let v): return v
        case .uint64(let v):
            guard let r = Int64(exactly: v) else { throw DBusError.typeMismatch(expected: "x", got: self) }
            return r
        default: throw DBusError.typeMismatch(expected: "integer", got: self)
        }
    }

    public func double() throws(DBusError) -> Double {
        if case .double(let d) = unwrappingVariants { return d }
        throw DBusError.typeMismatch(expected: "d", got: self)
    }

    /// `ay` as bytes (also accepts an array of `y` values).
    public func bytes() throws(DBusError) -> [UInt8] {
        switch unwrappingVariants {
        case .bytes(let b): return b
        case .array(let e, let els) where e.rawValue == "y":
            return els.compactMap { if case .byte(let b) = $0 { b } else { nil } }
        default: throw DBusError.typeMismatch(expected: "ay", got: self)
        }
    }

    /// The elements of any array (`ay` yields `.byte` elements; dictionaries yield `(k, v)` structs).
    public func array() throws(DBusError) -> [DBusValue] {
        switch unwrappingVariants {
        case .array(_, let els): return els
        case .bytes(let b): return b.map(DBusValue.byte)
        case .dictionary(_, _, let es): return es.map { .structure([$0.key, $0.value]) }
        default: throw DBusError.typeMismatch(expected: "a*", got: self)
        }
    }

    /// `as` (or `ao`) as Swift strings.
    public func stringArray() throws(DBusError) -> [String] {
        var out: [String] = []
        for el in try array() { out.append(try el.string()) }
        return out
    }

    /// The fields of a structure.
    public func structure() throws(DBusError) -> [DBusValue] {
        if case .structure(let f) = unwrappingVariants { return f }
        throw DBusError.typeMismatch(expected: "(…)", got: self)
    }

    /// The entries of any dictionary, in wire order.
    public func dictionaryEntries() throws(DBusError) -> [DBusDictEntry] {
        switch unwrappingVariants {
        case .dictionary(_, _, let es): return es
        case .array(_, let els) where els.isEmpty: return []
        default: throw DBusError.typeMismatch(expected: "a{..}", got: self)
        }
    }

    /// `a{sv}` (or any `a{s*}`) as a Swift dictionary; values keep their variant unwrapped.
    public func stringVariantDictionary() throws(DBusError) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        guard let entries = try? dictionaryEntries() else { throw DBusError.typeMismatch(expected: "a{sv}", got: self) }
        for e in entries {
            guard case .string(let k) = e.key else { throw DBusError.typeMismatch(expected: "a{sv}", got: self) }
            if case .variant(let inner) = e.value { out[k] = inner } else { out[k] = e.value }
        }
        return out
    }

    /// `a{sa{sv}}` (interfaces and properties) as nested Swift dictionaries.
    public func interfacesAndProperties() throws(DBusError) -> [String: [String: DBusValue]] {
        var out: [String: [String: DBusValue]] = [:]
        guard let entries = try? dictionaryEntries() else { throw DBusError.typeMismatch(expected: "a{sa{sv}}", got: self) }
        for e in entries {
            out[try e.key.string()] = try e.value.stringVariantDictionary()
        }
        return out
    }

    /// `a{oa{sa{sv}}}` (the reply of `GetManagedObjects`) as nested Swift dictionaries.
    public func managedObjects() throws(DBusError) -> [DBusObjectPath: [String: [String: DBusValue]]] {
        var out: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
        guard let entries = try? dictionaryEntries() else { throw DBusError.typeMismatch(expected: "a{oa{sa{sv}}}", got: self) }
        for e in entries {
            out[try e.key.objectPath()] = try e.value.interfacesAndProperties()
        }
        return out
    }

    /// The unix fd of an `h` value.
    public func unixFD() throws(DBusError) -> DBusUnixFD {
        if case .unixFD(let fd) = unwrappingVariants { return fd }
        throw DBusError.typeMismatch(expected: "h", got: self)
    }
}

// MARK: - Swift types ⇄ DBusValue

/// A Swift type with a fixed D-Bus type.
public protocol DBusValueConvertible: Sendable {
    /// The D-Bus signature of every value of this type.
    static var dbusSignature: DBusSignature { get }
    /// The value as a `DBusValue`.
    var dbusValue: DBusValue { get }
    /// Converts back, throwing `DBusError` (InvalidArgs) on a type mismatch.
    init(dbusValue: DBusValue) throws(DBusError)
}

extension UInt8: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "y" }
    public var dbusValue: DBusValue { .byte(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .byte(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "y", got: v) }
        self = x
    }
}
extension Bool: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "b" }
    public var dbusValue: DBusValue { .boolean(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) { self = try v.bool() }
}
extension Int16: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "n" }
    public var dbusValue: DBusValue { .int16(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .int16(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "n", got: v) }
        self = x
    }
}
extension UInt16: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "q" }
    public var dbusValue: DBusValue { .uint16(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .uint16(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "q", got: v) }
        self = x
    }
}
extension Int32: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "i" }
    public var dbusValue: DBusValue { .int32(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .int32(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "i", got: v) }
        self = x
    }
}
extension UInt32: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "u" }
    public var dbusValue: DBusValue { .uint32(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .uint32(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "u", got: v) }
        self = x
    }
}
extension Int64: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "x" }
    public var dbusValue: DBusValue { .int64(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .int64(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "x", got: v) }
        self = x
    }
}
extension UInt64: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "t" }
    public var dbusValue: DBusValue { .uint64(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .uint64(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "t", got: v) }
        self = x
    }
}
extension Double: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "d" }
    public var dbusValue: DBusValue { .double(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) { self = try v.double() }
}
extension String: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "s" }
    public var dbusValue: DBusValue { .string(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .string(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "s", got: v) }
        self = x
    }
}
extension DBusObjectPath: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "o" }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) { self = try v.objectPath() }
}
extension DBusSignature: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "g" }
    public var dbusValue: DBusValue { .signature(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        guard case .signature(let x) = v.unwrappingVariants else { throw DBusError.typeMismatch(expected: "g", got: v) }
        self = x
    }
}
/// `DBusValue` itself maps to a variant (`v`): `[String: DBusValue]` is `a{sv}`.
extension DBusValue: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { "v" }
    public var dbusValue: DBusValue { .variant(self) }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        if case .variant(let inner) = v { self = inner } else { self = v }
    }
}
extension Array: DBusValueConvertible where Element: DBusValueConvertible {
    public static var dbusSignature: DBusSignature { DBusSignature(unchecked: "a" + Element.dbusSignature.rawValue) }
    public var dbusValue: DBusValue {
        if Element.self == UInt8.self { return .bytes(self as! [UInt8]) }
        return .array(elementSignature: Element.dbusSignature, map(\.dbusValue))
    }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        if Element.self == UInt8.self {
            self = try v.bytes() as! [Element]
            return
        }
        var out: [Element] = []
        for el in try v.array() { out.append(try Element(dbusValue: el)) }
        self = out
    }
}
extension Dictionary: DBusValueConvertible where Key: DBusValueConvertible, Value: DBusValueConvertible {
    public static var dbusSignature: DBusSignature {
        DBusSignature(unchecked: "a{" + Key.dbusSignature.rawValue + Value.dbusSignature.rawValue + "}")
    }
    public var dbusValue: DBusValue {
        let entries = map { DBusDictEntry($0.key.dbusValue, $0.value.dbusValue) }
        return .dictionary(keySignature: Key.dbusSignature, valueSignature: Value.dbusSignature,
                           entries.sorted { $0.key.description < $1.key.description })
    }
    public init(dbusValue v: DBusValue) throws(DBusError) {
        var out: [Key: Value] = [:]
        for e in try v.dictionaryEntries() { out[try Key(dbusValue: e.key)] = try Value(dbusValue: e.value) }
        self = out
    }
}
