// lending-bench: fills a temporary database with 100 k devices and 1 M rentals, then measures
// durable lend+return pairs per second and the three lookups the daemon serves.
//   swift run -c release lending-bench [devices] [rentals] [directory]
//   lending-bench --stocktake N DIRECTORY   (a stocktake of N devices closed on SQLite, next to a plain SELECT; Stocktake.swift)
//   lending-bench --postgres-url URL --password-file FILE [devices] [rentals]   (pairs, lookups and kiosk-to-kiosk latency; Postgres.swift)
import Foundation
import GRDB
import Lending
import LendingStore

var arguments = CommandLine.arguments
var postgres: (url: String, passwordFile: String)?
if let u = arguments.firstIndex(of: "--postgres-url"), let f = arguments.firstIndex(of: "--password-file"),
   u + 1 < arguments.count, f + 1 < arguments.count {
    postgres = (arguments[u + 1], arguments[f + 1])
    arguments = arguments.enumerated().filter { ![u, u + 1, f, f + 1].contains($0.offset) }.map(\.element)
}
let deviceCount = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
let rentalCount = arguments.count > 2 ? Int(arguments[2]) ?? 1_000_000 : 1_000_000
let userCount = 2_000
let directory = arguments.count > 3 ? arguments[3] : NSTemporaryDirectory() + "lending-bench-\(getpid())"
let path = directory + "/bench.sqlite"
let day: Int64 = 86_400_000
let start: Int64 = 1_735_689_600_000  // 2025-01-01
let span: Int64 = 730 * day           // two years of history
let pairs = 2_000

if let i = arguments.firstIndex(of: "--stocktake"), i + 2 < arguments.count, let n = Int(arguments[i + 1]) {
    try await runStocktakeBench(devices: n, directory: arguments[i + 2])
    exit(0)
}

if let postgres {
    try await runPostgres(url: postgres.url, passwordFile: postgres.passwordFile, deviceCount: deviceCount,
                          rentalCount: rentalCount, userCount: userCount, start: start, span: span, pairs: pairs)
    exit(0)
}

try? FileManager.default.removeItem(atPath: directory)
print("database: \(path) (\(deviceCount) devices, \(rentalCount) rentals, \(userCount) users)")

// 1. Schema through the store, then a bulk fill in one raw transaction.
try await SQLiteInventoryStore.open(StoreConfiguration(path: path)).close()
let fill = try await seconds {
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    try await queue.write { db in
        let addUser = try db.makeStatement(sql: "INSERT INTO users (id, name, registered_at) VALUES (?, ?, ?)")
        for u in 0..<userCount {
            try addUser.execute(arguments: [String(format: "U-%05d", u), "User \(u)", start])
        }
        let groups = DeviceGroup.defaults.map(\.id)
        let addDevice = try db.makeStatement(sql: """
            INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type, registered_at,
                                 note, is_nfc_registered) VALUES (?, ?, ?, ?, ?, 'normal', 'USB-C', ?, NULL, 1)
            """)
        for d in 0..<deviceCount {
            try addDevice.execute(arguments: [String(format: "D-%06d", d), groups[d % groups.count], "Model \(d % 50)",
                                              "SN\(d)", "\(d % 20).0", start])
        }
        // Rentals: device d gets rentals one after another over two years; the newest rental
        // of every 10th device stays open. Users are spread pseudo-randomly.
        let addRental = try db.makeStatement(sql: """
            INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, due_at,
                                 returned_at, location) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'bench')
            """)
        let perDevice = max(1, rentalCount / deviceCount)
        let slot = span / Int64(perDevice)
        for d in 0..<deviceCount {
            let device = String(format: "D-%06d", d)
            for k in 0..<perDevice {
                let u = (d &* 7919 &+ k &* 104_729) % userCount
                let rentedAt = start + Int64(k) * slot + Int64(d % 1000) * 60_000
                let open = k == perDevice - 1 && d % 10 == 0
                try addRental.execute(arguments: [
                    device, "Model \(d % 50)", "\(d % 20).0", "SN\(d)", String(format: "U-%05d", u), "User \(u)",
                    rentedAt, rentedAt + 14 * day, open ? nil : rentedAt + 3 * day,
                ])
            }
        }
    }
    try await queue.write { db in try db.execute(sql: "ANALYZE") }
    try queue.close()
}
let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
print(String(format: "fill: %.1f s, file %.0f MB", fill, Double(size) / 1e6))

// 2. Open as the daemon would (quick_check), and with the full integrity check.
let openQuick = try await seconds { try await SQLiteInventoryStore.open(StoreConfiguration(path: path)).close() }
print(String(format: "open with quick_check: %.2f s", openQuick))
let openFull = try await seconds {
    try await SQLiteInventoryStore.open(StoreConfiguration(path: path, integrityCheck: .full)).close()
}
print(String(format: "open with integrity_check: %.2f s", openFull))
let store = try await SQLiteInventoryStore.open(StoreConfiguration(path: path, integrityCheck: .none))
let diagnostics = try await store.diagnostics()
print("journal_mode=\(diagnostics.journalMode) synchronous=\(diagnostics.synchronous) migrations=\(diagnostics.appliedMigrations)")

// 3. Durable lend+return pairs (synchronous=FULL, one transaction each), 1 and 8 tasks.
let now = Date(timeIntervalSince1970: Double(start + span + 10 * day) / 1000)
try await timePairs(store, deviceCount: deviceCount, pairs: pairs, now: now)

// 4. Lookups, run off the main actor as the daemon's request handlers are: from top-level code
// (the main actor) each await of the store would add a hop there and back.
let lookupIds = (0..<lookups).map { String(format: "D-%06d", ($0 * 7_919) % deviceCount) }
try await timeWhoHas(store, deviceCount: deviceCount)

// Where the time of the line above goes, each step a peer of the next:
// - the same point query as plain synchronous SQL, all lookups in one read transaction;
// - the same, one read (GRDB `read`, its own transaction) per lookup, on the calling thread;
// - the same, one async `DatabasePool.read` per lookup: GRDB's own hops, cooperative pool ->
//   its reader pool's queues -> back.
// The store's lookup pays a synchronous read plus one hop to its read queue and back, since
// SQLite must not run on the cooperative pool. (A bare hop timed back to back is no peer: with
// nothing to do on either side, neither thread parks, and it measured 0.6 µs.)
let whoHasSQL = """
    SELECT r.user_id FROM devices d LEFT JOIN rentals r ON r.device_id = d.id AND r.returned_at IS NULL
    WHERE d.id = ?
    """
let rawQueue = try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
let rawWhoHas = try await seconds {
    try rawQueue.read { db in
        let statement = try db.makeStatement(sql: whoHasSQL)
        for i in 0..<lookups {
            _ = try String.fetchOne(statement, arguments: [String(format: "D-%06d", (i * 7_919) % deviceCount)])
        }
    }
}
report("  same, raw synchronous SQL", count: lookups, seconds: rawWhoHas)
let rawEach = try await seconds {
    for i in 0..<lookups {
        _ = try rawQueue.read { db in
            try String.fetchOne(db.cachedStatement(sql: whoHasSQL), arguments: [String(format: "D-%06d", (i * 7_919) % deviceCount)])
        }
    }
}
report("  same, one synchronous read each", count: lookups, seconds: rawEach)
try rawQueue.close()
let rawPool = try DatabasePool(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }())
let (poolEach, _) = try await timedLookups(lookupIds) { [rawPool, whoHasSQL] id in
    try await rawPool.read { db in try String.fetchOne(db.cachedStatement(sql: whoHasSQL), arguments: [id]) } != nil
}
report("  same, one async pool read each", count: lookups, seconds: poolEach)
try rawPool.close()

try await timeUserHas(store, userCount: userCount)

var items = 0
let monthQueries = 2_000
let history = try await seconds {
    for i in 0..<monthQueries {
        let month = Int64(i % 24)
        let since = Date(timeIntervalSince1970: Double(start + month * 30 * day) / 1000)
        let query = HistoryQuery(userId: String(format: "U-%05d", i % userCount), since: since,
                                 until: since.addingTimeInterval(30 * 86_400))
        items += try await store.history(query, page: PageRequest(limit: 1000)).items.count
    }
}
report("a month of history for user U", count: monthQueries, seconds: history)
print("  (\(Double(items) / Double(monthQueries)) rentals per user-month on average)")

let overdue = try await seconds { items = try await store.overdueRentals(at: now, page: PageRequest(limit: 1000)).items.count }
report("overdue rentals, first page of 1000", count: 1, seconds: overdue)

// The dashboard (GetDashboard's store work) at this scale, next to the monthly report of the
// month it ends in: both read a period's rentals by range and aggregate them in the daemon.
let utc = TimeZone(identifier: "UTC")!
let boards = 20
let board = try await seconds {
    for _ in 0..<boards { _ = try await store.dashboard(days: LendingDashboard.defaultDays, timeZone: utc, now: now) }
}
report("dashboard, last 30 days", count: boards, seconds: board)
let reportMonth = String(ISO8601DateFormatter().string(from: now).prefix(7))
let monthly = try await seconds {
    for _ in 0..<boards { _ = try await store.monthlyReport(month: reportMonth, timeZone: utc, now: now) }
}
report("  peer: monthly report of the same month", count: boards, seconds: monthly)

try store.close()
if arguments.count <= 3 { try? FileManager.default.removeItem(atPath: directory) }  // keep an explicit directory
