import Foundation

/// A type a configuration key can hold: `String`, `Int`, `Double`, `Bool` or `[String]`.
public protocol ConfigValueType: Sendable, Equatable {
    /// The kind of ``ConfigValue`` that holds this type.
    static var configKind: AnyConfigKey.Kind { get }
    /// The value a ``ConfigValue`` holds, or nil when it holds another kind.
    init?(configValue: ConfigValue)
    var configValue: ConfigValue { get }
}

extension String: ConfigValueType {
    public static var configKind: AnyConfigKey.Kind { .string }
    public init?(configValue: ConfigValue) {
        guard case .string(let s) = configValue else { return nil }
        self = s
    }
    public var configValue: ConfigValue { .string(self) }
}

extension Int: ConfigValueType {
    public static var configKind: AnyConfigKey.Kind { .int }
    public init?(configValue: ConfigValue) {
        guard case .int(let i) = configValue else { return nil }
        self = i
    }
    public var configValue: ConfigValue { .int(self) }
}

extension Double: ConfigValueType {
    public static var configKind: AnyConfigKey.Kind { .double }
    public init?(configValue: ConfigValue) {
        guard case .double(let d) = configValue else { return nil }
        self = d
    }
    public var configValue: ConfigValue { .double(self) }
}

extension Bool: ConfigValueType {
    public static var configKind: AnyConfigKey.Kind { .bool }
    public init?(configValue: ConfigValue) {
        guard case .bool(let b) = configValue else { return nil }
        self = b
    }
    public var configValue: ConfigValue { .bool(self) }
}

extension Array: ConfigValueType where Element == String {
    public static var configKind: AnyConfigKey.Kind { .strings }
    public init?(configValue: ConfigValue) {
        guard case .strings(let a) = configValue else { return nil }
        self = a
    }
    public var configValue: ConfigValue { .strings(self) }
}

/// One configuration key, typed: its TOML path (`section.key`, which is also its name), the type of its
/// value, its default, what values it accepts and what it means. Every key is declared once, as a static
/// property (`ConfigKey.socketGroup`, in ConfigKeys.swift), and read as `config[.socketGroup]`: a key that
/// is not declared does not compile, and a read never fails at run time.
///
/// The table ``configKeys`` lists the keys, type-erased (``AnyConfigKey``), for the parts that work by
/// name: the TOML parser, the flags (`--section-key`), `--print-config`, `--help` and the reload's report.
public struct ConfigKey<Value: ConfigValueType>: Sendable {
    /// `section.key`: the key's path in the TOML file.
    public let name: String
    public let defaultValue: Value
    public let help: String
    /// Returns a sentence saying what is wrong with a value, or nil when it is fine.
    public let validate: @Sendable (Value) -> String?

    init(_ name: String, _ defaultValue: Value, _ help: String,
         validate: @escaping @Sendable (Value) -> String? = { _ in nil }) {
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
        self.validate = validate
    }

    /// The command-line flag for this key: `socket.max_connections` → `--socket-max-connections`.
    public var flag: String { AnyConfigKey.flag(forName: name) }

    /// The key without its type, as the table ``configKeys`` holds it.
    public var erased: AnyConfigKey {
        let validate = self.validate
        return AnyConfigKey(name: name, kind: Value.configKind, defaultValue: defaultValue.configValue, help: help) { value in
            guard let typed = Value(configValue: value) else { return "must be \(Value.configKind.article)" }
            return validate(typed)
        }
    }
}

/// A configuration key without its type: what the TOML parser, the flags, `--print-config`, `--help`
/// and the reload (which names changed keys) work with. Made from a ``ConfigKey`` (``ConfigKey/erased``).
public struct AnyConfigKey: Sendable {
    public enum Kind: String, Sendable {
        case string, int, double, bool, strings
    }
    public let name: String
    public let kind: Kind
    public let defaultValue: ConfigValue
    public let help: String
    /// Returns a sentence saying what is wrong with a value, or nil when it is fine.
    public let validate: @Sendable (ConfigValue) -> String?

    init(name: String, kind: Kind, defaultValue: ConfigValue, help: String,
         validate: @escaping @Sendable (ConfigValue) -> String?) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
        self.validate = validate
    }

    public init<Value>(_ key: ConfigKey<Value>) { self = key.erased }

    /// The command-line flag for this key: `socket.max_connections` → `--socket-max-connections`.
    public var flag: String { Self.flag(forName: name) }

    static func flag(forName name: String) -> String {
        "--" + name.replacingOccurrences(of: ".", with: "-").replacingOccurrences(of: "_", with: "-")
    }

    /// The TOML table the key is in (`socket` of `socket.path`).
    public var section: String { String(name.prefix { $0 != "." }) }
    /// The key's name inside its table (`path` of `socket.path`).
    public var leaf: String { String(name.drop { $0 != "." }.dropFirst()) }
}

extension AnyConfigKey.Kind {
    var article: String {
        switch self {
        case .string: "a string"
        case .int: "a whole number"
        case .double: "a number"
        case .bool: "true or false"
        case .strings: "a list of strings"
        }
    }
}
