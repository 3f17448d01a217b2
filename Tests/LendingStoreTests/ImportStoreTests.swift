import Foundation
import Lending
import LendingStore
import Testing

/// Imports applied by the store: one transaction, idempotent by ID, all or nothing unless partial.
@Suite("Import into the store (SQLite and PostgreSQL)")
struct ImportStoreTests {
    func run(_ store: any InventoryStore, _ kind: ImportKind, _ csv: String, dryRun: Bool = false,
             partial: Bool = false) async throws -> ImportReport {
        let (lines, problems) = InventoryImport.read(kind, csv: csv, at: at(0))
        return try await store.importLines(lines, problems: problems, dryRun: dryRun, partial: partial, at: at(0),
                                           by: .unixUser("alice"))
    }

    @Test(arguments: Backend.all) func idempotentByIDAndDryRunWritesNothing(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        let csv = "id,name\nU-1,User One\nU-2,Bea\nU-3,Cy\n"
        let preview = try await run(store, .users, csv, dryRun: true)
        #expect(preview.added == ["U-2", "U-3"] && preview.updated == ["U-1"] && !preview.written)
        #expect(try await store.user(id: "U-2") == nil)
        #expect(try await store.user(id: "U-1")?.name == "User 1")

        let first = try await run(store, .users, csv)
        #expect(first.written && first.added == ["U-2", "U-3"] && first.updated == ["U-1"])
        #expect(try await store.user(id: "U-1")?.registeredAt == base)  // kept
        let again = try await run(store, .users, csv)
        #expect(again.written && again.added.isEmpty && again.updated.isEmpty && again.unchanged == ["U-1", "U-2", "U-3"])

        let devices = try await run(store, .devices, "id,group_id,model,os_version\nD-001,iphone,Model D-001,2.0\nD-002,iphone,iPhone 16,18\n")
        #expect(devices.added == ["D-002"] && devices.updated == ["D-001"])
        let log = try await store.deviceLog(deviceId: "D-001", page: .first).items
        let change = try #require(log.first { $0.field == "osVersion" && $0.operation == .update })
        #expect(change.oldValue == "1.0" && change.newValue == "2.0" && change.actor == "unix:alice")
        #expect(try await store.device(id: "D-001")?.device.serialNumber == "")  // the file's value, not kept
    }

    @Test(arguments: Backend.all) func allOrNothingUnlessPartial(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        // Line 3: no such group (the store refuses it); line 4: an ID differing only in case.
        let csv = "id,group_id,model\nD-100,iphone,A\nD-101,nosuchgroup,B\nd-001,iphone,C\nD-102,iphone,D\n"
        let refused = try await run(store, .devices, csv)
        #expect(!refused.written && refused.problems.map(\.line) == [3, 4])
        #expect(refused.problems[0].reason.contains("nosuchgroup") && refused.problems[1].reason.contains("idCaseCollision"))
        #expect(try await store.device(id: "D-100") == nil)

        let partial = try await run(store, .devices, csv, partial: true)
        #expect(partial.written && partial.added == ["D-100", "D-102"] && partial.problems.count == 2)
        #expect(try await store.device(id: "D-100") != nil)
        #expect(try await store.device(id: "D-101") == nil)

        let badges = try await run(store, .badges, "identifier,user_id,label\n04A1B2C3,U-1,desk\n04A1B2C4,U-9,\n", partial: true)
        #expect(badges.added == ["04A1B2C3"] && badges.problems.map(\.line) == [3])
        let moved = try await run(store, .badges, "identifier,user_id,label\n04:a1:b2:c3,U-1,front desk\n")
        #expect(moved.updated == ["04A1B2C3"])
        #expect(try await store.badges(userId: "U-1").map(\.label) == ["front desk"])
    }
}
