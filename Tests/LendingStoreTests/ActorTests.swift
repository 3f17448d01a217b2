import Foundation
import Lending
import Testing

/// Who lent, who returned, who changed a device: recorded by both backends.
@Suite("Actors on rentals and the device log (SQLite and PostgreSQL)")
struct ActorTests {
    @Test(arguments: Backend.all) func actorsAreRecordedAndReadBack(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 1)
        defer { fixture.close() }
        let store = fixture.store

        let rental = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(10), lentBy: .unixUser("alice")))
        #expect(rental.lentBy == "unix:alice")
        let returned = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(20),
                                                                  returnedBy: .signedIn("Ada Admin", via: "roombridge-web")))
        #expect(returned.returnedBy == "web:Ada Admin via unix:roombridge-web" && returned.lentBy == "unix:alice")
        let stored = try #require(try await store.history(HistoryQuery(deviceId: "D-001"), page: .first).items.first)
        #expect(stored.lentBy == "unix:alice" && stored.returnedBy == "web:Ada Admin via unix:roombridge-web")
        let anonymous = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(30)))
        #expect(anonymous.lentBy == nil)
        #expect(try await store.device(id: "D-001")?.activeRental?.lentBy == nil)
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-001", at: at(35)))

        var device = try #require(try await store.device(id: "D-001")).device
        device.status = .broken
        let changes = try await store.updateDevice(device, at: at(40), by: .user("U-1"))
        #expect(changes.map(\.actor) == ["U-1"])
        try await store.registerTag(uid: "04A1B2C3D4E5F6", deviceId: "D-001", at: at(45), by: .unixUser("bob"))
        try await store.deleteDevice(id: "D-001", at: at(50), by: .unixUser("root"))
        let log = try await store.deviceLog(deviceId: "D-001", page: PageRequest(limit: 100)).items
        #expect(log.filter { $0.operation == .add }.allSatisfy { $0.actor == nil })  // seeded without an actor
        #expect(log.filter { $0.operation == .delete }.allSatisfy { $0.actor == "unix:root" })
        #expect(log.first { $0.field == "status" && $0.operation == .update }?.actor == "U-1")
        #expect(log.first { $0.field == "isNFCRegistered" && $0.operation == .update }?.actor == "unix:bob")
    }
}
