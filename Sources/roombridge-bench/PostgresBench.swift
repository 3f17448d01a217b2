import Foundation
import Subprocess
import SystemPackage

/// The store on PostgreSQL next to SQLite at the same size, and pgbench's simple-update TPS on
/// the same private server as the ceiling (scripts/pg-test-server.sh; fsync=off, as in the tests).
extension Bench {
    func postgresFigures(_ report: inout Report, work: URL) async throws {
        let title = "Store on PostgreSQL next to SQLite: \(pgDevices) devices, \(pgRentals) rentals"
        let serverDir = work.appendingPathComponent("pg").path
        guard let pgbench = Self.postgresBinary("pgbench") else {
            report.add(section: title, rows: [Row.single("skipped: no PostgreSQL server binaries (install Debian's postgresql)", .nan)])
            return
        }
        let url = try await Self.runTool("scripts/pg-test-server.sh", ["start", serverDir]).trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            report.add(section: title, rows: try await postgresRows(url: url, serverDir: serverDir, pgbench: pgbench, work: work))
        } catch {
            _ = try? await Self.runTool("scripts/pg-test-server.sh", ["stop", serverDir])
            throw error
        }
        _ = try await Self.runTool("scripts/pg-test-server.sh", ["stop", serverDir])
    }

    private func postgresRows(url: String, serverDir: String, pgbench: String, work: URL) async throws -> [Row] {
        let passwordFile = serverDir + "/password"

        let sqlite = try await lendingPairs([String(pgDevices), String(pgRentals), work.appendingPathComponent("pg-sqlite").path])
        let output = try await Self.runTool(URL(fileURLWithPath: bin).appendingPathComponent("lending-bench").path,
                                            ["--postgres-url", url, "--password-file", passwordFile, String(pgDevices), String(pgRentals)])
        let postgres = Self.rates(output)
        var rows: [Row] = []
        for name in ["lend+return pairs, 1 task", "lend+return pairs, 8 tasks"] {
            if let pg = postgres[name], let lite = sqlite[name] {
                rows.append(Row("\(name), PostgreSQL (pairs/s)", Stats([pg]), peer: ("SQLite, WAL, synchronous=FULL", Stats([lite]))))
            }
        }
        for name in ["who has device X (device + active rental)", "what does user U have (active rentals)"] {
            if let pg = postgres[name], let lite = sqlite[name] {
                rows.append(Row("\(name), PostgreSQL (lookups/s)", Stats([pg]), peer: ("SQLite, WAL", Stats([lite]))))
            }
        }
        // Kiosk to kiosk: a lend at B until A's rental feed has it, next to a bare NOTIFY.
        let latency = Self.latencies(output)
        if let feed = latency["lend at kiosk B heard at kiosk A"], let bare = latency["bare NOTIFY between two connections"] {
            rows.append(Row("lend at kiosk B heard at kiosk A, p50 (ms)", Stats([feed.p50]), peer: ("bare NOTIFY, two connections", Stats([bare.p50]))))
            rows.append(Row("lend at kiosk B heard at kiosk A, p99 (ms)", Stats([feed.p99]), peer: ("bare NOTIFY, two connections", Stats([bare.p99]))))
        }
        // pgbench's built-in simple-update script (-N) on the same server: the ceiling for one
        // write transaction per round trip.
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let environment = Environment.inherit.updating(["PGPASSWORD": password])
        _ = try await Self.runTool(pgbench, ["-i", "-q", url], environment: environment)
        for clients in [1, 8] {
            let text = try await Self.runTool(pgbench, ["-N", "-c", String(clients), "-j", String(min(clients, 2)),
                                                  "-T", String(pgbenchSeconds), url], environment: environment)
            let tps = text.split(separator: "\n").first { $0.hasPrefix("tps = ") }
                .flatMap { Double($0.dropFirst(6).split(separator: " ").first ?? "") } ?? .nan
            rows.append(Row.single("pgbench -N simple-update, \(clients) client\(clients == 1 ? "" : "s"), \(pgbenchSeconds) s (TPS)", tps))
        }
        rows.append(Row.single("server: scripts/pg-test-server.sh (PostgreSQL on 127.0.0.1, fsync=off); a pair is two transactions", .nan))
        return rows
    }

    /// Runs lending-bench and returns its ops/s per figure name.
    func lendingPairs(_ arguments: [String]) async throws -> [String: Double] {
        Self.rates(try await Self.runTool(URL(fileURLWithPath: bin).appendingPathComponent("lending-bench").path, arguments))
    }

    /// lending-bench's `<name padded to 44> … <rate> ops/s …` lines, by name.
    static func rates(_ text: String) -> [String: Double] {
        var rates: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.contains("ops/s") {
            let fields = line.dropFirst(44).split(separator: " ")
            if let i = fields.firstIndex(of: "ops/s"), i > 0, let rate = Double(fields[i - 1]) {
                rates[line.prefix(44).trimmingCharacters(in: .whitespaces)] = rate
            }
        }
        return rates
    }

    /// lending-bench's `latency <name>: p50 <ms> ms p99 <ms> ms …` lines, by name.
    static func latencies(_ text: String) -> [String: (p50: Double, p99: Double)] {
        var found: [String: (p50: Double, p99: Double)] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("latency ") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let fields = line[line.index(after: colon)...].split(separator: " ")
            if fields.count >= 6, fields[0] == "p50", fields[3] == "p99", let p50 = Double(fields[1]), let p99 = Double(fields[4]) {
                found[String(line[line.index(line.startIndex, offsetBy: 8)..<colon])] = (p50, p99)
            }
        }
        return found
    }

    /// A program of the newest PostgreSQL in /usr/lib/postgresql/*/bin (Debian's layout), if installed.
    static func postgresBinary(_ name: String) -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted { Int($0) ?? 0 < Int($1) ?? 0 }
        return versions.reversed().map { "\(root)/\($0)/bin/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs a program to completion and returns its standard output and error; throws with them on failure.
    static func runTool(_ path: String, _ arguments: [String], environment: Environment = .inherit) async throws -> String {
        // Through swift-subprocess (Foundation's Process, called from the cooperative pool, never saw
        // pg-test-server.sh exit: it stayed a zombie and waitUntilExit hung the run). Output goes to a
        // file, not a pipe: the server that pg-test-server.sh starts outlives the script and keeps the
        // descriptors it inherited, so a pipe would never reach its end.
        let outPath = FileManager.default.temporaryDirectory.appendingPathComponent("rb-bench-tool-\(UUID().uuidString)").path
        let fd = try FileDescriptor.open(FilePath(outPath), .writeOnly, options: [.create, .truncate], permissions: .ownerReadWrite)
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        let result = try await Subprocess.run(.path(FilePath(path)), arguments: Arguments(arguments), environment: environment,
                                   output: .fileDescriptor(fd, closeAfterSpawningProcess: true), error: .combinedWithOutput)
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        guard result.terminationStatus.isSuccess else {
            throw BenchError("\(path) \(arguments.first ?? "") failed (\(result.terminationStatus)):\n\(text)")
        }
        return text
    }
}
