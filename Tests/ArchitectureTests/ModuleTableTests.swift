import Foundation
import Testing

/// docs/architecture.md against Package.swift: the module table lists every module of the package once
/// (test targets aside), with its kind; the dependencies the manifest declares keep the direction the
/// document states; the introduction names every executable, and the manifest's top comment every adapter.
/// Both files are read from the package (relative to this file) and parsed as text.
@Suite struct ModuleTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    struct Target: Equatable {
        var name: String
        var declaration: String  // target, executableTarget, systemLibrary
        var dependencies: [String]  // the package's own modules (products of other packages left out)
    }

    /// The manifest's targets other than test targets, with their dependencies within the package.
    static func manifestTargets(_ manifest: String) throws -> [Target] {
        let code = manifest.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }
            .joined(separator: "\n")
        let start = try Regex(#"\.(target|executableTarget|systemLibrary|testTarget)\(name: "([^"]+)""#)
        let starts = code.matches(of: start)
        var targets: [Target] = []
        for (i, match) in starts.enumerated() {
            let declaration = String(match.output[1].substring ?? "")
            guard declaration != "testTarget" else { continue }
            let end = i + 1 < starts.count ? starts[i + 1].range.lowerBound : code.endIndex
            var body = String(code[match.range.upperBound..<end])
            body.replace(try Regex(#"\.product\([^)]*\)"#), with: "")
            var dependencies: [String] = []
            if let list = body.firstMatch(of: try Regex(#"dependencies: \[([^\]]*)\]"#)) {
                let inner = String(list.output[1].substring ?? "")
                dependencies = inner.matches(of: try Regex(#""([^"]+)""#)).map { String($0.output[1].substring ?? "") }
            }
            targets.append(Target(name: String(match.output[2].substring ?? ""), declaration: declaration,
                                  dependencies: dependencies))
        }
        return targets
    }

    /// The rows of the table under "## Modules": each backquoted name in the first column, with the row's kind.
    static func tableKinds(_ document: String) throws -> [(name: String, kind: String)] {
        guard let section = document.range(of: "## Modules") else { throw DocumentError("no ## Modules section") }
        var rows: [(String, String)] = []
        for line in document[section.upperBound...].split(separator: "\n") {
            if line.hasPrefix("## ") { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[1].hasPrefix("`") else { continue }
            for name in cells[1].matches(of: try Regex("`([^`]+)`")) {
                rows.append((String(name.output[1].substring ?? ""), cells[2]))
            }
        }
        return rows
    }

    struct DocumentError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func theTableListsEveryModuleOnce() throws {
        let targets = try Self.manifestTargets(try Self.read("Package.swift"))
        let rows = try Self.tableKinds(try Self.read("docs/architecture.md"))
        #expect(targets.count > 30, "the manifest parsed into \(targets.count) targets")
        let listed = rows.map(\.name)
        #expect(Set(listed).count == listed.count, "listed twice: \(listed.filter { n in listed.filter { $0 == n }.count > 1 })")
        #expect(Set(targets.map(\.name)).subtracting(listed).sorted() == [], "in Package.swift, not in the table")
        #expect(Set(listed).subtracting(targets.map(\.name)).sorted() == [], "in the table, not in Package.swift")
        for t in targets where t.declaration == "executableTarget" {
            let kind = rows.first { $0.name == t.name }?.kind ?? ""
            #expect(["executable", "executables", "tool", "tools"].contains(kind), "\(t.name) is an executable, listed as \(kind)")
        }
    }

    /// "Dependencies point inward": a pure module depends on pure modules only; an adapter on no composition,
    /// executable or test code; C modules are the thin layer under the adapters.
    @Test func dependenciesPointInward() throws {
        let targets = try Self.manifestTargets(try Self.read("Package.swift"))
        let kinds = Dictionary(try Self.tableKinds(try Self.read("docs/architecture.md")), uniquingKeysWith: { a, _ in a })
        let pure: Set = ["pure"]
        let outward: Set = ["composition", "executable", "executables", "tools", "tool", "tests", "mapping", "checks"]
        for t in targets {
            let kind = kinds[t.name] ?? "?"
            for d in t.dependencies {
                let dk = kinds[d] ?? "?"
                if kind == "pure" { #expect(pure.contains(dk), "pure \(t.name) depends on \(d) (\(dk))") }
                if kind == "adapter" { #expect(!outward.contains(dk), "adapter \(t.name) depends on \(d) (\(dk))") }
                if kind == "C" { Issue.record("C module \(t.name) depends on \(d)") }
            }
        }
    }

    /// The introduction names every executable; the manifest's top comment names every adapter.
    @Test func theIntroductionAndTheManifestCommentNameThemAll() throws {
        let manifest = try Self.read("Package.swift")
        let targets = try Self.manifestTargets(manifest)
        let document = try Self.read("docs/architecture.md")
        let introduction = document[..<(document.range(of: "\n\n```")?.lowerBound ?? document.endIndex)]
        let executables = targets.filter { $0.declaration == "executableTarget" }.map(\.name)
        for name in executables { #expect(introduction.contains("`\(name)`"), "the introduction does not name \(name)") }
        let words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
        if executables.count < words.count {
            #expect(introduction.contains("\(words[executables.count]) executables"), "the introduction's count is not \(executables.count)")
        }
        let comment = manifest.split(separator: "\n").prefix { $0.hasPrefix("//") }.joined(separator: "\n")
        let adapters = try Self.tableKinds(document).filter { $0.kind == "adapter" }.map(\.name)
        #expect(adapters.count >= 8)
        for name in adapters { #expect(comment.contains(name), "Package.swift's top comment does not name the adapter \(name)") }
    }
}
