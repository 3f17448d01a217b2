import Lending
import LendingStore
import Testing

/// Single-row lookups: fresh across stores on one file, and right when many run at once.
@Suite struct LookupTests {
    @Test func lookupsSeeAnotherStoresCommitsAndManyAtOnceAllAnswer() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir, devices: 20)
        defer { try? store.close() }
        // A second store on the same file: another daemon.
        let other = try await SQLiteInventoryStore.open(config(dir.database))
        defer { try? other.close() }

        #expect(try await store.device(id: "D-007")?.activeRental == nil)
        _ = try await other.lend(LendRequest(deviceId: "D-007", userId: "U-2", at: at(10)))
        #expect(try await store.device(id: "D-007")?.activeRental?.userId == "U-2")

        // Many at once, more than the pool has readers: all answer right.
        let answers = try await withThrowingTaskGroup(of: (String, String?).self) { group in
            for _ in 0..<10 {
                for n in 1...20 {
                    let id = String(format: "D-%03d", n)
                    group.addTask { (id, try await store.device(id: id)?.activeRental?.userId) }
                }
            }
            return try await group.reduce(into: [(String, String?)]()) { $0.append($1) }
        }
        #expect(answers.count == 200)
        #expect(answers.allSatisfy { $0.0 == "D-007" ? $0.1 == "U-2" : $0.1 == nil })
        #expect(try await store.user(id: "U-2")?.id == "U-2")
        #expect(try await store.device(id: "D-999") == nil)
    }

    /// The lookup reads its row by position: every field of the device and of its rental comes back
    /// as written, NULLs as nil, through `device(id:)`, `devices(_:page:)` and `resolve(uid:)`.
    @Test func aLookupReadsBackEveryFieldOfTheDeviceAndItsRental() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir, devices: 0)
        defer { try? store.close() }
        let device = Device(id: "D-100", groupId: "android-phone", model: "Pixel 7", serialNumber: "SN-100",
                            osVersion: "15", status: .broken, connectorType: "USB-C", registeredAt: at(1),
                            note: "spare", isNFCRegistered: true)
        try await store.addDevice(device, at: at(1))
        let bare = Device(id: "D-101", groupId: "android-phone", model: "Pixel 8", registeredAt: at(2))
        try await store.addDevice(bare, at: at(2))
        let lent = try await store.lend(LendRequest(deviceId: "D-101", userId: "U-1", at: at(3), dueAt: at(86_400),
                                                    location: "desk", lentBy: .unixUser("alice")))
        try await store.bindTag(TagBinding(uid: "04112233445566", deviceId: "D-101", boundAt: at(4)))

        #expect(try await store.device(id: "D-100") == DeviceRecord(device: device, activeRental: nil))
        let record = try #require(try await store.device(id: "D-101"))
        var registered = bare
        registered.isNFCRegistered = true  // its tag is bound now
        #expect(record.device == registered)
        #expect(record.activeRental == lent)
        #expect(lent.dueAt == at(86_400) && lent.location == "desk" && lent.lentBy == "unix:alice" && lent.returnedAt == nil)
        #expect(try await store.devices(DeviceFilter(), page: PageRequest(limit: 10)).items == [DeviceRecord(device: device), record])
        guard case .device(let resolved)? = try await store.resolve(uid: "04112233445566") else {
            Issue.record("the bound tag does not resolve to its device"); return
        }
        #expect(resolved == record)
    }

    /// What `Inventory.GetDevice` answers: the record with its rental and every tag bound to it,
    /// ordered by UID; nothing for a device that is not there (or no longer).
    @Test(arguments: Backend.all) func aDeviceDetailHasTheRecordAndItsTags(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        #expect(try await store.deviceDetail(id: "D-001") == DeviceDetail(record: try #require(try await store.device(id: "D-001")), tags: []))
        let rental = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(3)))
        try await store.bindTag(TagBinding(uid: "04FFEEDDCCBBAA", deviceId: "D-001", boundAt: at(4)))
        try await store.bindTag(TagBinding(uid: "0411223344", deviceId: "D-001", boundAt: at(5)))
        try await store.bindTag(TagBinding(uid: "04AABBCCDD", deviceId: "D-002", boundAt: at(6)))
        let detail = try #require(try await store.deviceDetail(id: "D-001"))
        #expect(detail.record == (try await store.device(id: "D-001")))
        #expect(detail.record.activeRental == rental && detail.record.device.isNFCRegistered)
        #expect(detail.tags == [TagBinding(uid: "0411223344", deviceId: "D-001", boundAt: at(5)),
                                TagBinding(uid: "04FFEEDDCCBBAA", deviceId: "D-001", boundAt: at(4))])
        #expect(try await store.deviceDetail(id: "D-999") == nil)
        try await store.deleteDevice(id: "D-002", at: at(7))
        #expect(try await store.deviceDetail(id: "D-002") == nil)
    }

    @Test func aClosedStoreRefusesLookups() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        try store.close()
        await #expect(throws: (any Error).self) { try await store.device(id: "D-001") }
    }
}
