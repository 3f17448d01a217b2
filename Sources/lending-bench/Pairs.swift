import Foundation
import Lending

/// Durable lend+return pairs through any store: one task, then 8 concurrent tasks; the figures
/// roombridge-bench compares between SQLite and PostgreSQL. Odd device IDs are never open after the fill.
func timePairs(_ store: some InventoryStore, deviceCount: Int, pairs: Int, now: Date) async throws {
    let sequential = try await seconds {
        for i in 0..<pairs {
            let device = String(format: "D-%06d", (i * 37 % deviceCount) | 1)
            let t = now.addingTimeInterval(Double(i))
            _ = try await store.lend(LendRequest(deviceId: device, userId: "U-00001", at: t, location: "bench"))
            _ = try await store.returnDevice(ReturnRequest(deviceId: device, at: t.addingTimeInterval(0.5)))
        }
    }
    report("lend+return pairs, 1 task", count: pairs, seconds: sequential)

    // Same with 8 concurrent tasks (GRDB serializes writes; PostgreSQL's pool runs them in parallel).
    let concurrent = try await seconds {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<8 {
                group.addTask {
                    for i in 0..<(pairs / 8) {
                        // Each task has devices of its own (odd IDs w, w + 8, …): two tasks never lend one device.
                        let device = String(format: "D-%06d", 2 * (w + 8 * ((i * 13) % max(1, deviceCount / 16))) + 1)
                        let t = now.addingTimeInterval(Double(100_000 + i))
                        _ = try await store.lend(LendRequest(deviceId: device, userId: "U-00002", at: t))
                        _ = try await store.returnDevice(ReturnRequest(deviceId: device, at: t.addingTimeInterval(0.5)))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    report("lend+return pairs, 8 tasks", count: pairs, seconds: concurrent)
}

let lookups = 10_000

/// The lookup the desk asks most, through any store: "who has device X".
func timeWhoHas(_ store: some InventoryStore, deviceCount: Int) async throws {
    let ids = (0..<lookups).map { String(format: "D-%06d", ($0 * 7_919) % deviceCount) }
    let (whoHas, found) = try await timedLookups(ids) { [store] id in
        try await store.device(id: id)?.activeRental != nil
    }
    report("who has device X (device + active rental)", count: lookups, seconds: whoHas)
    print("  (\(found) of \(lookups) were lent)")
}

/// "What does user U have", through any store.
func timeUserHas(_ store: some InventoryStore, userCount: Int) async throws {
    var items = 0
    let userHas = try await seconds {
        for i in 0..<lookups {
            items += try await store.activeRentals(userId: String(format: "U-%05d", i % userCount), page: .first).items.count
        }
    }
    report("what does user U have (active rentals)", count: lookups, seconds: userHas)
    print("  (\(Double(items) / Double(lookups)) devices per user on average)")
}

func timedLookups(_ ids: [String], _ body: @Sendable (String) async throws -> Bool) async throws -> (seconds: Double, hits: Int) {
    var hits = 0
    let t = ContinuousClock.now
    for id in ids where try await body(id) { hits += 1 }
    let d = ContinuousClock.now - t
    return (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18, hits)
}

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let t = ContinuousClock.now
    try await body()
    let d = ContinuousClock.now - t
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

func report(_ name: String, count: Int, seconds: Double) {
    let perSecond = Double(count) / seconds
    let micros = seconds / Double(count) * 1e6
    let padded = name.padding(toLength: 44, withPad: " ", startingAt: 0)
    print(padded + String(format: " %9d ops %8.2f s %10.0f ops/s %9.1f µs/op", count, seconds, perSecond, micros))
}
