#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The configuration syntax of one region (an entry of `presence.regions`):
/// `NAME=UUID[/MAJOR[/MINOR]] [user=ID] [device=ID]` (a minor without a major: `UUID//MINOR`), e.g.
/// `"alice=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/7 user=u-alice"`.
public struct RegionSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
}

extension Region {
    public init(parsing entry: String) throws(RegionSyntaxError) {
        let words = entry.split(separator: " ").map(String.init)
        let usage = "write NAME=UUID[/MAJOR[/MINOR]] [user=ID] [device=ID]"
        guard let first = words.first, let eq = first.firstIndex(of: "=") else {
            throw RegionSyntaxError(description: "\"\(entry)\": \(usage)")
        }
        let name = String(first[..<eq])
        let parts = first[first.index(after: eq)...].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !name.isEmpty, (1...3).contains(parts.count) else { throw RegionSyntaxError(description: "\"\(entry)\": \(usage)") }
        guard let uuid = UUID(uuidString: parts[0]) else {
            throw RegionSyntaxError(description: "\"\(entry)\": \"\(parts[0])\" is not a UUID (like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0)")
        }
        func number(_ s: String, _ what: String) throws(RegionSyntaxError) -> UInt16 {
            guard let v = UInt16(s) else { throw RegionSyntaxError(description: "\"\(entry)\": \(what) must be 0…65535") }
            return v
        }
        self.init(name: name, uuid: uuid,
                  major: parts.count > 1 && !(parts.count == 3 && parts[1].isEmpty) ? try number(parts[1], "major") : nil,
                  minor: parts.count > 2 ? try number(parts[2], "minor") : nil)
        for word in words.dropFirst() {
            let kv = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, !kv[1].isEmpty else { throw RegionSyntaxError(description: "\"\(entry)\": \(usage)") }
            switch kv[0] {
            case "user": userId = kv[1]
            case "device": deviceId = kv[1]
            default: throw RegionSyntaxError(description: "\"\(entry)\": unknown \"\(kv[0])\" (\(usage))")
            }
        }
    }

    /// The entry in configuration syntax.
    public var configurationEntry: String {
        var s = "\(name)=\(uuid.uuidString)"
        if let major { s += "/\(major)" }
        if let minor { s += "/\(minor)" }
        if let userId { s += " user=\(userId)" }
        if let deviceId { s += " device=\(deviceId)" }
        return s
    }
}
