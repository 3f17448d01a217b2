import Foundation
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
}
