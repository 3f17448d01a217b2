import Foundation
import Lending
import struct RoomBridgeCore.TagUID
import Varlink
import RoomBridgeAPI

/// `io.roombridge.Inventory`: create, change, delete, get and list groups, devices, users,
/// badges and tag bindings; a device's change log. Store errors become the typed errors
/// declared in ``idl``.
public struct InventoryInterface: VarlinkOffloadingInterface {
    public let name = "io.roombridge.Inventory"
    public var interfaceDescription: String { Self.idl }
    /// The interface's description, the contract's text (`RoomBridgeAPI`).
    public static let idl = InterfaceIDL.inventory

    private let store: any InventoryStore
    private let authorizer: Authorizer
    private let now: @Sendable () -> Date

    /// - Parameter now: the clock (injected for tests).
    public init(store: any InventoryStore, authorizer: Authorizer, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.authorizer = authorizer
        self.now = now
    }

    static let mutations: Set<String> = [
        "AddGroup", "UpdateGroup", "DeleteGroup", "AddDevice", "UpdateDevice", "DeleteDevice",
        "AddUser", "UpdateUser", "DeleteUser", "AddBadge", "DeleteBadge", "BindTag", "UnbindTag", "Import",
    ]

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        if Self.mutations.contains(call.methodName) { try authorizer.requireMutation(context) }
        let reply = try await LendingWireErrors.mapping(name) { try await self.answer(call, context) }
        try await replies.reply(reply, continues: false)
    }

    private func encode<T: Encodable>(_ value: T) throws -> JSONValue { try WireCoding.encode(value) }

    /// `GetDevice` by the store's blocking read on its own thread, where the store has one
    /// (SQLite): from the socket's event loop to the store's thread and back, through no task.
    public func offload(_ call: VarlinkCall, context: VarlinkCallContext) -> VarlinkOffload? {
        guard call.methodName == "GetDevice", let reads = store.blockingReads,
              let id = call.parameters["id"]?.stringValue else { return nil }
        let t = now()
        return VarlinkOffload(schedule: reads.schedule) { [name] in
            try LendingWireErrors.mapping(name) { try deviceReply(try reads.deviceDetail(id: id), id: id, now: t) }
        }
    }

    private func deviceReply(_ detail: DeviceDetail?, id: DeviceID, now t: Date) throws -> [String: JSONValue] {
        guard let detail else { throw LendingError.noSuchDevice(id) }
        return ["device": try WireCoding.encode(detail.record, now: t), "tags": try encode(detail.tags)]
    }

    private func answer(_ call: VarlinkCall, _ context: VarlinkCallContext) async throws -> [String: JSONValue] {
        let p = Parameters(call)
        let t = now()
        switch call.methodName {
        case "ListGroups":
            return ["groups": try encode(try await store.groups())]
        case "AddGroup", "UpdateGroup":
            let g = try p.object("group")
            let group = DeviceGroup(id: try g.string("id"), name: try g.string("name"), sortOrder: try g.optionalInt("sortOrder") ?? 0)
            if call.methodName == "AddGroup" { try await store.addGroup(group) } else { try await store.updateGroup(group) }
            return [:]
        case "DeleteGroup":
            try await store.deleteGroup(id: try p.string("id"))
            return [:]

        case "AddDevice":
            let id = try p.string("id")
            let f = try p.object("fields")
            guard let group = try f.optionalString("groupId") else {
                throw LendingError.invalidField("groupId", reason: "a new device needs a group (see roombridgectl devices add --help)")
            }
            guard let model = try f.optionalString("model") else {
                throw LendingError.invalidField("model", reason: "a new device needs a model")
            }
            var device = Device(id: id, groupId: group, model: model, registeredAt: t)
            try apply(f, to: &device)
            try await store.addDevice(device, at: t, by: try authorizer.actor(context, named: try p.optionalString("actor")))
            return ["device": try WireCoding.encode(try await record(id), now: t)]
        case "UpdateDevice":
            let id = try p.string("id")
            var device = try await record(id).device
            try apply(try p.object("fields"), to: &device)
            let changes = try await store.updateDevice(device, at: t,
                                                       by: try authorizer.actor(context, named: try p.optionalString("actor")))
            return ["device": try WireCoding.encode(try await record(id), now: t), "changes": try encode(changes)]
        case "DeleteDevice":
            try await store.deleteDevice(id: try p.string("id"), at: t,
                                         by: try authorizer.actor(context, named: try p.optionalString("actor")))
            return [:]
        case "Import":
            guard let kind = ImportKind(rawValue: try p.string("kind")) else { throw VarlinkError.invalidParameter("kind") }
            let (lines, problems) = InventoryImport.read(kind, csv: try p.string("csv"), at: t)
            let report = try await store.importLines(lines, problems: problems, dryRun: try p.optionalBool("dryRun") ?? false,
                                                     partial: try p.optionalBool("partial") ?? false, at: t,
                                                     by: try authorizer.actor(context, named: try p.optionalString("actor")))
            return [
                "added": .array(report.added.map { .string($0) }), "updated": .array(report.updated.map { .string($0) }),
                "unchanged": .array(report.unchanged.map { .string($0) }), "problems": try encode(report.problems),
                "written": .bool(report.written),
            ]
        case "GetDevice":
            let id = try p.string("id")
            return try deviceReply(try await store.deviceDetail(id: id), id: id, now: t)
        case "ListDevices":
            let filter = DeviceFilter(
                groupId: try p.optionalString("groupId"),
                status: try p.optionalString("status").map(Validation.status),
                isLent: try p.optionalBool("isLent"), isNFCRegistered: try p.optionalBool("isNfcRegistered"),
                text: try p.optionalString("text"))
            let page = try await store.devices(filter, page: try p.page())
            return try paged("devices", try page.items.map { try WireCoding.encode($0, now: t) }, page.nextCursor)
        case "DeviceLog":
            let page = try await store.deviceLog(deviceId: try p.string("id"), page: try p.page())
            return try paged("entries", page.items, page.nextCursor)

        case "AddUser":
            let user = User(id: try p.string("id"), name: try p.string("name"), registeredAt: t)
            try await store.addUser(user)
            return ["user": try encode(user)]
        case "UpdateUser":
            let id = try p.string("id")
            guard var user = try await store.user(id: id) else { throw LendingError.noSuchUser(id) }
            user.name = try p.string("name")
            try await store.updateUser(user)
            return ["user": try encode(user)]
        case "DeleteUser":
            try await store.deleteUser(id: try p.string("id"), at: t,
                                       by: try authorizer.actor(context, named: try p.optionalString("actor")))
            return [:]
        case "GetUser":
            let id = try p.string("id")
            guard let user = try await store.user(id: id) else { throw LendingError.noSuchUser(id) }
            return ["user": try encode(user),
                    "badges": try encode(try await store.badges(userId: id))]
        case "ListUsers":
            let page = try await store.users(nameContains: try p.optionalString("nameContains"), page: try p.page())
            return try paged("users", page.items, page.nextCursor)

        case "AddBadge":
            let kind = try p.optionalString("kind").flatMap(BadgeKind.init(rawValue:)) ?? .iso14443a
            let identifier = try CardIdentifier.normalize(try p.string("identifier"), kind: kind)
            let badge = Badge(identifier: identifier, kind: kind, userId: try p.string("userId"), registeredAt: t,
                              label: try p.optionalString("label"))
            try await store.addBadge(badge)
            return ["badge": try encode(badge)]
        case "DeleteBadge":
            let text = try p.string("identifier")
            guard let identifier = TagUID(text) else { throw LendingError.noSuchBadge(text) }
            try await store.deleteBadge(identifier: identifier)
            return [:]
        case "ListBadges":
            guard let id = try p.optionalString("userId") else {
                let page = try await store.allBadges(page: try p.page())
                return try paged("badges", page.items, page.nextCursor)
            }
            guard try await store.user(id: id) != nil else { throw LendingError.noSuchUser(id) }
            return ["badges": try encode(try await store.badges(userId: id))]
        case "GetBadge":
            // Whose card is this?
            let text = try p.string("identifier")
            guard let identifier = TagUID(text) else { throw LendingError.noSuchBadge(text) }
            guard case .badge(let badge, let user) = try await store.resolve(uid: identifier) else {
                throw LendingError.noSuchBadge(identifier.hex)
            }
            return ["badge": try encode(badge), "user": try encode(user)]

        case "BindTag":
            let uid = try p.uid()
            let binding = TagBinding(uid: uid, deviceId: try p.string("deviceId"), boundAt: t)
            // The device log says who bound it (the device becomes NFC-registered).
            try await store.registerTag(uid: uid, deviceId: binding.deviceId, at: t,
                                        by: try authorizer.actor(context, named: try p.optionalString("actor")))
            return ["binding": try encode(binding)]
        case "UnbindTag":
            try await store.unbindTag(uid: try p.uid(),
                                      by: try authorizer.actor(context, named: try p.optionalString("actor")))
            return [:]
        case "ListTagBindings":
            let id = try p.string("deviceId")
            _ = try await record(id)
            return ["bindings": try encode(try await store.tagBindings(deviceId: id))]
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }

    private func record(_ id: DeviceID) async throws -> DeviceRecord {
        guard let r = try await store.device(id: id) else { throw LendingError.noSuchDevice(id) }
        return r
    }

    private func paged<T: Encodable>(_ key: String, _ items: [T], _ next: String?) throws -> [String: JSONValue] {
        var reply = [key: try encode(items)]
        if let next { reply["nextCursor"] = .string(next) }
        return reply
    }

    /// Applies the present `DeviceFields` to `device`.
    private func apply(_ f: Parameters, to device: inout Device) throws {
        if let v = try f.optionalString("groupId") { device.groupId = v }
        if let v = try f.optionalString("model") { device.model = v }
        if let v = try f.optionalString("serialNumber") { device.serialNumber = v }
        if let v = try f.optionalString("osVersion") { device.osVersion = v }
        if let v = try f.optionalString("status") { device.status = try Validation.status(v) }
        if let v = try f.optionalString("connectorType") { device.connectorType = v }
        if let v = try f.optionalDate("registeredAt", interface: name) { device.registeredAt = v }
        if let v = try f.optionalString("note") { device.note = v.isEmpty ? nil : v }
    }
}
