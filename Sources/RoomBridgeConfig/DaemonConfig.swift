import Foundation
import RoomBridgeCore

/// What is wrong with the configuration, naming the key and where it came from.
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The effective configuration: defaults, then the file, then flags.
public struct DaemonConfig: Sendable, Equatable {
    /// Every key's value by name: the engine under the typed subscript, the parser and the flags; readers use
    /// ``subscript(_:)`` with a ``ConfigKey``; the reload works by name through ``describe(_:)`` and ``adopt(_:from:)``.
    private(set) var values: [String: ConfigValue]
    /// The `[curtains.NAME]` tables, sorted by name (empty: the `[curtain]` keys describe one curtain);
    /// see ``CurtainEntry/all(in:)``.
    public internal(set) var curtains: [CurtainEntry] = []
    /// The `[outbox.targets.NAME]` tables, sorted by name (empty: the outbox writes nothing).
    public internal(set) var outboxTargets: [OutboxTargetEntry] = []
    /// The `[curtain.groups]` table's groups, sorted by name (``CurtainGroup``).
    public internal(set) var curtainGroups: [CurtainGroup] = []

    /// The defaults for every key.
    public init() {
        values = Dictionary(uniqueKeysWithValues: configKeys.map { ($0.name, $0.defaultValue) })
    }

    /// A key's value: the file's or a flag's, else the key's default. Every declared key has one, so a
    /// read cannot fail; a key that is not declared does not compile (``ConfigKey``).
    public subscript<Value>(key: ConfigKey<Value>) -> Value {
        values[key.name].flatMap(Value.init(configValue:)) ?? key.defaultValue
    }

    /// Sets one key's value, checked as a value from the file would be.
    public mutating func set<Value>(_ key: ConfigKey<Value>, to value: Value) throws(ConfigError) {
        try set(key.erased, value.configValue, origin: "set")
    }

    /// The value of the key named `name` (`section.key`), untyped; nil when no key has that name.
    /// For this module's code that works by name; everything else reads typed keys.
    func value(named name: String) -> ConfigValue? { values[name] }

    /// Sets the value of the key named `name` as it is (already validated, e.g. taken from another
    /// configuration); throws when no key has that name or the value is of another kind.
    public mutating func replace(_ name: String, with value: ConfigValue) throws(ConfigError) {
        guard let key = configKeys.first(where: { $0.name == name }) else { throw ConfigError("unknown config key \(name)") }
        guard value.kind == key.kind else { throw ConfigError("\(name) must be \(key.kind.article)") }
        values[name] = value
    }

    /// A key's value as TOML text, for the log; `curtains` (the list of `[curtains.NAME]` tables) and
    /// `outbox.targets` as their names. Throws when no key has that name.
    public func describe(_ name: String) throws(ConfigError) -> String {
        if name == "outbox.targets" { return "[" + outboxTargets.map(\.name).joined(separator: ", ") + "]" }
        if name == "curtains" { return "[" + curtains.map(\.name).joined(separator: ", ") + "]" }
        if name == "curtain.groups" { return "[" + curtainGroups.map(\.name).joined(separator: ", ") + "]" }
        guard let value = values[name] else { throw ConfigError("unknown config key \(name)") }
        return "\(value)"
    }

    /// Takes one key's value (or with `curtains` the curtain list, with `outbox.targets` the targets) from
    /// `other`. Throws when no key has that name.
    public mutating func adopt(_ name: String, from other: DaemonConfig) throws(ConfigError) {
        switch name {
        case "curtains": curtains = other.curtains
        case "outbox.targets": outboxTargets = other.outboxTargets
        case "curtain.groups": curtainGroups = other.curtainGroups
        default:
            guard let value = other.values[name] else { throw ConfigError("unknown config key \(name)") }
            try replace(name, with: value)
        }
    }

    /// The kiosk's time zone (`lending.time_zone`), else the system's (`TZ`, `/etc/localtime`).
    public var kioskTimeZone: TimeZone {
        TimeZone(identifier: kioskTimeZoneName) ?? .current
    }

    /// The name of ``kioskTimeZone`` as people know it: `lending.time_zone` as written, else the
    /// system zone's (``systemTimeZoneName(environment:localtime:)``).
    public var kioskTimeZoneName: String {
        self[.lendingTimeZone].isEmpty ? Self.systemTimeZoneName() : self[.lendingTimeZone]
    }

    /// The system's time zone name as Foundation finds it (`TZ`, else the zone `/etc/localtime`
    /// links to, else UTC), read without making a `TimeZone`: in a process that links Foundation
    /// that loads ICU's data (2.8 MiB resident, measured by roombridge-bench), which a daemon that
    /// only reports the name does not need.
    public static func systemTimeZoneName(environment: [String: String] = ProcessInfo.processInfo.environment,
                                          localtime: String = "/etc/localtime") -> String {
        func zone(fromPath path: String) -> String? {
            guard let r = path.range(of: "zoneinfo/", options: .backwards) else { return nil }
            let name = String(path[r.upperBound...])
            return name.isEmpty ? nil : name
        }
        if var tz = environment["TZ"], !tz.isEmpty {
            if tz.hasPrefix(":") { tz.removeFirst() }
            return tz.hasPrefix("/") ? zone(fromPath: tz) ?? "UTC" : tz
        }
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: localtime), let name = zone(fromPath: target) {
            return name
        }
        return "UTC"
    }

    /// Names of the keys whose values differ from `other`'s, sorted; `curtains` when the curtain list differs.
    public func changedKeys(since other: DaemonConfig) -> [String] {
        (values.keys.filter { values[$0] != other.values[$0] } + (curtains != other.curtains ? ["curtains"] : [])
            + (outboxTargets != other.outboxTargets ? ["outbox.targets"] : [])
            + (curtainGroups != other.curtainGroups ? ["curtain.groups"] : [])).sorted()
    }

    /// Keys a running roombridged applies when it reloads its configuration (SIGHUP); a change
    /// to any other key takes effect at the next restart.
    public static func isReloadable(_ key: String) -> Bool {
        key == "log.level" || (key.hasPrefix("lending.") && key != "lending.time_zone") || key == "nfc.readers"
            || key == "outbox.targets"
            || (key.hasPrefix("curtain.") && key != "curtain.enabled") || key == "curtains"
    }

    mutating func set(_ key: AnyConfigKey, _ value: ConfigValue, origin: String) throws(ConfigError) {
        if let problem = key.validate(value) {
            throw ConfigError("\(origin): \(key.name) \(problem)")
        }
        values[key.name] = value
    }

    /// The effective configuration as a TOML document, with each key's meaning as a comment.
    public func renderTOML() -> String {
        var out = "# roombridged effective configuration\n"
        var section = ""
        for key in configKeys {
            if key.section != section {
                section = key.section
                out += "\n[\(section)]\n"
            }
            out += "# \(key.help)\n"
            out += "\(key.leaf) = \(values[key.name] ?? key.defaultValue)\n"
        }
        if !curtainGroups.isEmpty {
            out += "\n[curtain.groups]\n"
            for group in curtainGroups { out += "\(group.name) = \(ConfigValue.strings(group.curtains))\n" }
        }
        for entry in curtains {
            out += "\n[curtains.\(entry.name)]\n"
            if let a = entry.address { out += "address = \(ConfigValue.string(a))\n" }
            out += "profile = \(ConfigValue.string(entry.profile))\n"
            if let p = entry.pinFile { out += "pin_file = \(ConfigValue.string(p))\n" }
            if let p = entry.passwordFile { out += "password_file = \(ConfigValue.string(p))\n" }
        }
        for target in outboxTargets {
            out += "\n[outbox.targets.\(target.name)]\n"
            out += "url = \(ConfigValue.string(target.url))\nformat = \(ConfigValue.string(target.format))\n"
            out += "events = \(ConfigValue.strings(target.events))\ntimeout = \(ConfigValue.double(target.timeout))\n"
            if let p = target.secretFile { out += "secret_file = \(ConfigValue.string(p))\n" }
            if let p = target.tokenFile { out += "token_file = \(ConfigValue.string(p))\n" }
        }
        return out
    }
}
