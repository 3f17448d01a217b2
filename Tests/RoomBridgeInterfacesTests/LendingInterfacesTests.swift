import Foundation
import Lending
import LendingStore
import RoomBridgeCore
@testable import RoomBridgeInterfaces
import Synchronization
import Testing
import Varlink
import VarlinkNIO

/// `io.roombridge.Inventory` and `io.roombridge.Lending` on a temporary SQLite store.
@Suite struct LendingInterfacesTests {
    /// Collects the replies a handler sends.
    final class Sink: VarlinkReplySink {
        let replies = Mutex<[[String: JSONValue]]>([])
        func reply(_ parameters: [String: JSONValue], continues: Bool) async throws {
            replies.withLock { $0.append(parameters) }
        }
    }

    struct Fixture {
        let dir: URL
        let store: SQLiteInventoryStore
        let state: SystemState
        let inventory: InventoryInterface
        let lending: LendingInterface
        let inventoryIDL: VarlinkInterfaceDefinition
        let lendingIDL: VarlinkInterfaceDefinition

        static let root = VarlinkCallContext(peer: PeerCredentials(pid: 1, uid: 0, gid: 0))

        /// Calls a method the way the service does (input validated against the IDL) and checks
        /// the reply against the method's declared output, or the error against its declaration.
        func call(_ method: String, _ parameters: [String: JSONValue] = [:],
                  context: VarlinkCallContext = root) async throws -> [String: JSONValue] {
            let call = VarlinkCall(method: method, parameters: parameters)
            let (interface, idl): (any VarlinkInterface, VarlinkInterfaceDefinition) =
                call.interface == inventory.name ? (inventory, inventoryIDL) : (lending, lendingIDL)
            try idl.validateCall(method: call.methodName, parameters: parameters)
            // A call the interface can also answer by offloaded work (GetDevice) must get the
            // same answer that way, on the store's thread.
            var offloaded: Result<[String: JSONValue], any Error>? = nil
            if let offload = (interface as? any VarlinkOffloadingInterface)?.offload(call, context: context) {
                offloaded = await withCheckedContinuation { continuation in
                    offload.schedule { continuation.resume(returning: Result { try offload.work() }) }
                }
            }
            let sink = Sink()
            do {
                try await interface.handle(call, context: context, replies: sink)
                if let offloaded {
                    #expect(try offloaded.get() == sink.replies.withLock { $0.first ?? [:] }, "\(method) offloaded")
                }
            } catch let error as VarlinkError {
                if let offloaded {
                    #expect(throws: error, "\(method) offloaded") { try offloaded.get() }
                }
                if error.name.hasPrefix(idl.name + ".") {
                    let short = String(error.name.dropFirst(idl.name.count + 1))
                    let declared = try #require(idl.errors[short], "\(error.name) is not declared")
                    #expect(idl.firstInvalidField(error.parameters, against: declared.parameters) == nil, "\(error)")
                }
                throw error
            }
            let replies = sink.replies.withLock { $0 }
            #expect(replies.count == 1)
            let reply = replies.first ?? [:]
            let output = try #require(idl.methods[call.methodName]).output
            #expect(idl.firstInvalidField(reply, against: output) == nil, "\(method) reply \(reply) does not match its IDL")
            return reply
        }

        func cleanup() { try? FileManager.default.removeItem(at: dir) }
    }

    func fixture() async throws -> Fixture {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rb-lendapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let store = try await SQLiteInventoryStore.open(StoreConfiguration(path: dir.appendingPathComponent("db.sqlite").path))
        let state = SystemState()
        let coordinator = LendingCoordinator(store: store, state: state, policy: LendingPolicy(defaultLoanPeriod: 7 * 86400),
                                             location: "test")
        let authorizer = Authorizer(groupName: "roombridge", gid: 4242)
        return Fixture(dir: dir, store: store, state: state,
                       inventory: InventoryInterface(store: store, authorizer: authorizer),
                       // Its clock runs ten days ahead, so loans due tomorrow are overdue.
                       lending: LendingInterface(lending: coordinator, authorizer: authorizer,
                                                 now: { Date().addingTimeInterval(10 * 86400) }),
                       inventoryIDL: try VarlinkInterfaceDefinition(parsing: InventoryInterface.idl),
                       lendingIDL: try VarlinkInterfaceDefinition(parsing: LendingInterface.idl))
    }

    func error(_ body: () async throws -> Void) async -> VarlinkError? {
        do { try await body() } catch let e as VarlinkError { return e } catch { Issue.record("\(error)") }
        return nil
    }

    @Test func interfaceDescriptionsParseAndNameTheirInterfaces() throws {
        #expect(try VarlinkInterfaceDefinition(parsing: InventoryInterface.idl).name == "io.roombridge.Inventory")
        #expect(try VarlinkInterfaceDefinition(parsing: LendingInterface.idl).name == "io.roombridge.Lending")
    }

    @Test func everyStoreErrorBecomesADeclaredErrorCarryingItsMessage() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        let samples: [LendingError] = [
            .noSuchDevice("D-1"), .noSuchUser("U-1"), .noSuchGroup("g"), .noSuchBadge("01020304"),
            .noSuchTagBinding("04"), .deviceAlreadyExists("D-1"), .userAlreadyExists("U-1"), .groupAlreadyExists("g"),
            .groupInUse("g", deviceCount: 2), .alreadyLent("D-1", userId: "U-1", userName: "Ada", since: Date()),
            .notLent("D-1"), .notLendable("D-1", status: .broken), .deviceIsLent("D-1", userId: "U-1"),
            .userHasDevices("U-1", deviceIds: ["D-1", "D-2"]), .uidAlreadyBound("04", boundTo: "device D-1"),
            .invalidCardIdentifier("xx", reason: "hex"), .invalidField("dueAt", reason: "before"), .invalidCursor("c"),
            .noArmedUser, .limitReached("U-1", userName: "Ada", limit: 2, deviceIds: ["D-1", "D-2"]),
        ]
        for idl in [f.inventoryIDL, f.lendingIDL] {
            for sample in samples {
                let e = LendingWireErrors.varlink(sample, interface: idl.name)
                let short = String(e.name.dropFirst(idl.name.count + 1))
                let declared = try #require(idl.errors[short], "\(e.name) not declared")
                #expect(idl.firstInvalidField(e.parameters, against: declared.parameters) == nil, "\(e)")
                #expect(e.parameters["message"]?.stringValue == sample.description)
            }
        }
    }

    @Test func crudPagingAndDeviceLog() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        _ = try await f.call("io.roombridge.Inventory.AddUser", ["id": "U-1", "name": "Ada"])
        for i in 1...5 {
            _ = try await f.call("io.roombridge.Inventory.AddDevice",
                                 ["id": .string("D-\(i)"), "fields": ["groupId": "iphone", "model": .string("iPhone \(i)"), "osVersion": "17.0"]])
        }
        var ids: [String] = []
        var cursor: JSONValue?
        repeat {
            var p: [String: JSONValue] = ["limit": 2]
            if let cursor { p["cursor"] = cursor }
            let page = try await f.call("io.roombridge.Inventory.ListDevices", p)
            let devices = try #require(page["devices"]?.arrayValue)
            #expect(devices.count <= 2)
            ids += devices.compactMap { $0["id"]?.stringValue }
            cursor = page["nextCursor"]
        } while cursor != nil
        #expect(ids == ["D-1", "D-2", "D-3", "D-4", "D-5"])

        let updated = try await f.call("io.roombridge.Inventory.UpdateDevice",
                                       ["id": "D-2", "fields": ["osVersion": "17.1", "status": "broken", "note": "cracked"]])
        let changed = Set(try #require(updated["changes"]?.arrayValue).compactMap { $0["field"]?.stringValue })
        #expect(changed == ["osVersion", "status", "note"])
        let log = try await f.call("io.roombridge.Inventory.DeviceLog", ["id": "D-2"])
        let first = try #require(log["entries"]?.arrayValue?.first { $0["field"]?.stringValue == "osVersion" && $0["operation"]?.stringValue == "update" })
        #expect(first["oldValue"]?.stringValue == "17.0" && first["newValue"]?.stringValue == "17.1")
        let broken = try await f.call("io.roombridge.Inventory.ListDevices", ["status": "broken"])
        #expect(broken["devices"]?.arrayValue?.map { $0["id"]?.stringValue } == ["D-2"])

        let badge = try await f.call("io.roombridge.Inventory.AddBadge", ["identifier": "04:a1:b2:c3", "userId": "U-1"])
        #expect(badge["badge"]?["identifier"]?.stringValue == "04A1B2C3")
        let e = await error { _ = try await f.call("io.roombridge.Inventory.BindTag", ["uid": "04A1B2C3", "deviceId": "D-1"]) }
        #expect(e?.name == "io.roombridge.Inventory.UidAlreadyBound")
        let missing = await error { _ = try await f.call("io.roombridge.Inventory.GetUser", ["id": "U-17"]) }
        #expect(missing?.name == "io.roombridge.Inventory.NoSuchUser")
        #expect(missing?.parameters["message"]?.stringValue == "no user U-17; see roombridgectl users list")
    }

    @Test func lendReturnAndHistoryWithTypedErrors() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        _ = try await f.call("io.roombridge.Inventory.AddUser", ["id": "U-1", "name": "Ada"])
        _ = try await f.call("io.roombridge.Inventory.AddDevice", ["id": "D-1", "fields": ["groupId": "ipad", "model": "iPad"]])
        _ = try await f.call("io.roombridge.Inventory.AddDevice",
                             ["id": "D-2", "fields": ["groupId": "ipad", "model": "iPad", "status": "disposed"]])
        let due = LendingFormat.iso8601(Date().addingTimeInterval(86400))
        let lent = try await f.call("io.roombridge.Lending.Lend", ["deviceId": "D-1", "userId": "U-1", "dueAt": .string(due)])
        #expect(lent["rental"]?["dueAt"]?.stringValue?.hasPrefix(String(due.dropLast())) == true)
        #expect(lent["rental"]?["overdue"]?.boolValue == true)
        let again = await error { _ = try await f.call("io.roombridge.Lending.Lend", ["deviceId": "D-1", "userId": "U-1"]) }
        #expect(again?.name == "io.roombridge.Lending.AlreadyLent")
        #expect(again?.parameters["userName"]?.stringValue == "Ada")
        let disposed = await error { _ = try await f.call("io.roombridge.Lending.Lend", ["deviceId": "D-2", "userId": "U-1"]) }
        #expect(disposed?.name == "io.roombridge.Lending.NotLendable")
        #expect(disposed?.parameters["status"]?.stringValue == "disposed")
        let overdue = try await f.call("io.roombridge.Lending.ListOverdue")
        #expect(overdue["rentals"]?.arrayValue?.count == 1)
        let device = try await f.call("io.roombridge.Inventory.GetDevice", ["id": "D-1"])
        #expect(device["device"]?["rental"]?["userId"]?.stringValue == "U-1")
        let missing = await error { _ = try await f.call("io.roombridge.Inventory.GetDevice", ["id": "D-404"]) }
        #expect(missing?.name == "io.roombridge.Inventory.NoSuchDevice")
        #expect(missing?.parameters["deviceId"]?.stringValue == "D-404")

        _ = try await f.call("io.roombridge.Lending.Return", ["deviceId": "D-1"])
        let notLent = await error { _ = try await f.call("io.roombridge.Lending.Return", ["deviceId": "D-1"]) }
        #expect(notLent?.name == "io.roombridge.Lending.NotLent")
        #expect(try await f.call("io.roombridge.Lending.ListActive")["rentals"]?.arrayValue?.isEmpty == true)

        let csv = try await f.call("io.roombridge.Lending.ExportHistory", ["format": "csv"])
        let lines = try #require(csv["text"]?.stringValue).components(separatedBy: "\r\n")
        #expect(lines.first == RentalExport.csvHeader.joined(separator: ","))
        #expect(lines.count == 3 && lines[1].contains(",D-1,iPad,") && lines[2].isEmpty)
        let json = try await f.call("io.roombridge.Lending.ExportHistory", ["format": "json", "userId": "U-1"])
        #expect(csv["count"]?.intValue == 1 && json["count"]?.intValue == 1)

        let badDate = await error { _ = try await f.call("io.roombridge.Lending.History", ["since": "last week"]) }
        #expect(badDate?.name == "io.roombridge.Lending.InvalidField")
        #expect(badDate?.parameters["field"]?.stringValue == "since")
        let badZone = await error { _ = try await f.call("io.roombridge.Lending.ExportHistory", ["format": "csv", "timeZone": "Mars/Base"]) }
        #expect(badZone?.name == "io.roombridge.Lending.InvalidField")
    }

    @Test func badgeLookupByUIDAndEveryBadgePaged() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        for (id, name) in [("U-1", "Ada"), ("U-2", "Bea")] {
            _ = try await f.call("io.roombridge.Inventory.AddUser", ["id": .string(id), "name": .string(name)])
        }
        for (card, user) in [("04:A1:B2:C3", "U-1"), ("04A1B2C4", "U-2"), ("04a1b2c5", "U-1")] {
            _ = try await f.call("io.roombridge.Inventory.AddBadge", ["identifier": .string(card), "userId": .string(user)])
        }
        let whose = try await f.call("io.roombridge.Inventory.GetBadge", ["identifier": "04-a1-b2-c4"])
        #expect(whose["user"]?["name"]?.stringValue == "Bea" && whose["badge"]?["identifier"]?.stringValue == "04A1B2C4")
        let unknown = await error { _ = try await f.call("io.roombridge.Inventory.GetBadge", ["identifier": "04FFFFFF"]) }
        #expect(unknown?.name == "io.roombridge.Inventory.NoSuchBadge")
        let first = try await f.call("io.roombridge.Inventory.ListBadges", ["limit": 2])
        let rest = try await f.call("io.roombridge.Inventory.ListBadges", ["limit": 2, "cursor": try #require(first["nextCursor"])])
        let all = (first["badges"]?.arrayValue ?? []) + (rest["badges"]?.arrayValue ?? [])
        #expect(all.map { $0["identifier"]?.stringValue } == ["04A1B2C3", "04A1B2C4", "04A1B2C5"] && rest["nextCursor"] == nil)
        let ada = try await f.call("io.roombridge.Inventory.ListBadges", ["userId": "U-1"])
        #expect(ada["badges"]?.arrayValue?.count == 2)
    }

    @Test func renewKeepsTheRentalAndReturnTakesANote() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        _ = try await f.call("io.roombridge.Inventory.AddUser", ["id": "U-1", "name": "Ada"])
        _ = try await f.call("io.roombridge.Inventory.AddDevice", ["id": "D-1", "fields": ["groupId": "ipad", "model": "iPad"]])
        let lent = try await f.call("io.roombridge.Lending.Lend", ["deviceId": "D-1", "userId": "U-1"])
        let due = LendingFormat.iso8601(Date().addingTimeInterval(30 * 86400))
        let renewed = try await f.call("io.roombridge.Lending.Renew", ["deviceId": "D-1", "dueAt": .string(due)])
        #expect(renewed["rental"]?["id"] == lent["rental"]?["id"])
        #expect(renewed["rental"]?["dueAt"]?.stringValue?.hasPrefix(String(due.dropLast())) == true)
        // Its clock runs ten days ahead: the renewed rental is no longer overdue.
        #expect(renewed["rental"]?["overdue"]?.boolValue == false)
        let log = try await f.call("io.roombridge.Inventory.DeviceLog", ["id": "D-1"])
        let entry = try #require(log["entries"]?.arrayValue?.first { $0["field"]?.stringValue == "dueAt" })
        #expect(entry["actor"]?.stringValue == "unix:0")  // the fixture's authorizer names no UIDs
        let past = await error { _ = try await f.call("io.roombridge.Lending.Renew", ["deviceId": "D-1", "dueAt": "2020-01-01"]) }
        #expect(past?.name == "io.roombridge.Lending.InvalidField" && past?.parameters["field"]?.stringValue == "dueAt")

        let returned = try await f.call("io.roombridge.Lending.Return", ["deviceId": "D-1", "note": "cracked screen", "broken": true])
        #expect(returned["rental"]?["returnNote"]?.stringValue == "cracked screen")
        let device = try await f.call("io.roombridge.Inventory.GetDevice", ["id": "D-1"])
        #expect(device["device"]?["status"]?.stringValue == "broken")
        let notLent = await error { _ = try await f.call("io.roombridge.Lending.Renew", ["deviceId": "D-1", "dueAt": .string(due)]) }
        #expect(notLent?.name == "io.roombridge.Lending.NotLent")
        let long = String(repeating: "x", count: Validation.maximumNoteLength + 1)
        _ = try await f.call("io.roombridge.Inventory.UpdateDevice", ["id": "D-1", "fields": ["status": "normal"]])
        _ = try await f.call("io.roombridge.Lending.Lend", ["deviceId": "D-1", "userId": "U-1"])
        let tooLong = await error { _ = try await f.call("io.roombridge.Lending.Return", ["deviceId": "D-1", "note": .string(long)]) }
        #expect(tooLong?.parameters["rule"]?.stringValue == "noteTooLong")
    }

    @Test func pagedCSVExportConcatenatesToTheWholeExport() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        _ = try await f.call("io.roombridge.Inventory.AddUser", ["id": "U-1", "name": "Ada"])
        _ = try await f.call("io.roombridge.Inventory.AddDevice", ["id": "D-1", "fields": ["groupId": "ipad", "model": "iPad"]])
        for _ in 0..<7 {
            _ = try await f.call("io.roombridge.Lending.Lend", ["deviceId": "D-1", "userId": "U-1"])
            _ = try await f.call("io.roombridge.Lending.Return", ["deviceId": "D-1"])
        }
        let whole = try await f.call("io.roombridge.Lending.ExportHistory", ["format": "csv", "byteOrderMark": true])
        var pieces = ""
        var pages = 0
        var p: [String: JSONValue] = ["format": "csv", "byteOrderMark": true, "limit": 3]
        while true {
            let reply = try await f.call("io.roombridge.Lending.ExportHistory", p)
            pieces += try #require(reply["text"]?.stringValue)
            pages += 1
            guard let next = reply["nextCursor"] else { break }
            p["cursor"] = next
        }
        #expect(pages == 3)
        #expect(whole["count"]?.intValue == 7)
        #expect(pieces == whole["text"]?.stringValue)
    }

    @Test func mutationsNeedTheGroupReadsDoNot() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        let stranger = VarlinkCallContext(peer: PeerCredentials(pid: 2, uid: 1000, gid: 1000))
        let member = VarlinkCallContext(peer: PeerCredentials(pid: 3, uid: 1001, gid: 1001, groups: [4242]))
        for (method, params) in [("io.roombridge.Inventory.AddUser", ["id": "U-1", "name": "Eve"] as [String: JSONValue]),
                                 ("io.roombridge.Inventory.DeleteDevice", ["id": "D-1"]),
                                 ("io.roombridge.Lending.Arm", ["userId": "U-1"]),
                                 ("io.roombridge.Lending.Disarm", [:])] {
            let e = await error { _ = try await f.call(method, params, context: stranger) }
            #expect(e?.name == "io.roombridge.State.PermissionDenied", "\(method)")
        }
        _ = try await f.call("io.roombridge.Inventory.ListDevices", context: stranger)
        _ = try await f.call("io.roombridge.Lending.ListActive", context: stranger)
        _ = try await f.call("io.roombridge.Inventory.AddUser", ["id": "U-1", "name": "Eve"], context: member)
        #expect(try await f.store.user(id: "U-1")?.name == "Eve")
    }

    @Test func armAndLendThroughARealServerArePublished() async throws {
        let f = try await fixture()
        defer { f.cleanup() }
        let path = f.dir.appendingPathComponent("s.sock").path
        let service = try VarlinkService(vendor: "test", product: "test", version: "0", url: "",
                                         interfaces: [f.inventory, f.lending])
        let server = try await VarlinkServer.bind(service: service, configuration: .init(listen: .path(path)))
        let run = Task { try await server.run() }
        let client = try await VarlinkClient.connect(path: path)
        _ = try await client.call("io.roombridge.Inventory.AddUser", parameters: ["id": "U-1", "name": "Ada"])
        _ = try await client.call("io.roombridge.Inventory.AddDevice",
                                  parameters: ["id": "D-1", "fields": ["groupId": "other", "model": "Phone"]])
        let session = try await client.call("io.roombridge.Lending.Arm", parameters: ["userId": "U-1"])
        #expect(session["session"]?["userName"]?.stringValue == "Ada")
        #expect(await f.state.snapshot().lending.armed?.userId == "U-1")
        let current = try await client.call("io.roombridge.Lending.GetSession")
        #expect(current["session"]?["userId"]?.stringValue == "U-1")
        _ = try await client.call("io.roombridge.Lending.Lend", parameters: ["deviceId": "D-1", "userId": "U-1"])
        let last = await f.state.snapshot().lending.lastOutcome
        #expect(last?.kind == .lent && last?.deviceId == "D-1")
        do {
            _ = try await client.call("io.roombridge.Lending.Lend", parameters: ["deviceId": "D-1", "userId": "U-1"])
            Issue.record("second lend succeeded")
        } catch let e as VarlinkError {
            #expect(e.name == "io.roombridge.Lending.AlreadyLent")
        }
        _ = try await client.call("io.roombridge.Lending.Disarm")
        #expect(try await client.call("io.roombridge.Lending.GetSession")["session"] == nil)
        #expect(await f.state.snapshot().lending.armed == nil)
        await client.close()
        await f.state.shutdown()
        await server.shutdown()
        _ = await run.result
    }

    @Test(arguments: [
        ("2026-11-21", "2026-11-21T00:00:00Z"),
        (" 2026-11-21\t", "2026-11-21T00:00:00Z"),
        ("2026-11-21T18:30:00Z", "2026-11-21T18:30:00Z"),
        (" 2026-11-21T18:30:00.250Z ", "2026-11-21T18:30:00Z"),
        ("2026-11-21T18:30:00.250Z", "2026-11-21T18:30:00Z"),
        ("2026-11-21T19:30:00+01:00", "2026-11-21T18:30:00Z"),
    ])
    func datesAcceptDaysAndISO8601(input: String, expected: String) throws {
        let date = try #require(WireTime.parseParameter(input))
        #expect(LendingFormat.iso8601(date) == expected)
    }

    @Test func datesRejectOtherText() {
        for text in ["tomorrow", "2026-13-01", "2026-02-30", "21.11.2026", ""] {
            #expect(WireTime.parseParameter(text) == nil, "\(text)")
        }
    }
}

/// Who acted: the socket peer's Unix user, or the person a trusted front end names.
@Suite struct ActorTests {
    let names: @Sendable (UInt32) -> String? = { [0: "root", 1000: "alice", 990: "roombridge-web"][$0] }

    /// A caller in the authorised group (900).
    func context(_ uid: UInt32) -> VarlinkCallContext { VarlinkCallContext(peer: PeerCredentials(pid: 9, uid: uid, gid: 900)) }

    @Test func thePeersUnixUserActs() throws {
        let a = Authorizer(groupName: "roombridge", gid: 900, userName: names)
        #expect(try a.actor(context(1000), named: nil) == .unixUser("alice"))
        #expect(try a.actor(context(1000), named: nil)?.text == "unix:alice")
        #expect(try a.actor(context(4321), named: nil)?.text == "unix:4321")  // no name: the UID
        #expect(try a.actor(VarlinkCallContext(), named: nil) == nil)
    }

    @Test func onlyRootAndActorUsersMayNameWhoTheyActFor() throws {
        let a = Authorizer(groupName: "roombridge", gid: 900, userName: names)
        #expect(try a.actor(context(990), named: "Ada Admin")?.text == "web:Ada Admin via unix:roombridge-web")
        #expect(try a.actor(context(0), named: "Ada Admin") == .signedIn("Ada Admin", via: "root"))
        #expect(throws: LendingError.self) { try a.actor(context(1000), named: "Ada Admin") }
        do throws(LendingError) {
            _ = try a.actor(context(1000), named: "Ada Admin")
        } catch {
            #expect(error.description.contains("auth.actor_users") && error.description.contains("unix:alice"))
        }
        #expect(throws: LendingError.self) { try a.actor(context(990), named: "  ") }
        #expect(throws: LendingError.self) { try a.actor(context(990), named: "Ada\u{1B}[2J") }
        #expect(throws: LendingError.self) { try a.actor(VarlinkCallContext(), named: "Ada") }
    }

    @Test func lendReturnAndDeviceChangesRecordTheActor() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rb-actor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await SQLiteInventoryStore.open(StoreConfiguration(path: dir.appendingPathComponent("db.sqlite").path))
        defer { try? store.close() }
        let authorizer = Authorizer(groupName: "roombridge", gid: 900, userName: names)
        let inventory = InventoryInterface(store: store, authorizer: authorizer)
        let lending = LendingInterface(lending: LendingCoordinator(store: store, state: SystemState()), authorizer: authorizer)
        func call(_ interface: any VarlinkInterface, _ method: String, _ p: [String: JSONValue], as uid: UInt32) async throws -> [String: JSONValue] {
            let sink = LendingInterfacesTests.Sink()
            try await interface.handle(VarlinkCall(method: method, parameters: p), context: context(uid), replies: sink)
            return sink.replies.withLock { $0.first ?? [:] }
        }
        _ = try await call(inventory, "io.roombridge.Inventory.AddUser", ["id": "U-1", "name": "Ada"], as: 0)
        _ = try await call(inventory, "io.roombridge.Inventory.AddDevice",
                           ["id": "D-1", "fields": ["groupId": "iphone", "model": "iPhone 15"]], as: 0)
        _ = try await call(inventory, "io.roombridge.Inventory.UpdateDevice",
                           ["id": "D-1", "fields": ["note": "spare"], "actor": "Ada Admin"], as: 990)
        let lent = try await call(lending, "io.roombridge.Lending.Lend", ["deviceId": "D-1", "userId": "U-1"], as: 0)
        #expect(lent["rental"]?["lentBy"]?.stringValue == "unix:root")
        let returned = try await call(lending, "io.roombridge.Lending.Return", ["deviceId": "D-1", "actor": "Ada Admin"], as: 990)
        #expect(returned["rental"]?["returnedBy"]?.stringValue == "web:Ada Admin via unix:roombridge-web")
        _ = try await call(lending, "io.roombridge.Lending.Lend", ["deviceId": "D-1", "userId": "U-1"], as: 0)
        let named = try await call(lending, "io.roombridge.Lending.Return", ["deviceId": "D-1", "returnedBy": "U-1"], as: 0)
        #expect(named["rental"]?["returnedBy"]?.stringValue == "U-1")

        let log = try await store.deviceLog(deviceId: "D-1", page: .first).items
        #expect(log.first { $0.field == "note" }?.actor == "web:Ada Admin via unix:roombridge-web")
        #expect(log.filter { $0.operation == .add }.allSatisfy { $0.actor == "unix:root" })
        let history = try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items
        #expect(history.map(\.lentBy) == ["unix:root", "unix:root"])
    }
}
