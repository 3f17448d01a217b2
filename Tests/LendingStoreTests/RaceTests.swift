import Foundation
import GRDB
import Lending
import LendingStore
import Testing

@Suite("Two daemons on one file")
struct RaceTests {
    enum Attempt: Sendable { case lent(DeviceID), alreadyLent, returned, notLent }

    /// Two `DatabasePool`s (as two daemons would have) race many lends and returns on the same
    /// few devices. Every attempt must end as a success or a clean domain refusal (no busy
    /// errors), and no device may ever have two active rentals.
    @Test func racingLendsNeverLendADeviceTwice() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let a = try await seededStore(dir, devices: 4, users: 8)
        defer { try? a.close() }
        let b = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? b.close() }
        let devices = ["D-001", "D-002", "D-003", "D-004"]

        let attempts = try await withThrowingTaskGroup(of: Attempt.self) { group in
            for i in 0..<400 {
                let store = i % 2 == 0 ? a : b
                let device = devices[(i / 2) % devices.count]
                let user = "U-\(i % 8 + 1)"
                group.addTask {
                    if i % 5 == 4 {
                        do {
                            _ = try await store.returnDevice(ReturnRequest(deviceId: device, at: at(Double(i))))
                            return .returned
                        } catch LendingError.notLent {
                            return .notLent
                        }
                    }
                    do {
                        _ = try await store.lend(LendRequest(deviceId: device, userId: user, at: at(Double(i))))
                        return .lent(device)
                    } catch LendingError.alreadyLent {
                        return .alreadyLent
                    }
                }
            }
            var all: [Attempt] = []
            for try await attempt in group { all.append(attempt) }
            return all
        }
        #expect(attempts.count == 400)

        let raw = try DatabaseQueue(path: dir.database)
        defer { try? raw.close() }
        let (duplicates, total, activeCount) = try await raw.read { db in
            (try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM (SELECT device_id FROM rentals WHERE returned_at IS NULL
                                      GROUP BY device_id HAVING COUNT(*) > 1)
                """) ?? -1,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM rentals") ?? -1,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM rentals WHERE returned_at IS NULL") ?? -1)
        }
        #expect(duplicates == 0)
        let lends = attempts.filter { if case .lent = $0 { true } else { false } }.count
        let returns = attempts.filter { if case .returned = $0 { true } else { false } }.count
        #expect(total == lends)  // every acknowledged lend is recorded, nothing else is
        #expect(activeCount == lends - returns)
        let refused = attempts.filter { if case .alreadyLent = $0 { true } else { false } }.count
        #expect(lends >= devices.count && lends <= returns + devices.count)
        #expect(lends + refused == 320 && refused > 0)  // every lend attempt ended cleanly; some lost the race
        for device in devices {
            let record = try await a.device(id: device)
            let viaB = try await b.device(id: device)
            #expect(record?.activeRental == viaB?.activeRental)
        }
    }
}
