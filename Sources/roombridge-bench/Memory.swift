import Foundation
import Subprocess
import SystemPackage

/// Resident memory of a running process, split the way the kernel accounts it.
///
/// - `rss`: every resident page mapped by the process (`Rss` in /proc/PID/smaps_rollup).
/// - `anonymous`: pages no file backs: heap, stacks, and the copy-on-write pages that relocations
///   write into a library's data (`Anonymous`).
/// - `file`: pages of mapped files (code, read-only data such as ICU's tables) (`RssFile` in
///   /proc/PID/status); other processes mapping the same file share these pages.
/// - `pss`: the proportional share: each shared page divided by the number of processes mapping it.
///
/// `objects` attributes the resident pages to the file each mapping comes from (its pages of
/// code and data, and the anonymous copy-on-write pages inside its data mappings), largest first;
/// pages mapped from no file are summed under "[anonymous]", "[heap]" and "[stack]".
struct MemoryProfile {
    struct Object {
        let name: String
        var rssKB: Int
        var anonymousKB: Int
        var fileKB: Int { rssKB - anonymousKB }
    }

    var rssKB = 0
    var anonymousKB = 0
    var fileKB = 0
    var pssKB = 0
    var objects: [Object] = []

    init(pid: Int32) {
        let rollup = Self.read("/proc/\(pid)/smaps_rollup")
        let status = Self.read("/proc/\(pid)/status")
        rssKB = Self.field("Rss", in: rollup)
        anonymousKB = Self.field("Anonymous", in: rollup)
        pssKB = Self.field("Pss", in: rollup)
        fileKB = Self.field("RssFile", in: status)
        objects = Self.objects(smaps: Self.read("/proc/\(pid)/smaps"))
    }

    /// The whole of a /proc file, read to EOF: these files report a size of 0, and reading by the
    /// reported size returned only the first page of /proc/PID/smaps.
    static func read(_ path: String) -> String {
        guard let fd = try? FileDescriptor.open(FilePath(path), .readOnly) else { return "" }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = (try? chunk.withUnsafeMutableBytes { try fd.read(into: $0) }) ?? 0
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `Name:<tab or spaces>123 kB` → 123 (0 when absent).
    static func field(_ name: String, in text: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
        }
        return 0
    }

    /// Sums Rss and Anonymous per mapped file over the mappings of /proc/PID/smaps.
    static func objects(smaps: String) -> [Object] {
        var byName: [String: Object] = [:]
        var current = "[anonymous]"
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                // "start-end perms offset dev inode [path]"
                current = fields.count > 5 ? fields[5...].joined(separator: " ") : "[anonymous]"
                if current.hasPrefix("/") { current = String(current.split(separator: "/").last ?? "") }
                continue
            }
            guard fields.count >= 2, let kB = Int(fields[1]) else { continue }
            if fields[0] == "Rss:" {
                byName[current, default: Object(name: current, rssKB: 0, anonymousKB: 0)].rssKB += kB
            } else if fields[0] == "Anonymous:" {
                byName[current, default: Object(name: current, rssKB: 0, anonymousKB: 0)].anonymousKB += kB
            }
        }
        return byName.values.sorted { $0.rssKB > $1.rssKB }
    }
}

/// Starts one of the minimal peer programs (Sources/idle-peer-*), lets it settle like the daemon,
/// and reads its memory.
func idlePeerMemory(bin: String, name: String, settle: Double) async throws -> MemoryProfile {
    // Through swift-subprocess, which resets the child's signal mask: Foundation's Process spawned
    // the peer from a cooperative-pool thread with that thread's mask, SIGTERM blocked, so the
    // peer never ended and waitUntilExit hung the whole run (seen: SigBlk fffffffe3bfbea27).
    let result = try await run(.path(FilePath(bin + "/" + name)), input: .none, output: .sequence, error: .discarded) { execution in
        var lines = execution.standardOutput.strings().makeAsyncIterator()
        let line = try await lines.next() ?? ""
        guard line.contains("ready") else { throw BenchError("\(name) did not start: \(line)") }
        try await Task.sleep(for: .seconds(settle))
        let profile = MemoryProfile(pid: execution.processIdentifier.value)
        try execution.send(signal: .terminate)
        return profile
    }
    return result.closureResult
}

extension Bench {
    /// Idle memory of the daemon next to the minimal Swift programs: totals, then the mapped
    /// objects holding the most resident pages.
    static func idleMemoryRows(_ daemon: MemoryProfile, essentials: MemoryProfile, foundation: MemoryProfile) -> [Row] {
        func mib(_ kB: Int) -> Stats { Stats([Double(kB) / 1024]) }
        let minimal = "minimal Swift program, FoundationEssentials only"
        var rows = [
            Row("idle RSS (MiB)", mib(daemon.rssKB), peer: (minimal, mib(essentials.rssKB))),
            Row("idle RSS (MiB)", mib(daemon.rssKB), peer: ("minimal Swift program importing Foundation", mib(foundation.rssKB))),
            Row("idle RSS: anonymous (MiB)", mib(daemon.anonymousKB), peer: (minimal, mib(essentials.anonymousKB))),
            Row("idle RSS: file-backed (MiB)", mib(daemon.fileKB), peer: (minimal, mib(essentials.fileKB))),
            Row("idle Pss, shared pages divided among their users (MiB)", mib(daemon.pssKB),
                peer: (minimal, mib(essentials.pssKB))),
        ]
        for o in daemon.objects.prefix(8) {
            rows.append(Row.single("idle RSS in \(o.name) (MiB; \(fmt(Double(o.anonymousKB) / 1024)) of it anonymous)",
                                   Double(o.rssKB) / 1024))
        }
        return rows
    }
}
