import Foundation
import Lending
import LendingStore
import Testing

/// Stocktakes on both stores: the four lists, stored by value, one open at a time, and scopes.
@Suite("Stocktakes (SQLite and PostgreSQL)")
struct StocktakeTests {
    func lists(_ report: StocktakeReport) -> [StocktakeEntry.List: [String]] {
        var out: [StocktakeEntry.List: [String]] = [:]
        for e in report.entries { out[e.list, default: []].append(e.deviceId ?? e.uid?.hex ?? "?") }
        return out
    }

    @Test(arguments: Backend.all) func closingGivesFoundMissingLentAndUnexpectedByValue(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 6, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        var disposed = try #require(try await store.device(id: "D-005")).device
        disposed.status = .disposed
        try await store.updateDevice(disposed, at: at(0))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(0)))
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-2", at: at(0)))
        let stocktake = try await store.startStocktake(.all, at: at(10), by: .unixUser("admin"))
        #expect(try await store.openStocktake()?.id == stocktake.id)
        await #expect(throws: LendingError.stocktakeOpen(stocktake.id)) { try await store.startStocktake(.all, at: at(11), by: nil) }
        #expect(try await store.recordStocktakeTap(stocktake: stocktake.id, uid: "04000000000001", deviceId: "D-001", at: at(20),
                                                   location: "front") == .counted(again: false))
        #expect(try await store.recordStocktakeTap(stocktake: stocktake.id, uid: "04000000000001", deviceId: "D-001", at: at(21),
                                                   location: "front") == .counted(again: true))
        _ = try await store.recordStocktakeTap(stocktake: stocktake.id, uid: "04000000000003", deviceId: "D-003", at: at(22), location: "front")
        #expect(try await store.recordStocktakeTap(stocktake: stocktake.id, uid: "04FFFFFFFFFFFF", deviceId: nil, at: at(23),
                                                   location: "back") == .unexpected)
        let open = try #require(try await store.openStocktake())
        #expect(open.counted == 2 && open.unexpected == 1)
        // Taps change nothing about rentals.
        #expect(try await store.activeRentals(userId: nil, page: .first).items.map(\.deviceId) == ["D-002", "D-003"])

        let report = try await store.closeStocktake(id: stocktake.id, at: at(30), by: .unixUser("admin"))
        #expect(report.stocktake.closedAt == at(30) && report.stocktake.closedBy == "unix:admin" && !report.stocktake.isOpen)
        #expect(lists(report) == [.found: ["D-001", "D-003"], .missing: ["D-004", "D-006"], .lent: ["D-002"],
                                  .unexpected: ["04FFFFFFFFFFFF"]])
        let lent = try #require(report.list(.lent).first)
        #expect(lent.userId == "U-1" && lent.userName == "User 1" && lent.model == "Model D-002" && lent.serialNumber == "SN-D-002")
        let found = try #require(report.list(.found).first)
        #expect(found.uid == "04000000000001" && found.tappedAt == at(20) && found.location == "front" && found.userName == nil)
        #expect(report.list(.unexpected).first?.location == "back")
        await #expect(throws: LendingError.stocktakeClosed(stocktake.id)) {
            try await store.recordStocktakeTap(stocktake: stocktake.id, uid: "04000000000004", deviceId: "D-004", at: at(40), location: nil)
        }
        await #expect(throws: LendingError.stocktakeClosed(stocktake.id)) { try await store.closeStocktake(id: stocktake.id, at: at(41), by: nil) }
        #expect(try await store.openStocktake() == nil)

        // By value: deleting the devices and the user leaves the report as it was.
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-002", at: at(50)))
        try await store.deleteDevice(id: "D-002", at: at(51))
        try await store.deleteDevice(id: "D-004", at: at(51))
        try await store.deleteUser(id: "U-1")
        #expect(try await store.stocktakeReport(id: stocktake.id) == report)
        // The next one can start; the list is newest first.
        let next = try await store.startStocktake(.all, at: at(60), by: nil)
        #expect(try await store.stocktakes(page: .first).items.map(\.id) == [next.id, stocktake.id])
        await #expect(throws: LendingError.noSuchStocktake(9999)) { try await store.closeStocktake(id: 9999, at: at(61), by: nil) }
    }

    /// A report row whose stored UID is not one (written past the store) is the database's damage:
    /// both stores say so instead of showing the row without its UID.
    @Test(arguments: Backend.all) func aDamagedStoredUIDIsReportedNotDropped(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        let stocktake = try await store.startStocktake(.all, at: at(10), by: nil)
        _ = try await store.recordStocktakeTap(stocktake: stocktake.id, uid: "04FFFFFFFFFFFF", deviceId: nil, at: at(20), location: nil)
        _ = try await store.closeStocktake(id: stocktake.id, at: at(30), by: nil)
        // Neither schema constrains the column's text, so another program can write this.
        try await fixture.execute("UPDATE stocktake_entries SET uid = 'not a uid' WHERE list = 'unexpected'")
        await #expect(throws: LendingError.storageCorrupt(path: "tag UID", detail: "\"not a uid\" is not a tag UID")) {
            try await store.stocktakeReport(id: stocktake.id)
        }
    }

    @Test(arguments: Backend.all) func aScopeIsAGroupOrTheDevicesAtOneLocation(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 4, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        try await store.addGroup(DeviceGroup(id: "tablets", name: "Tablets"))
        var tablet = try #require(try await store.device(id: "D-004")).device
        tablet.groupId = "tablets"
        try await store.updateDevice(tablet, at: at(0))
        await #expect(throws: LendingError.noSuchGroup("nope")) { try await store.startStocktake(.group("nope"), at: at(1), by: nil) }
        let group = try await store.startStocktake(.group("tablets"), at: at(1), by: nil)
        _ = try await store.recordStocktakeTap(stocktake: group.id, uid: "04000000000001", deviceId: "D-001", at: at(2), location: nil)
        let byGroup = try await store.closeStocktake(id: group.id, at: at(3), by: nil)
        #expect(lists(byGroup) == [.missing: ["D-004"], .unexpected: ["D-001"]])

        // D-001 came back at the front desk, D-002 was lent there and is still out, D-003 came back
        // elsewhere; D-004 was never lent, so it is at no location.
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(10), location: "back"))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(11), location: "front"))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(12), location: "front"))
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-1", at: at(13), location: "front"))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-003", at: at(14), location: "back"))
        let front = try await store.startStocktake(.location("front"), at: at(20), by: nil)
        #expect(front.scope == .location("front"))
        let byLocation = try await store.closeStocktake(id: front.id, at: at(21), by: nil)
        #expect(lists(byLocation) == [.missing: ["D-001"], .lent: ["D-002"]])
    }

    /// Two kiosks on one database start a stocktake at the same moment: one is open.
    @Test(arguments: Backend.all) func concurrentStartsOpenOne(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 1)
        let a = fixture.store
        let b = try await fixture.openAgain()
        defer { fixture.close(b) }
        let started = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<8 {
                let store = i % 2 == 0 ? a : b
                group.addTask { (try? await store.startStocktake(.all, at: at(0), by: nil)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(started == 1)
        #expect(try await b.stocktakes(page: .first).items.count == 1)
    }
}

/// The history query for a month's report: the rentals out at some time in a range.
@Suite("Rentals out in a range (SQLite and PostgreSQL)")
struct OverlappingHistoryTests {
    @Test(arguments: Backend.all) func overlappingSelectsWhatWasOutInTheRange(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 4, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        func lend(_ d: String, _ t: TimeInterval, back: TimeInterval?) async throws {
            _ = try await store.lend(LendRequest(deviceId: d, userId: "U-1", at: at(t)))
            if let back { _ = try await store.returnDevice(ReturnRequest(deviceId: d, at: at(back))) }
        }
        try await lend("D-001", 0, back: 50)      // before the range
        try await lend("D-002", 50, back: 150)    // into it
        try await lend("D-003", 120, back: 130)   // inside it
        try await lend("D-004", 90, back: nil)    // still out
        let range = HistoryQuery(since: at(100), until: at(200), overlapping: true)
        #expect(Set(try await store.allHistory(range).map(\.deviceId)) == ["D-002", "D-003", "D-004"])
        let lentIn = HistoryQuery(since: at(100), until: at(200))
        #expect(try await store.allHistory(lentIn).map(\.deviceId) == ["D-003"])
        // The month of `base` (2026-05 in UTC) through the store: four lent, three back.
        let report = try await store.monthlyReport(month: "2026-05", timeZone: TimeZone(secondsFromGMT: 0)!, now: at(300))
        #expect((report.lends, report.returns) == (4, 3) && report.borrowers.first?.rentals.count == 4)
        await #expect(throws: LendingError.self) {
            try await store.monthlyReport(month: "May", timeZone: TimeZone(secondsFromGMT: 0)!, now: at(300))
        }
    }
}
