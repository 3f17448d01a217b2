import Foundation
import Lending
import PostgresNIO
import PostgresStore

/// Kiosk to kiosk: from B's lend call until A's rental feed yields it (commit, NOTIFY, the rental
/// read back), next to a bare NOTIFY between two PostgresNIO connections on the same server, the
/// floor. Prints `latency <name>: p50 <ms> ms p99 <ms> ms` lines.
func timeFeed(url: String, password: String, store a: PostgresInventoryStore, deviceCount: Int, rounds: Int, now: Date) async throws {
    let b = try await PostgresInventoryStore.open(PostgresStoreConfiguration(url: url, password: password))
    defer { b.close() }
    let feed = await a.rentalChanges()
    var heard = feed.makeAsyncIterator()
    var latencies: [Double] = []
    // Round 0 warms the feed's connection and is not counted.
    for i in 0...rounds {
        let device = String(format: "D-%06d", (i * 53 % deviceCount) | 1)
        let t = now.addingTimeInterval(Double(300_000 + i))
        let started = ContinuousClock.now
        _ = try await b.lend(LendRequest(deviceId: device, userId: "U-00003", at: t, location: "kiosk-b"))
        try await next(.lent, device, from: &heard)
        if i > 0 { latencies.append(milliseconds(ContinuousClock.now - started)) }
        _ = try await b.returnDevice(ReturnRequest(deviceId: device, at: t.addingTimeInterval(0.5)))
        try await next(.returned, device, from: &heard)
    }
    reportLatency("lend at kiosk B heard at kiosk A", latencies)
    reportLatency("bare NOTIFY between two connections", try await timeBareNotify(url: url, password: password, rounds: rounds))
}

/// Waits for the feed to yield `kind` for `device`.
private func next(_ kind: RentalChange.Kind, _ device: String, from heard: inout AsyncStream<RentalChange>.Iterator) async throws {
    while let change = await heard.next() {
        if change.kind == kind && change.rental.deviceId == device { return }
    }
    throw FeedEnded()
}

struct FeedEnded: Error, CustomStringConvertible {
    var description: String { "the rental feed ended" }
}

/// NOTIFY on one connection until LISTEN on another has it, `rounds` times after one warm-up.
private func timeBareNotify(url: String, password: String, rounds: Int) async throws -> [Double] {
    guard let parts = URLComponents(string: url), let host = parts.host, let user = parts.user else {
        throw BenchURLError(url: url)
    }
    let client = PostgresClient(configuration: PostgresClient.Configuration(
        host: host, port: parts.port ?? 5432, username: user, password: password,
        database: String(parts.path.dropFirst()), tls: .disable))
    let running = Task { await client.run() }
    defer { running.cancel() }
    return try await client.withConnection { listener in
        try await listener.listen(on: "roombridge_bench") { notices in
            var received = notices.makeAsyncIterator()
            var latencies: [Double] = []
            for i in 0...rounds {
                let started = ContinuousClock.now
                _ = try await client.query(PostgresQuery(unsafeSQL: "NOTIFY roombridge_bench, '\(i)'"))
                _ = try await received.next()
                if i > 0 { latencies.append(milliseconds(ContinuousClock.now - started)) }
            }
            return latencies
        }
    }
}

struct BenchURLError: Error, CustomStringConvertible {
    let url: String
    var description: String { "not a postgresql://user@host:port/database URL: \(url)" }
}

func milliseconds(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
}

func reportLatency(_ name: String, _ samples: [Double]) {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return }
    let p50 = sorted[sorted.count / 2]
    let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
    print(String(format: "latency %@: p50 %.2f ms p99 %.2f ms n %d", name, p50, p99, sorted.count))
}
