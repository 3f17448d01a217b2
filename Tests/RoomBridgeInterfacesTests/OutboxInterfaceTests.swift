import Foundation
import Lending
import LendingStore
@testable import RoomBridgeInterfaces
import Testing
import Varlink

/// `io.roombridge.Outbox` on a temporary SQLite store with one target: replies match the IDL.
@Suite struct OutboxInterfaceTests {
    let idl: VarlinkInterfaceDefinition

    init() throws { idl = try VarlinkInterfaceDefinition(parsing: OutboxInterface.idl) }

    func call(_ interface: OutboxInterface, _ method: String, _ parameters: [String: JSONValue] = [:],
              uid: UInt32 = 0) async throws -> [String: JSONValue] {
        try idl.validateCall(method: method, parameters: parameters)
        let sink = LendingInterfacesTests.Sink()
        try await interface.handle(VarlinkCall(method: "\(idl.name).\(method)", parameters: parameters),
                                   context: VarlinkCallContext(peer: PeerCredentials(pid: 1, uid: uid, gid: uid)), replies: sink)
        let reply = sink.replies.withLock { $0.first } ?? [:]
        #expect(idl.firstInvalidField(reply, against: try #require(idl.methods[method]).output) == nil, "\(method): \(reply)")
        return reply
    }

    @Test func statusListsRetriesAndDrops() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rb-outboxapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await SQLiteInventoryStore.open(StoreConfiguration(
            path: dir.appendingPathComponent("db.sqlite").path, outboxRoutes: [OutboxRoute(target: "hook")]))
        defer { try? store.close() }
        let t = Date(timeIntervalSince1970: 1_780_000_000)
        try await store.addUser(User(id: "U-1", name: "Ada", registeredAt: t))
        try await store.addDevice(Device(id: "D-1", groupId: "iphone", model: "iPhone", serialNumber: "S", osVersion: "1",
                                         status: .normal, connectorType: "USB-C", registeredAt: t, note: nil), at: t)
        _ = try await store.lend(LendRequest(deviceId: "D-1", userId: "U-1", at: t))
        let api = OutboxInterface(store: store, targets: ["chat", "hook"], authorizer: Authorizer(groupName: "roombridge", gid: 4242),
                                  now: { t })

        let status = try await call(api, "Status")["targets"]?.arrayValue ?? []
        #expect(status.map { $0["target"]?.stringValue } == ["chat", "hook"])
        #expect(status[1]["pending"]?.intValue == 1 && status[0]["pending"]?.intValue == 0)

        let entries = try await call(api, "List", ["state": "pending"])["entries"]?.arrayValue ?? []
        #expect(entries.map { $0["kind"]?.stringValue } == ["lend"])
        // Times in the wire's one form, with milliseconds, like every Codable type's.
        #expect(entries.first?["createdAt"]?.stringValue == "2026-05-28T20:26:40.000Z")
        let seq = try #require(entries.first?["seq"]?.intValue)

        // Changing an entry needs the authorised group.
        await #expect(throws: VarlinkError.self) { _ = try await call(api, "Drop", ["seq": .int(seq)], uid: 65534) }
        _ = try await call(api, "Drop", ["seq": .int(seq)])
        #expect(try await call(api, "List", ["state": "dropped"])["entries"]?.arrayValue?.count == 1)
        _ = try await call(api, "Retry", ["seq": .int(seq)])
        #expect(try await call(api, "List", ["state": "pending"])["entries"]?.arrayValue?.count == 1)
        await #expect { _ = try await call(api, "Retry", ["seq": 999]) } throws: { error in
            (error as? VarlinkError)?.name == "io.roombridge.Outbox.NoSuchOutboxEntry"
        }
    }
}
