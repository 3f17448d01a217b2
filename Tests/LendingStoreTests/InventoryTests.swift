import Foundation
import Lending
import LendingStore
import Testing

@Suite("Inventory CRUD, device log, paging and filters (SQLite and PostgreSQL)")
struct InventoryTests {
    @Test(arguments: Backend.all) func deviceLifecycleWritesOneLogRowPerField(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 0)
        defer { fixture.close() }
        let store = fixture.store

        var device = makeDevice("D-9")
        try await store.addDevice(device, at: at(0))
        await #expect(throws: LendingError.deviceAlreadyExists("D-9")) { try await store.addDevice(device, at: at(1)) }
        await #expect(throws: LendingError.noSuchGroup("pager")) {
            try await store.addDevice(makeDevice("D-10", group: "pager"), at: at(1))
        }
        let blank = await #expect(throws: LendingError.self) { try await store.addDevice(makeDevice(" "), at: at(1)) }
        guard case .ruleViolated(.idCharacters, "device ID", _)? = blank else {
            Issue.record("expected the rule idCharacters, got \(String(describing: blank))")
            return
        }

        device.osVersion = "2.0"
        device.status = .broken
        device.note = "cracked screen"
        let entries = try await store.updateDevice(device, at: at(10))
        #expect(entries.map(\.field) == ["osVersion", "status", "note"])
        #expect(entries.map(\.oldValue) == ["1.0", "normal", nil])
        #expect(entries.map(\.newValue) == ["2.0", "broken", "cracked screen"])
        #expect(try await store.updateDevice(device, at: at(11)).isEmpty)
        await #expect(throws: LendingError.noSuchDevice("D-404")) {
            try await store.updateDevice(makeDevice("D-404"), at: at(12))
        }

        try await store.deleteDevice(id: "D-9", at: at(20))
        #expect(try await store.device(id: "D-9") == nil)
        // The log survives the deletion: 9 add rows minus the nil note, 3 updates, 9 deletes.
        let log = try await store.deviceLog(deviceId: "D-9", page: PageRequest(limit: 100)).items
        #expect(log.filter { $0.operation == .add }.count == 8)
        #expect(log.filter { $0.operation == .update }.count == 3)
        #expect(log.filter { $0.operation == .delete }.count == 9)
        #expect(log.first?.operation == .delete)  // newest first
        #expect(log.first { $0.operation == .delete && $0.field == "note" }?.oldValue == "cracked screen")
        #expect(log.allSatisfy { $0.operation != .update || $0.at == at(10) })

        // Paging the log.
        let firstPage = try await store.deviceLog(deviceId: "D-9", page: PageRequest(limit: 15))
        let secondPage = try await store.deviceLog(deviceId: "D-9", page: PageRequest(limit: 15, cursor: firstPage.nextCursor))
        #expect(firstPage.items.count == 15 && secondPage.items.count == 5 && secondPage.nextCursor == nil)
        #expect(firstPage.items + secondPage.items == log)
    }

    @Test(arguments: Backend.all) func groupsAreDataWithStableIDs(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1)
        defer { fixture.close() }
        let store = fixture.store
        try await store.addGroup(DeviceGroup(id: "watch", name: "Smart watch", sortOrder: 50))
        await #expect(throws: LendingError.groupAlreadyExists("watch")) {
            try await store.addGroup(DeviceGroup(id: "watch", name: "x"))
        }
        try await store.updateGroup(DeviceGroup(id: "watch", name: "Wearable", sortOrder: 5))
        #expect(try await store.groups().first == DeviceGroup(id: "watch", name: "Wearable", sortOrder: 5))
        await #expect(throws: LendingError.groupInUse("iphone", deviceCount: 1)) { try await store.deleteGroup(id: "iphone") }
        try await store.deleteGroup(id: "watch")
        await #expect(throws: LendingError.noSuchGroup("watch")) { try await store.deleteGroup(id: "watch") }
    }

    @Test(arguments: Backend.all) func pagingAndFiltersAreRangeQueries(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 0, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        for i in 1...25 {
            let group = i % 2 == 0 ? "iphone" : "android-phone"
            let status: DeviceStatus = i % 5 == 0 ? .broken : .normal
            try await store.addDevice(makeDevice(String(format: "D-%03d", i), group: group, status: status,
                                                 model: i == 7 ? "Pixel 100%_Pro" : nil), at: base)
        }
        for id in ["D-001", "D-002", "D-003"] {
            _ = try await store.lend(LendRequest(deviceId: id, userId: "U-1", at: at(0)))
        }

        var seen: [String] = []
        var request = PageRequest(limit: 10)
        var pages = 0
        while true {
            let page = try await store.devices(DeviceFilter(), page: request)
            seen += page.items.map(\.device.id)
            pages += 1
            guard let next = page.nextCursor else { break }
            request.cursor = next
        }
        #expect(pages == 3)
        #expect(seen == (1...25).map { String(format: "D-%03d", $0) })

        let iphones = try await store.devices(DeviceFilter(groupId: "iphone"), page: PageRequest(limit: 100)).items
        #expect(iphones.count == 12 && iphones.allSatisfy { $0.device.groupId == "iphone" })
        let broken = try await store.devices(DeviceFilter(status: .broken), page: PageRequest(limit: 100)).items
        #expect(broken.map(\.device.id) == ["D-005", "D-010", "D-015", "D-020", "D-025"])
        let lent = try await store.devices(DeviceFilter(isLent: true), page: PageRequest(limit: 100)).items
        #expect(lent.map(\.device.id) == ["D-001", "D-002", "D-003"])
        #expect(lent.allSatisfy { $0.activeRental?.userId == "U-1" })
        let available = try await store.devices(DeviceFilter(groupId: "android-phone", status: .normal, isLent: false),
                                                page: PageRequest(limit: 100)).items
        #expect(available.count == 13 - 3 - 2)  // odd IDs, minus broken D-005/015/025, minus lent D-001/003
        #expect(available.allSatisfy { !$0.isLent && $0.device.status == .normal && $0.device.groupId == "android-phone" })
        // LIKE wildcards in the search text are literal.
        let text = try await store.devices(DeviceFilter(text: "100%_p"), page: .first).items
        #expect(text.map(\.device.id) == ["D-007"])
        #expect(try await store.devices(DeviceFilter(text: "D%"), page: .first).items.isEmpty)
        await #expect(throws: LendingError.invalidCursor("x")) {
            try await store.history(HistoryQuery(), page: PageRequest(cursor: "x"))
        }
    }

    @Test(arguments: Backend.all) func usersAndBadges(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 3)
        defer { fixture.close() }
        let store = fixture.store
        await #expect(throws: LendingError.userAlreadyExists("U-1")) {
            try await store.addUser(User(id: "U-1", name: "Again", registeredAt: base))
        }
        try await store.updateUser(User(id: "U-2", name: "佐藤 花子", registeredAt: base))
        #expect(try await store.user(id: "U-2")?.name == "佐藤 花子")
        let named = try await store.users(nameContains: "user", page: .first).items
        #expect(named.map(\.id) == ["U-1", "U-3"])
        let page1 = try await store.users(nameContains: nil, page: PageRequest(limit: 2))
        let page2 = try await store.users(nameContains: nil, page: PageRequest(limit: 2, cursor: page1.nextCursor))
        #expect((page1.items + page2.items).map(\.id) == ["U-1", "U-2", "U-3"])

        try await store.addBadge(Badge(identifier: "04:a1:b2:c3", kind: .iso14443a, userId: "U-1", registeredAt: base))
        try await store.addBadge(Badge(identifier: "0123456789abcdef", kind: .felica, userId: "U-1", registeredAt: base))
        await #expect(throws: LendingError.noSuchUser("U-404")) {
            try await store.addBadge(Badge(identifier: "04FFFFFF", kind: .iso14443a, userId: "U-404", registeredAt: base))
        }
        await #expect(throws: LendingError.uidAlreadyBound("04A1B2C3", boundTo: "a badge of user U-1")) {
            try await store.addBadge(Badge(identifier: "04A1B2C3", kind: .iso14443a, userId: "U-2", registeredAt: base))
        }
        #expect(try await store.badges(userId: "U-1").map(\.identifier) == ["0123456789ABCDEF", "04A1B2C3"])
        guard case .badge(let badge, let user)? = try await store.resolve(uid: "04 A1 B2 C3") else {
            Issue.record("badge not resolved")
            return
        }
        #expect(badge.kind == .iso14443a && user.id == "U-1")

        // A badge UID cannot become a device tag, and vice versa (also through raw SQL).
        await #expect(throws: LendingError.uidAlreadyBound("04A1B2C3", boundTo: "a badge of user U-1")) {
            try await store.bindTag(TagBinding(uid: "04A1B2C3", deviceId: "D-001", boundAt: base))
        }
        try await store.registerTag(uid: "04:11:22:33:44:55:66", deviceId: "D-001", at: at(5))
        await #expect(throws: LendingError.uidAlreadyBound("04112233445566", boundTo: "device D-001")) {
            try await store.addBadge(Badge(identifier: "04112233445566", kind: .iso14443a, userId: "U-2", registeredAt: base))
        }
        await #expect(throws: (any Error).self) {
            try await fixture.execute("INSERT INTO badges VALUES ('04112233445566', 'iso14443a', 'U-2', 0, NULL)")
        }

        // Registration marks the device and logs it once.
        guard case .device(let record)? = try await store.resolve(uid: "04112233445566") else {
            Issue.record("tag not resolved")
            return
        }
        #expect(record.device.isNFCRegistered)
        try await store.registerTag(uid: "04112233445566", deviceId: "D-001", at: at(6))
        let log = try await store.deviceLog(deviceId: "D-001", page: .first).items
        #expect(log.filter { $0.field == "isNFCRegistered" && $0.operation == .update }.count == 1)
        #expect(try await store.tagBindings(deviceId: "D-001").map(\.uid) == ["04112233445566"])

        // Deleting cascades to badges and tag bindings.
        try await store.deleteUser(id: "U-1")
        #expect(try await store.resolve(uid: "04A1B2C3") == nil)
        await #expect(throws: LendingError.noSuchBadge("04A1B2C3")) { try await store.deleteBadge(identifier: "04A1B2C3") }
        try await store.deleteDevice(id: "D-001", at: at(7))
        #expect(try await store.resolve(uid: "04112233445566") == nil)
        await #expect(throws: LendingError.noSuchTagBinding("04112233445566")) { try await store.unbindTag(uid: "04112233445566") }
    }
}

/// The validation rules, applied by the store to every change.
/// Issue 32: a device whose tag was bound with `tag bind` lent when tapped, yet showed
/// "NFC tag: no". A bound UID is a registered tag, whichever way it was bound.
@Suite("NFC registration follows the bindings (SQLite and PostgreSQL)") struct NFCRegistrationTests {
    @Test(arguments: Backend.all) func bindingRegistersAndUnbindingTheLastTagUnregisters(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        try await store.bindTag(TagBinding(uid: "04A1B2C3D4E5F6", deviceId: "D-001", boundAt: base))
        try await store.bindTag(TagBinding(uid: "04B1B2B3B4B5B6", deviceId: "D-001", boundAt: base))
        #expect(try await store.device(id: "D-001")?.device.isNFCRegistered == true)
        #expect(try await store.device(id: "D-002")?.device.isNFCRegistered == false)
        let registered = try await store.devices(DeviceFilter(isNFCRegistered: true), page: .first).items
        #expect(registered.map(\.device.id) == ["D-001"])
        try await store.unbindTag(uid: "04A1B2C3D4E5F6")
        #expect(try await store.device(id: "D-001")?.device.isNFCRegistered == true)  // one tag left
        try await store.unbindTag(uid: "04B1B2B3B4B5B6")
        #expect(try await store.device(id: "D-001")?.device.isNFCRegistered == false)
        let log = try await store.deviceLog(deviceId: "D-001", page: .first).items
            .filter { $0.field == "isNFCRegistered" && $0.operation == .update }
        let changes = Set(log.map { [$0.oldValue ?? "", $0.newValue ?? ""] })
        #expect(log.count == 2 && changes == [["false", "true"], ["true", "false"]])
    }
}

@Suite("Validation by the store (SQLite and PostgreSQL)") struct StoreValidationTests {
    func rule(_ body: () async throws -> Void) async -> ValidationRule? {
        do { try await body() } catch let error as LendingError {
            if case .ruleViolated(let rule, _, _) = error { return rule }
        } catch {}
        return nil
    }

    @Test(arguments: Backend.all) func everyChangeIsValidated(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 0, users: 0)
        defer { fixture.close() }
        let store = fixture.store
        try await store.addDevice(makeDevice("D-0001"), at: at(0))
        #expect(await rule { try await store.addDevice(makeDevice("d-0001"), at: at(1)) } == .idCaseCollision)
        #expect(await rule { try await store.addDevice(makeDevice("D 2"), at: at(1)) } == .idCharacters)
        #expect(await rule { try await store.addDevice(makeDevice(String(repeating: "D", count: 65)), at: at(1)) } == .idTooLong)
        #expect(await rule { try await store.addDevice(makeDevice("D-3", model: "  "), at: at(1)) } == .blankName)
        var device = try #require(try await store.device(id: "D-0001")).device
        device.model = String(repeating: "m", count: 201)
        #expect(await rule { try await store.updateDevice(device, at: at(2)) } == .nameTooLong)

        try await store.addUser(User(id: "U-1", name: "Ada", registeredAt: at(0)))
        #expect(await rule { try await store.addUser(User(id: "u-1", name: "Eve", registeredAt: at(0))) } == .idCaseCollision)
        #expect(await rule { try await store.addUser(User(id: "U-2", name: " ", registeredAt: at(0))) } == .blankName)
        #expect(await rule { try await store.updateUser(User(id: "U-1", name: "", registeredAt: at(0))) } == .blankName)
        #expect(await rule { try await store.addGroup(DeviceGroup(id: "IPHONE", name: "Upper")) } == .idCaseCollision)
        #expect(await rule { try await store.addGroup(DeviceGroup(id: "pager", name: "")) } == .blankName)
        // Nothing of it was written.
        #expect(try await store.devices(DeviceFilter(), page: .first).items.map(\.device.id) == ["D-0001"])
        #expect(try await store.user(id: "U-1")?.name == "Ada")
    }
}
