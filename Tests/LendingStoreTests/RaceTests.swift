import Foundation
import Lending
import LendingStore
import Testing

@Suite("Two daemons on one database (SQLite and PostgreSQL)")
struct RaceTests {
    enum Attempt: Sendable { case lent(DeviceID), alreadyLent, returned, notLent }

    /// Two stores (as two daemons would have) race many lends and returns on the same
    /// few devices. Every attempt must end as a success or a clean domain refusal (no busy
    /// errors), and no device may ever have two active rentals.
    @Test(arguments: Backend.all) func racingLendsNeverLendADeviceTwice(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 4, users: 8)
        let a = fixture.store
        let b = try await fixture.openAgain()
        defer { fixture.close(b) }
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

        let duplicates = try await fixture.count("""
            SELECT COUNT(*) FROM (SELECT device_id FROM rentals WHERE returned_at IS NULL
                                  GROUP BY device_id HAVING COUNT(*) > 1) AS doubled
            """)
        let total = try await fixture.count("SELECT COUNT(*) FROM rentals")
        let activeCount = try await fixture.count("SELECT COUNT(*) FROM rentals WHERE returned_at IS NULL")
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

    /// Many kiosks lend the same device at the same moment through two stores: exactly one
    /// wins, and every other gets `AlreadyLent` naming the winner.
    @Test(arguments: Backend.all) func simultaneousLendsOfOneDeviceHaveOneWinner(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 16)
        let a = fixture.store
        let b = try await fixture.openAgain()
        defer { fixture.close(b) }
        let outcomes = try await withThrowingTaskGroup(of: Result<Rental, LendingError>.self) { group in
            for i in 0..<32 {
                let store = i % 2 == 0 ? a : b
                group.addTask {
                    do {
                        return .success(try await store.lend(LendRequest(deviceId: "D-001", userId: "U-\(i % 16 + 1)", at: at(Double(i)))))
                    } catch let error as LendingError {
                        return .failure(error)
                    }
                }
            }
            var all: [Result<Rental, LendingError>] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        let winners = outcomes.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        guard let winner = winners.first else { return }
        for case .failure(let error) in outcomes {
            #expect(error == .alreadyLent("D-001", userId: winner.userId, userName: winner.userName, since: winner.rentedAt))
        }
        #expect(try await fixture.count("SELECT COUNT(*) FROM rentals") == 1)
    }
}
