import Foundation
import TOMLKit

/// A configuration value.
public enum ConfigValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case strings([String])

    /// The value as TOML source text.
    public var description: String {
        switch self {
        case .string(let s): return tomlQuote(s)
        case .int(let i): return String(i)
        case .double(let d): return d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : String(d)
        case .bool(let b): return b ? "true" : "false"
        case .strings(let a): return "[" + a.map(tomlQuote).joined(separator: ", ") + "]"
        }
    }
}

private func tomlQuote(_ s: String) -> String {
    var out = "\""
    for ch in s.unicodeScalars {
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if ch.value < 0x20 || ch.value == 0x7F {
                out += String(format: "\\u%04X", ch.value)
            } else {
                out.unicodeScalars.append(ch)
            }
        }
    }
    return out + "\""
}

/// One configuration key: its name in the TOML file (`section.key`), its type, default and meaning.
///
/// The table of keys drives the file parser, the command-line flags (`section.key` is also
/// `--section-key`), `--print-config` and `--help`, so adding a key needs no other code.
public struct ConfigKey: Sendable {
    public enum Kind: String, Sendable {
        case string, int, double, bool, strings
    }
    public let name: String
    public let kind: Kind
    public let defaultValue: ConfigValue
    public let help: String
    /// Returns a sentence saying what is wrong with a value, or nil when it is fine.
    public let validate: @Sendable (ConfigValue) -> String?

    public init(_ name: String, _ defaultValue: ConfigValue, _ help: String,
                validate: @escaping @Sendable (ConfigValue) -> String? = { _ in nil }) {
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
        self.validate = validate
        switch defaultValue {
        case .string: kind = .string
        case .int: kind = .int
        case .double: kind = .double
        case .bool: kind = .bool
        case .strings: kind = .strings
        }
    }

    /// The command-line flag for this key: `socket.max_connections` → `--socket-max-connections`.
    public var flag: String {
        "--" + name.replacingOccurrences(of: ".", with: "-").replacingOccurrences(of: "_", with: "-")
    }

    var section: String { String(name.split(separator: ".", maxSplits: 1)[0]) }
    var leaf: String { String(name.split(separator: ".", maxSplits: 1)[1]) }
}

private func positiveInt(_ v: ConfigValue) -> String? {
    if case .int(let i) = v, i <= 0 { return "must be a positive whole number" }
    return nil
}

private func positiveDouble(_ v: ConfigValue) -> String? {
    if case .double(let d) = v, !(d > 0) { return "must be a positive number of seconds" }
    return nil
}

private func nonNegativeInt(_ v: ConfigValue) -> String? {
    if case .int(let i) = v, i < 0 { return "must be 0 or more" }
    return nil
}

/// Every key roombridged understands.
public let configKeys: [ConfigKey] = [
    ConfigKey("socket.path", .string("/run/roombridge/roombridge.sock"),
              "Path of the Varlink socket (ignored when systemd passes a socket).") { v in
        if case .string(let s) = v, !s.hasPrefix("/") { return "must be an absolute path" }
        return nil
    },
    ConfigKey("socket.mode", .string("0660"), "Permissions of the socket file, octal.") { v in
        if case .string(let s) = v, mode_t(s, radix: 8) == nil || s.count > 4 {
            return "must be an octal mode such as \"0660\""
        }
        return nil
    },
    ConfigKey("socket.group", .string("roombridge"),
              "Group that owns the socket file; empty leaves the daemon's own group."),
    ConfigKey("socket.max_connections", .int(64), "Clients connected at once; more are refused.",
              validate: positiveInt),
    ConfigKey("socket.max_connections_per_user", .int(16),
              "Connections one user may hold at once (root and auth.group members are not counted).", validate: positiveInt),
    ConfigKey("socket.reserved_connections", .int(8),
              "Connections kept free for root and auth.group members, so they can always connect.",
              validate: nonNegativeInt),
    ConfigKey("socket.idle_timeout", .double(60),
              "Seconds a connection with no call in progress (a Watch is one) may stay silent.",
              validate: positiveDouble),
    ConfigKey("socket.max_message_size", .int(65536), "Largest message a client may send, in bytes.",
              validate: positiveInt),
    ConfigKey("socket.stall_timeout", .double(10),
              "Seconds a client may take to finish a message it started.", validate: positiveDouble),
    ConfigKey("auth.group", .string("roombridge"),
              "Group whose members (and root) may call methods that change things."),
    ConfigKey("log.level", .string("info"),
              "trace, debug, info, notice, warning, error or critical.") { v in
        if case .string(let s) = v, LogLevelName(rawValue: s) == nil {
            return "must be one of trace, debug, info, notice, warning, error, critical"
        }
        return nil
    },
    ConfigKey("state.subscriber_buffer", .int(1024),
              "Events a Watch client may fall behind before it is dropped.", validate: positiveInt),
    ConfigKey("database.path", .string("/var/lib/roombridge/roombridge.sqlite"),
              "SQLite database file (created on first start).") { v in
        if case .string(let s) = v, s.isEmpty { return "must not be empty" }
        return nil
    },
    ConfigKey("database.integrity_check_hours", .double(24),
              "Hours between full database integrity checks (one also runs at every start).",
              validate: positiveDouble),
    ConfigKey("nfc.enabled", .bool(true), "Poll NFC readers."),
    ConfigKey("nfc.readers", .strings([]),
              "Readers as \"name=connstring\" (e.g. \"front=pn532_uart:/dev/nfc/pn532\"); empty uses libnfc's own configuration and scan."),
    ConfigKey("nfc.modulations", .strings(["iso14443a", "felica212"]),
              "Modulations polled: iso14443a (NTAG, Ultralight, ISO-A badges), felica212, felica424.") { v in
        if case .strings(let a) = v {
            if a.isEmpty { return "must name at least one modulation" }
            if let bad = a.first(where: { !["iso14443a", "felica212", "felica424"].contains($0) }) {
                return "has unknown modulation \"\(bad)\"; use iso14443a, felica212 or felica424"
            }
        }
        return nil
    },
    ConfigKey("curtain.enabled", .bool(true), "Drive a BLE curtain controller through BlueZ."),
    ConfigKey("curtain.address", .string(""),
              "Bluetooth address of the curtain controller; empty picks the first one advertising the curtain service."),
    ConfigKey("curtain.adapter", .string(""), "Bluetooth adapter (e.g. hci0); empty picks the first powered one."),
    ConfigKey("curtain.notify", .string("start-notify"),
              "How to subscribe to the curtain's notifications: start-notify (PropertiesChanged signals) or "
              + "acquire-notify (a socket from BlueZ's AcquireNotify, where offered).") { v in
        if case .string(let s) = v, !["start-notify", "acquire-notify"].contains(s) {
            return "must be start-notify or acquire-notify"
        }
        return nil
    },
    ConfigKey("lending.arm_seconds", .int(30), "How long a badge tap arms a lend session.",
              validate: positiveInt),
    ConfigKey("lending.loan_days", .int(0), "Default loan period in days; 0 means no due date.",
              validate: nonNegativeInt),
    ConfigKey("lending.location", .string(""),
              "Name of this kiosk, stored with each rental; empty uses the host name."),
]

/// The log levels accepted in `log.level`.
public enum LogLevelName: String, Sendable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
}

/// What is wrong with the configuration, naming the key and where it came from.
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The effective configuration: defaults, then the file, then flags.
public struct DaemonConfig: Sendable, Equatable {
    public private(set) var values: [String: ConfigValue]

    /// The defaults for every key.
    public init() {
        values = Dictionary(uniqueKeysWithValues: configKeys.map { ($0.name, $0.defaultValue) })
    }

    public subscript(key: String) -> ConfigValue {
        guard let v = values[key] else { preconditionFailure("unknown config key \(key)") }
        return v
    }

    public func string(_ key: String) -> String {
        if case .string(let s) = self[key] { return s }
        preconditionFailure("\(key) is not a string")
    }

    public func int(_ key: String) -> Int {
        if case .int(let i) = self[key] { return i }
        preconditionFailure("\(key) is not an int")
    }

    public func double(_ key: String) -> Double {
        if case .double(let d) = self[key] { return d }
        preconditionFailure("\(key) is not a double")
    }

    public func bool(_ key: String) -> Bool {
        if case .bool(let b) = self[key] { return b }
        preconditionFailure("\(key) is not a bool")
    }

    public func strings(_ key: String) -> [String] {
        if case .strings(let a) = self[key] { return a }
        preconditionFailure("\(key) is not a list")
    }

    /// Sets one key's value as it is (already validated, e.g. taken from another configuration).
    public mutating func replace(_ key: String, with value: ConfigValue) {
        precondition(values[key] != nil, "unknown config key \(key)")
        values[key] = value
    }

    /// Names of the keys whose values differ from `other`'s, sorted.
    public func changedKeys(since other: DaemonConfig) -> [String] {
        values.keys.filter { values[$0] != other.values[$0] }.sorted()
    }

    /// Keys a running roombridged applies when it reloads its configuration (SIGHUP); a change
    /// to any other key takes effect at the next restart.
    public static func isReloadable(_ key: String) -> Bool {
        key == "log.level" || key.hasPrefix("lending.")
    }

    mutating func set(_ key: ConfigKey, _ value: ConfigValue, origin: String) throws(ConfigError) {
        if let problem = key.validate(value) {
            throw ConfigError("\(origin): \(key.name) \(problem)")
        }
        values[key.name] = value
    }

    /// Applies a TOML document on top of the current values.
    /// - Parameter file: the file's path, used in error messages.
    public mutating func apply(toml text: String, file: String) throws(ConfigError) {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let e as TOMLParseError {
            throw ConfigError("\(file):\(e.source.begin.line):\(e.source.begin.column): \(e.description)")
        } catch {
            throw ConfigError("\(file): \(error)")
        }
        let byName = Dictionary(uniqueKeysWithValues: configKeys.map { ($0.name, $0) })
        let sections = Set(configKeys.map(\.section))
        for section in table.keys.sorted() {
            guard let sub = table[section]?.table else {
                let line = Self.line(ofKey: section, section: nil, in: text)
                if sections.contains(section) {
                    throw ConfigError("\(file):\(line): \(section) must be a table ([\(section)])")
                }
                throw ConfigError("\(file):\(line): unknown key \(section); known sections: \(sections.sorted().joined(separator: ", "))")
            }
            for leaf in sub.keys.sorted() {
                let name = section + "." + leaf
                let line = Self.line(ofKey: leaf, section: section, in: text)
                guard let key = byName[name] else {
                    let known = configKeys.filter { $0.section == section }.map(\.name)
                    let hint = known.isEmpty ? "known sections: \(sections.sorted().joined(separator: ", "))"
                        : "known keys here: \(known.joined(separator: ", "))"
                    throw ConfigError("\(file):\(line): unknown key \(name); \(hint)")
                }
                let origin = "\(file):\(line)"
                guard let raw = sub[leaf], let value = Self.convert(raw, to: key.kind) else {
                    throw ConfigError("\(origin): \(name) must be \(key.kind.article)")
                }
                try set(key, value, origin: origin)
            }
        }
    }

    private static func convert(_ raw: any TOMLValueConvertible, to kind: ConfigKey.Kind) -> ConfigValue? {
        switch kind {
        case .string:
            return raw.type == .string ? raw.string.map(ConfigValue.string) : nil
        case .int:
            return raw.type == .int ? raw.int.map(ConfigValue.int) : nil
        case .double:
            if raw.type == .double { return raw.double.map(ConfigValue.double) }
            if raw.type == .int { return raw.int.map { .double(Double($0)) } }
            return nil
        case .bool:
            return raw.type == .bool ? raw.bool.map(ConfigValue.bool) : nil
        case .strings:
            guard raw.type == .array, let array = raw.array else { return nil }
            var out: [String] = []
            for element in array {
                guard element.type == .string, let s = element.string else { return nil }
                out.append(s)
            }
            return .strings(out)
        }
    }

    /// The 1-based line where `key` is set inside `[section]` (or at top level), or 1 if not found.
    static func line(ofKey key: String, section: String?, in text: String) -> Int {
        var current: String? = nil
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                let name = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] \t"))
                current = name.split(separator: "#")[0].trimmingCharacters(in: .whitespaces)
                if section == nil && current == key { return index + 1 }
                continue
            }
            let candidates = section.map { [($0, key), (nil, "\($0).\(key)")] } ?? [(nil, key)]
            for (sec, k) in candidates where current == sec || (sec == nil && current == nil) {
                if line.hasPrefix(k) {
                    let rest = line.dropFirst(k.count).trimmingCharacters(in: .whitespaces)
                    if rest.hasPrefix("=") { return index + 1 }
                }
            }
        }
        return 1
    }

    /// Applies one command-line flag's value.
    public mutating func apply(flag key: ConfigKey, value text: String, replacing: Bool) throws(ConfigError) {
        let origin = "flag \(key.flag)"
        let value: ConfigValue
        switch key.kind {
        case .string:
            value = .string(text)
        case .int:
            guard let i = Int(text) else { throw ConfigError("\(origin): \(key.name) must be a whole number, got \"\(text)\"") }
            value = .int(i)
        case .double:
            guard let d = Double(text), d.isFinite else { throw ConfigError("\(origin): \(key.name) must be a number, got \"\(text)\"") }
            value = .double(d)
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1", "on": value = .bool(true)
            case "false", "no", "0", "off": value = .bool(false)
            default: throw ConfigError("\(origin): \(key.name) must be true or false, got \"\(text)\"")
            }
        case .strings:
            let existing = replacing ? [] : strings(key.name)
            value = .strings(existing + [text])
        }
        try set(key, value, origin: origin)
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
            out += "\(key.leaf) = \(self[key.name])\n"
        }
        return out
    }
}

extension ConfigKey.Kind {
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

/// The daemon's command line: `--config PATH`, `--print-config`, `--help`, `--version`, and a flag per key.
public struct DaemonCommandLine: Sendable, Equatable {
    public static let defaultConfigPath = "/etc/roombridge/roombridged.toml"

    public var configPath: String = DaemonCommandLine.defaultConfigPath
    /// True when `--config` was given: the file must then exist.
    public var configPathExplicit = false
    public var printConfig = false
    public var showHelp = false
    public var showVersion = false
    /// Flag values in order, to apply after the file.
    public var overrides: [(key: String, value: String)] = []

    public static func == (a: Self, b: Self) -> Bool {
        a.configPath == b.configPath && a.configPathExplicit == b.configPathExplicit
            && a.printConfig == b.printConfig && a.showHelp == b.showHelp && a.showVersion == b.showVersion
            && a.overrides.map(\.key) == b.overrides.map(\.key) && a.overrides.map(\.value) == b.overrides.map(\.value)
    }

    public init() {}

    /// Parses arguments (without the program name).
    public init(arguments: [String]) throws(ConfigError) {
        let byFlag = Dictionary(uniqueKeysWithValues: configKeys.map { ($0.flag, $0) })
        var i = 0
        func value(for flag: String, inline: String?) throws(ConfigError) -> String {
            if let inline { return inline }
            i += 1
            guard i < arguments.count else { throw ConfigError("flag \(flag) needs a value; see roombridged --help") }
            return arguments[i]
        }
        while i < arguments.count {
            let arg = arguments[i]
            var flag = arg
            var inline: String? = nil
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                flag = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            switch flag {
            case "--config", "-c":
                configPath = try value(for: flag, inline: inline)
                configPathExplicit = true
            case "--print-config":
                printConfig = true
            case "--help", "-h":
                showHelp = true
            case "--version":
                showVersion = true
            default:
                if let key = byFlag[flag] {
                    if key.kind == .bool && inline == nil {
                        overrides.append((key.name, "true"))
                    } else {
                        overrides.append((key.name, try value(for: flag, inline: inline)))
                    }
                } else if flag.hasPrefix("--no-"), let key = byFlag["--" + flag.dropFirst(5)], key.kind == .bool {
                    overrides.append((key.name, "false"))
                } else {
                    throw ConfigError("unknown flag \(arg); see roombridged --help")
                }
            }
            i += 1
        }
    }

    /// Loads the file (if present, or required when `--config` was given) and applies the flags.
    public func load(readFile: (String) throws -> String? = DaemonCommandLine.readFileIfPresent) throws(ConfigError) -> DaemonConfig {
        var config = DaemonConfig()
        let text: String?
        do {
            text = try readFile(configPath)
        } catch {
            throw ConfigError("\(configPath): cannot read the configuration file: \(error)")
        }
        if let text {
            try config.apply(toml: text, file: configPath)
        } else if configPathExplicit {
            throw ConfigError("\(configPath): no such configuration file; check the --config path")
        }
        let byName = Dictionary(uniqueKeysWithValues: configKeys.map { ($0.name, $0) })
        var seen = Set<String>()
        for (name, value) in overrides {
            guard let key = byName[name] else { continue }
            try config.apply(flag: key, value: value, replacing: !seen.contains(name))
            seen.insert(name)
        }
        return config
    }

    /// Reads a file; nil when it does not exist.
    public static func readFileIfPresent(_ path: String) throws -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let s = String(data: data, encoding: .utf8) else {
            throw ConfigError("\(path): the file is not UTF-8 text")
        }
        return s
    }

    /// `roombridged --help`.
    public static func helpText() -> String {
        var out = """
            USAGE: roombridged [--config PATH] [--print-config] [--KEY VALUE ...]

            Bridges a room's NFC readers and BLE curtain to a Varlink socket.

            OPTIONS:
              -c, --config PATH   Configuration file (default \(defaultConfigPath); optional unless given)
              --print-config      Print the effective configuration as TOML and exit
              --version           Print the version and exit
              -h, --help          Show this help

            CONFIGURATION (each key of the file is also a flag; flags win):

            """
        for key in configKeys {
            let placeholder = key.kind == .bool ? "[=BOOL]" : " " + key.kind.rawValue.uppercased()
            out += "  \(key.flag)\(placeholder)\n      \(key.help) [\(key.name), default \(key.defaultValue)]"
            if key.kind == .strings { out += " (repeat the flag for several)" }
            if key.kind == .bool { out += " (--no-\(key.flag.dropFirst(2)) turns it off)" }
            out += "\n"
        }
        return out
    }
}
