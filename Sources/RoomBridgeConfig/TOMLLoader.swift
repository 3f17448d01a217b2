import Foundation
import RoomBridgeCore
import TOMLKit

/// Reading a TOML configuration file into a `DaemonConfig`.
extension DaemonConfig {
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
            if section == "curtains" {
                try applyCurtains(table[section], text: text, file: file)
                continue
            }
            guard let sub = table[section]?.table else {
                let line = Self.line(ofKey: section, section: nil, in: text)
                if sections.contains(section) {
                    throw ConfigError("\(file):\(line): \(section) must be a table ([\(section)])")
                }
                throw ConfigError("\(file):\(line): unknown key \(section); known sections: \(sections.sorted().joined(separator: ", "))")
            }
            for leaf in sub.keys.sorted() {
                if section == "outbox" && leaf == "targets" {
                    try applyOutboxTargets(sub[leaf], text: text, file: file)
                    continue
                }
                if section == "curtain" && leaf == "groups" {
                    try applyCurtainGroups(sub[leaf], text: text, file: file)
                    continue
                }
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
        try validateCurtains(origin: file)
    }

    /// Reads the `[curtains.NAME]` tables (CurtainEntry.swift), replacing the current list.
    private mutating func applyCurtains(_ value: (any TOMLValueConvertible)?, text: String, file: String) throws(ConfigError) {
        guard let tables = value?.table else {
            throw ConfigError("\(file):\(Self.line(ofKey: "curtains", section: nil, in: text)): curtains must be tables, "
                              + "one per curtain: [curtains.left], [curtains.right]")
        }
        var entries: [CurtainEntry] = []
        for name in tables.keys.sorted() {
            let origin = "\(file):\(Self.line(ofKey: "curtains.\(name)", section: nil, in: text))"
            if let problem = CurtainEntry.problem(withName: name) { throw ConfigError("\(origin): \(problem)") }
            guard let table = tables[name]?.table else {
                throw ConfigError("\(origin): curtains.\(name) must be a table ([curtains.\(name)])")
            }
            var strings: [String: String] = [:]
            for leaf in table.keys.sorted() {
                let where_ = "\(file):\(Self.line(ofKey: leaf, section: "curtains.\(name)", in: text))"
                if leaf == "pin" || leaf == "password" {
                    throw ConfigError("\(where_): curtains.\(name).\(leaf): keep the \(leaf) out of the configuration; "
                                      + "put it in a file of mode 0600 and name it with \(leaf)_file, or pass the systemd "
                                      + "credential curtains.\(name).\(leaf)")
                }
                guard CurtainEntry.keys.contains(leaf) else {
                    throw ConfigError("\(where_): unknown key curtains.\(name).\(leaf); known keys here: "
                                      + CurtainEntry.keys.joined(separator: ", "))
                }
                guard table[leaf]?.type == .string, let s = table[leaf]?.string else {
                    throw ConfigError("\(where_): curtains.\(name).\(leaf) must be a string")
                }
                let key = configKeys.first { $0.name == "curtain.\(leaf)" }
                if let problem = key?.validate(.string(s)) {
                    throw ConfigError("\(where_): curtains.\(name).\(leaf) \(problem)")
                }
                if leaf == "address", !CurtainEntry.isAddress(s) {
                    throw ConfigError("\(where_): curtains.\(name).address \"\(s)\" is not a Bluetooth address "
                                      + "such as \"C4:7C:8D:6A:3E:21\"")
                }
                strings[leaf] = s
            }
            entries.append(CurtainEntry(name: name, address: strings["address"], profile: strings["profile"] ?? "roombridge",
                                        pinFile: strings["pin_file"], passwordFile: strings["password_file"]))
        }
        curtains = entries
        try validateCurtains(origin: file)
    }

    /// Reads the `[curtain.groups]` table (``CurtainGroup``), replacing the current groups; the members are checked
    /// against the curtains once the whole file is read (``validateCurtains(origin:)``).
    private mutating func applyCurtainGroups(_ value: (any TOMLValueConvertible)?, text: String,
                                             file: String) throws(ConfigError) {
        guard let table = value?.table else {
            throw ConfigError("\(file):\(Self.line(ofKey: "groups", section: "curtain", in: text)): curtain.groups must be "
                              + "a table of lists: [curtain.groups] then window = [\"left\", \"right\"]")
        }
        var groups: [CurtainGroup] = []
        for name in table.keys.sorted() {
            let origin = "\(file):\(Self.line(ofKey: name, section: "curtain.groups", in: text))"
            if let problem = CurtainGroup.problem(withName: name) { throw ConfigError("\(origin): \(problem)") }
            guard let raw = table[name], case .strings(let members)? = Self.convert(raw, to: .strings), !members.isEmpty else {
                throw ConfigError("\(origin): curtain.groups.\(name) must be a list of curtain names, e.g. "
                                  + "[\"left\", \"right\"]")
            }
            var unique: [String] = []
            for member in members where !unique.contains(member) { unique.append(member) }
            groups.append(CurtainGroup(name: name, curtains: unique))
        }
        curtainGroups = groups
    }

    /// Reads the `[outbox.targets.NAME]` tables (OutboxTargetEntry.swift), replacing the current list.
    private mutating func applyOutboxTargets(_ value: (any TOMLValueConvertible)?, text: String,
                                             file: String) throws(ConfigError) {
        guard let tables = value?.table else {
            throw ConfigError("\(file):\(Self.line(ofKey: "targets", section: "outbox", in: text)): outbox.targets must be "
                              + "tables, one per target: [outbox.targets.intranet]")
        }
        var entries: [OutboxTargetEntry] = []
        for name in tables.keys.sorted() {
            let section = "outbox.targets.\(name)"
            let origin = "\(file):\(Self.line(ofKey: section, section: nil, in: text))"
            if let problem = OutboxTargetEntry.problem(withName: name) { throw ConfigError("\(origin): \(problem)") }
            guard let table = tables[name]?.table else {
                throw ConfigError("\(origin): \(section) must be a table ([\(section)])")
            }
            func at(_ leaf: String) -> String { "\(file):\(Self.line(ofKey: leaf, section: section, in: text))" }
            var strings: [String: String] = [:]
            var events: [String]?
            var timeout: Double?
            for leaf in table.keys.sorted() {
                if leaf == "secret" || leaf == "token" {
                    throw ConfigError("\(at(leaf)): \(section).\(leaf): keep the \(leaf) out of the configuration; put it "
                                      + "in a file of mode 0600 and name it with \(leaf)_file, or pass the systemd "
                                      + "credential \(section).\(leaf)")
                }
                guard OutboxTargetEntry.keys.contains(leaf), let raw = table[leaf] else {
                    throw ConfigError("\(at(leaf)): unknown key \(section).\(leaf); known keys here: "
                                      + OutboxTargetEntry.keys.joined(separator: ", "))
                }
                switch leaf {
                case "events":
                    guard case .strings(let list)? = Self.convert(raw, to: .strings) else {
                        throw ConfigError("\(at(leaf)): \(section).events must be a list of strings")
                    }
                    events = list
                case "timeout":
                    guard case .double(let d)? = Self.convert(raw, to: .double) else {
                        throw ConfigError("\(at(leaf)): \(section).timeout must be a number of seconds")
                    }
                    timeout = d
                default:
                    guard raw.type == .string, let string = raw.string else {
                        throw ConfigError("\(at(leaf)): \(section).\(leaf) must be a string")
                    }
                    strings[leaf] = string
                }
            }
            entries.append(try OutboxTargetEntry.parse(name: name, strings: strings, events: events, timeout: timeout,
                                                       origin: { at($0) }))
        }
        outboxTargets = entries
    }

    private static func convert(_ raw: any TOMLValueConvertible, to kind: AnyConfigKey.Kind) -> ConfigValue? {
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
                current = String(name.prefix { $0 != "#" }).trimmingCharacters(in: .whitespaces)
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
}
