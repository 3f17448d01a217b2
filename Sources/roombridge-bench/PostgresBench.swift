import Foundation

/// The store on PostgreSQL next to SQLite at the same size, and pgbench's simple-update TPS on
/// the same private server as the ceiling (scripts/pg-test-server.sh; fsync=off, as in the tests).
extension Bench {
    func postgresFigures(_ report: inout Report, work: URL) throws {
        let title = "Store on PostgreSQL next to SQLite: \(pgDevices) devices, \(pgRentals) rentals"
        let serverDir = work.appendingPathComponent("pg").path
        guard let pgbench = Self.postgresBinary("pgbench") else {
            report.add(section: title, rows: [Row.single("skipped: no PostgreSQL server binaries (install Debian's postgresql)", .nan)])
            return
        }
        let url = try Self.runTool("scripts/pg-test-server.sh", ["start", serverDir]).trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? Self.runTool("scripts/pg-test-server.sh", ["stop", serverDir]) }
        let passwordFile = serverDir + "/password"

        let sqlite = try lendingPairs([String(pgDevices), String(pgRentals), work.appendingPathComponent("pg-sqlite").path])
        let postgres = try lendingPairs(["--postgres-url", url, "--password-file", passwordFile, String(pgDevices), String(pgRentals)])
        var rows: [Row] = []
        for name in ["lend+return pairs, 1 task", "lend+return pairs, 8 tasks"] {
            if let pg = postgres[name], let lite = sqlite[name] {
                rows.append(Row("\(name), PostgreSQL (pairs/s)", Stats([pg]), peer: ("SQLite, WAL, synchronous=FULL", Stats([lite]))))
            }
        }
        // pgbench's built-in simple-update script (-N) on the same server: the ceiling for one
        // durable write transaction per round trip.
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let environment = ["PGPASSWORD": password]
        _ = try Self.runTool(pgbench, ["-i", "-q", url], environment: environment)
        for clients in [1, 8] {
            let text = try Self.runTool(pgbench, ["-N", "-c", String(clients), "-j", String(min(clients, 2)),
                                                  "-T", String(pgbenchSeconds), url], environment: environment)
            let tps = text.split(separator: "\n").first { $0.hasPrefix("tps = ") }
                .flatMap { Double($0.dropFirst(6).split(separator: " ").first ?? "") } ?? .nan
            rows.append(Row.single("pgbench -N simple-update, \(clients) client\(clients == 1 ? "" : "s"), \(pgbenchSeconds) s (TPS)", tps))
        }
        rows.append(Row.single("server: scripts/pg-test-server.sh (PostgreSQL on 127.0.0.1, fsync=off); a pair is two transactions", .nan))
        report.add(section: title, rows: rows)
    }

    /// Runs lending-bench and returns its ops/s per figure name.
    func lendingPairs(_ arguments: [String]) throws -> [String: Double] {
        let text = try Self.runTool(URL(fileURLWithPath: bin).appendingPathComponent("lending-bench").path, arguments)
        var rates: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.contains("ops/s") {
            let fields = line.dropFirst(44).split(separator: " ")
            if let i = fields.firstIndex(of: "ops/s"), i > 0, let rate = Double(fields[i - 1]) {
                rates[line.prefix(44).trimmingCharacters(in: .whitespaces)] = rate
            }
        }
        return rates
    }

    /// A program of the newest PostgreSQL in /usr/lib/postgresql/*/bin (Debian's layout), if installed.
    static func postgresBinary(_ name: String) -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted { Int($0) ?? 0 < Int($1) ?? 0 }
        return versions.reversed().map { "\(root)/\($0)/bin/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs a program to completion and returns its standard output; throws with it on failure.
    static func runTool(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError("\(path) \(arguments.first ?? "") failed (exit \(p.terminationStatus)):\n\(text)") }
        return text
    }
}
