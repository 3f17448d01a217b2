import Foundation
import Testing
@testable import RoomBridgeConfig

/// The key declarations against what people read: every declared key is in the table that drives the
/// parser, the flags and `--help`, and the example configuration and docs/operations.md name every key with
/// its default. The files are read from the package (relative to this file).
@Suite struct ConfigDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func everyDeclaredKeyIsInTheTableOnce() throws {
        var declared: [String] = []
        for file in ["Sources/RoomBridgeConfig/ConfigKeys.swift", "Sources/RoomBridgeConfig/PresenceKeys.swift"] {
            let text = try Self.read(file)
            let declaration = try Regex(#"public static var \w+: Self \{\s*Self\("([a-z_]+\.[a-z_]+)""#)
            declared += text.matches(of: declaration).map { String($0.output[1].substring ?? "") }
        }
        #expect(declared.count == configKeys.count, "declared \(declared.count) keys, the table lists \(configKeys.count)")
        #expect(Set(declared) == Set(configKeys.map(\.name)))
        #expect(Set(configKeys.map(\.name)).count == configKeys.count, "a key is listed twice")
    }

    /// Each key's flag, name and default are in `--help`.
    @Test func helpNamesEveryKeyWithItsDefault() {
        let help = DaemonCommandLine.helpText()
        for key in configKeys {
            #expect(help.contains("  \(key.flag)"), "--help lacks \(key.flag)")
            #expect(help.contains("[\(key.name), default \(key.defaultValue)]"), "--help lacks \(key.name)'s default")
        }
    }

    /// The example configuration (installed as /etc/roombridge/roombridged.toml) parses, and holds every key
    /// commented out with its default, in the key's table.
    @Test func theExampleConfigurationNamesEveryKeyWithItsDefault() throws {
        let text = try Self.read("systemd/roombridged.toml.example")
        var config = DaemonConfig()
        try config.apply(toml: text, file: "roombridged.toml.example")
        var section = ""
        var lines: Set<String> = []
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") { section = line.trimmingCharacters(in: CharacterSet(charactersIn: "[]")); continue }
            lines.insert("\(section) \(line)")
        }
        let missing = configKeys.filter { !lines.contains("\($0.section) # \($0.leaf) = \($0.defaultValue)") }
            .map { "\"# \($0.leaf) = \($0.defaultValue)\" in [\($0.section)]" }
        #expect(missing.isEmpty, "the example configuration lacks \(missing.joined(separator: ", "))")
    }

    /// docs/operations.md's key table is the one the declarations make; with ROOMBRIDGE_UPDATE_DOCS=1 the test
    /// writes it.
    @Test func theOperationsKeyTableIsGeneratedFromTheDeclarations() throws {
        let path = "docs/operations.md"
        let text = try Self.read(path)
        let begin = "<!-- config-keys: generated from Sources/RoomBridgeConfig (ConfigDocsTests); do not edit by hand -->\n"
        let end = "<!-- end of config-keys -->\n"
        let table = Self.keyTable()
        guard let b = text.range(of: begin), let e = text.range(of: end, range: b.upperBound..<text.endIndex) else {
            Issue.record("\(path) has no \(begin)")
            return
        }
        if ProcessInfo.processInfo.environment["ROOMBRIDGE_UPDATE_DOCS"] == "1" {
            let updated = text.replacingCharacters(in: b.upperBound..<e.lowerBound, with: table)
            try updated.write(to: Self.root.appendingPathComponent(path), atomically: true, encoding: .utf8)
            return
        }
        #expect(String(text[b.upperBound..<e.lowerBound]) == table,
                "\(path)'s key table differs from the declarations; run ROOMBRIDGE_UPDATE_DOCS=1 swift test --filter ConfigDocsTests")
    }

    static func keyTable() -> String {
        var out = "| key | flag | type | default | meaning |\n|---|---|---|---|---|\n"
        for key in configKeys {
            let cells = ["`\(key.name)`", "`\(key.flag)`", key.kind.rawValue, "`\(key.defaultValue)`", key.help]
            out += "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
        }
        return out
    }
}
