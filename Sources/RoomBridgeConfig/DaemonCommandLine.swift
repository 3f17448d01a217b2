import Foundation

extension DaemonConfig {
    /// Applies one command-line flag's value.
    public mutating func apply(flag key: AnyConfigKey, value text: String, replacing: Bool) throws(ConfigError) {
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
            var existing: [String] = []
            if !replacing, case .strings(let current)? = values[key.name] { existing = current }
            value = .strings(existing + [text])
        }
        try set(key, value, origin: origin)
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
        } catch let error as ConfigError {
            throw error
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
        try config.validateCurtains(origin: configPath)
        return config
    }

    /// Reads a file; nil when it does not exist. Any readable file: `/dev/null` gives the defaults.
    public static func readFileIfPresent(_ path: String) throws(ConfigError) -> String? {
        try FileReading.configuration(path)
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
