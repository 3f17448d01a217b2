import Foundation

/// The wire shape of a Decodable type: each top-level key it reads and whether the key is optional
/// (read with `decodeIfPresent`), found by decoding it from nothing: zeros, empty arrays, the first
/// case of each enum, and for a string the first of `strings` that its type accepts (an enum's raw
/// value, a time of day). Only the type's own keys count; nested types have their own IDL types.
enum WireShape {
    static func of<T: Decodable>(_ type: T.Type, strings: [String] = []) throws -> [String: Bool] {
        let keys = Keys(strings: [""] + strings)
        _ = try T(from: ShapeDecoder(keys: keys, codingPath: []))
        return keys.found
    }

    final class Keys {
        /// Key name → optional.
        var found: [String: Bool] = [:]
        /// The strings to try, and the one strings decode to now.
        let strings: [String]
        var string = ""
        init(strings: [String]) { self.strings = strings }
    }

    private static func firstCase<C: CaseIterable>(_: C.Type) -> Any? { C.allCases.first }

    /// A value of `T` for a required field: an enum's first case, else decoded from nothing with the
    /// first string it accepts.
    static func placeholder<T: Decodable>(_ type: T.Type, keys: Keys, codingPath: [any CodingKey]) throws -> T {
        if let c = T.self as? any CaseIterable.Type, let v = firstCase(c) as? T { return v }
        var firstError: (any Error)?
        for string in [keys.string] + keys.strings {
            keys.string = string
            do { return try T(from: ShapeDecoder(keys: keys, codingPath: codingPath)) } catch { firstError = firstError ?? error }
        }
        throw firstError ?? DecodingError.valueNotFound(T.self, .init(codingPath: codingPath, debugDescription: "no value"))
    }

    struct ShapeDecoder: Decoder {
        let keys: Keys
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Keyed<Key>(keys: keys, codingPath: codingPath))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(codingPath: codingPath) }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(keys: keys, codingPath: codingPath) }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let keys: Keys
        let codingPath: [any CodingKey]
        var allKeys: [Key] { [] }

        private func note(_ key: Key, optional: Bool) {
            // Only the type's own level; what a nested type reads belongs to its own IDL type.
            guard codingPath.isEmpty else { return }
            keys.found[key.stringValue] = optional && (keys.found[key.stringValue] ?? true)
        }
        func contains(_ key: Key) -> Bool { note(key, optional: true); return false }
        func decodeNil(forKey key: Key) throws -> Bool { note(key, optional: true); return true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            note(key, optional: false)
            return try WireShape.placeholder(type, keys: keys, codingPath: codingPath + [key])
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            note(key, optional: true)
            return nil
        }
        func nestedContainer<N: CodingKey>(keyedBy type: N.Type, forKey key: Key) throws -> KeyedDecodingContainer<N> {
            note(key, optional: false)
            return KeyedDecodingContainer(Keyed<N>(keys: keys, codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            note(key, optional: false)
            return Unkeyed(codingPath: codingPath + [key])
        }
        func superDecoder() throws -> any Decoder { ShapeDecoder(keys: keys, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ShapeDecoder(keys: keys, codingPath: codingPath + [key]) }
    }

    /// An empty array.
    struct Unkeyed: UnkeyedDecodingContainer {
        let codingPath: [any CodingKey]
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        private func end() -> DecodingError { .valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "empty")) }
        mutating func decodeNil() throws -> Bool { throw end() }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
        mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) throws -> KeyedDecodingContainer<N> { throw end() }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end() }
        mutating func superDecoder() throws -> any Decoder { throw end() }
    }

    /// Zero, false, "" — or an enum's first case, or a nested value decoded from nothing.
    struct Single: SingleValueDecodingContainer {
        let keys: Keys
        let codingPath: [any CodingKey]
        func decodeNil() -> Bool { false }
        func decode(_ type: Bool.Type) throws -> Bool { false }
        func decode(_ type: String.Type) throws -> String { keys.string }
        func decode(_ type: Double.Type) throws -> Double { 0 }
        func decode(_ type: Float.Type) throws -> Float { 0 }
        func decode(_ type: Int.Type) throws -> Int { 0 }
        func decode(_ type: Int8.Type) throws -> Int8 { 0 }
        func decode(_ type: Int16.Type) throws -> Int16 { 0 }
        func decode(_ type: Int32.Type) throws -> Int32 { 0 }
        func decode(_ type: Int64.Type) throws -> Int64 { 0 }
        func decode(_ type: UInt.Type) throws -> UInt { 0 }
        func decode(_ type: UInt8.Type) throws -> UInt8 { 0 }
        func decode(_ type: UInt16.Type) throws -> UInt16 { 0 }
        func decode(_ type: UInt32.Type) throws -> UInt32 { 0 }
        func decode(_ type: UInt64.Type) throws -> UInt64 { 0 }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try WireShape.placeholder(type, keys: keys, codingPath: codingPath)
        }
    }
}
