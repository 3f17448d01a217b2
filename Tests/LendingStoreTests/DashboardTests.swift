import Foundation
import Lending
import LendingStore
import Testing

/// The dashboard on both stores: now by group, the days in the kiosk's zone, the median rental,
/// the busiest devices and those never lent.
@Suite("Dashboard (SQLite and PostgreSQL)")
struct DashboardTests {
    static let day: TimeInterval = 86_400

    @Test(arguments: Backend.all) func theFiguresComeFromTheRentalsOfThePeriod(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 6, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        let d = Self.day
        try await store.addGroup(DeviceGroup(id: "tablets", name: "Tablets", sortOrder: 50))
        try await store.addDevice(makeDevice("D-007", group: "tablets"), at: base)
        for (id, status) in [("D-004", DeviceStatus.broken), ("D-005", .disposed)] {
            var device = try #require(try await store.device(id: id)).device
            device.status = status
            try await store.updateDevice(device, at: base)
        }
        // D-001: lent, overdue a day, back; lent again, due tomorrow. D-002: overdue since yesterday.
        // D-003: back before its due date. base is 2026-05-28 20:26:40 UTC.
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(-3 * d), dueAt: at(-2 * d)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(-1 * d)))
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(-1 * d + 3600), dueAt: at(d)))
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(-2 * d), dueAt: at(-1 * d)))
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-2", at: at(-2 * d), dueAt: at(-1 * d)))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-003", at: at(-1.5 * d)))

        let utc = try #require(TimeZone(identifier: "UTC"))
        let board = try await store.dashboard(days: 5, timeZone: utc, now: at(0))
        #expect(board.from == KioskDay(year: 2026, month: 5, day: 24).start(in: utc) && board.until == at(0))
        #expect(board.days.map(\.day) == ["2026-05-24", "2026-05-25", "2026-05-26", "2026-05-27", "2026-05-28"])
        #expect(board.days.map(\.lends) == [0, 1, 2, 1, 0])
        #expect(board.days.map(\.overdue) == [0, 0, 1, 1, 0])
        #expect(board.medianRentalSeconds == Int(1.25 * d))  // 2 days and half a day
        #expect(board.topDevices.map(\.deviceId) == ["D-001", "D-002", "D-003"] && board.topDevices.map(\.lends) == [2, 1, 1])
        let groups = Dictionary(uniqueKeysWithValues: board.groups.map { ($0.groupId, $0) })
        #expect(groups["iphone"] == LendingDashboard.GroupLoad(groupId: "iphone", name: groups["iphone"]?.name ?? "", devices: 5,
                                                                lent: 2, overdue: 1, available: 2, broken: 1))
        #expect(groups["tablets"] == LendingDashboard.GroupLoad(groupId: "tablets", name: "Tablets", devices: 1, lent: 0, overdue: 0,
                                                                 available: 1, broken: 0))
        // Never lent: the broken D-004, D-006 and D-007; the disposed D-005 is not counted.
        #expect(board.neverLentCount == 3 && board.neverLent.map(\.deviceId) == ["D-004", "D-006", "D-007"])

        // The same rentals by Tokyo's days (UTC+9).
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let inTokyo = try await store.dashboard(days: 5, timeZone: tokyo, now: at(0))
        #expect(inTokyo.days.map(\.day) == ["2026-05-25", "2026-05-26", "2026-05-27", "2026-05-28", "2026-05-29"])
        #expect(inTokyo.days.map(\.lends) == [0, 1, 2, 1, 0])

        await #expect(throws: LendingError.invalidField("days", reason: "give 1 to 366 days, got 0")) {
            try await store.dashboard(days: 0, timeZone: utc, now: at(0))
        }
    }

    @Test(arguments: Backend.all) func anEmptyInventoryHasNoMedianAndNoDays(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 0, users: 0)
        defer { fixture.close() }
        let board = try await fixture.store.dashboard(days: 1, timeZone: try #require(TimeZone(identifier: "UTC")), now: at(0))
        #expect(board.groups.isEmpty && board.medianRentalSeconds == nil && board.topDevices.isEmpty && board.neverLentCount == 0)
        #expect(board.days == [LendingDashboard.DayLoad(day: "2026-05-28", lends: 0, overdue: 0)])
    }
}
