import ArgumentParser
import Foundation
import Lending
import RoomBridgeAPI
import Varlink
import VarlinkNIO

// roombridgectl devices|users|badges|tags: the inventory (io.roombridge.Inventory).

enum DeviceRender {
    static var headers: [String] {
        ["ID", "GROUP", "MODEL", "OS", "SERIAL", "STATUS", "NFC", "LENT TO", KioskTime.current.header("DUE")]
    }

    /// yes or no.
    static func yesNo(_ b: Bool) -> String { b ? "yes" : "no" }

    static func row(_ record: DeviceRecord) -> [String] {
        let d = record.device, rental = record.activeRental
        let lentTo = rental.map { "\($0.userName) (\($0.userId))" } ?? ""
        var due = Table.time(rental?.dueAt)
        if rental?.isOverdue(at: Date()) == true { due += " OVERDUE" }
        return [d.id, d.groupId, d.model, d.osVersion, d.serialNumber, d.status.rawValue, yesNo(d.isNFCRegistered), lentTo, due]
    }

    static func detail(_ record: DeviceRecord, tags: [TagBinding]) -> String {
        let d = record.device
        var lines = [
            "Device:     \(d.id)",
            "Group:      \(d.groupId)",
            "Model:      \(d.model)",
            "OS:         \(d.osVersion)",
            "Serial:     \(d.serialNumber)",
            "Connector:  \(d.connectorType)",
            "Status:     \(d.status.rawValue)",
            "Registered: \(Table.when(d.registeredAt))",
            "NFC tag:    \(yesNo(d.isNFCRegistered))" + (tags.isEmpty ? "" : " (UID " + tags.map(\.uid.hex).joined(separator: ", ") + ")"),
        ]
        if let note = d.note { lines.append("Note:       \(note)") }
        if let r = record.activeRental {
            var lent = "Lent to:    \(r.userName) (\(r.userId)) since \(Table.when(r.rentedAt))"
            if let due = r.dueAt { lent += ", due \(Table.when(due))" }
            if r.isOverdue(at: Date()) { lent += " — OVERDUE" }
            lines.append(lent)
        } else {
            lines.append("Lent to:    — (available)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Checks a `--status` argument with the inventory's rule (unknownStatus): a usage error, exit
/// status 64, that lists the allowed statuses.
@discardableResult
func statusArgument(_ text: String?) throws -> DeviceStatus? {
    guard let text else { return nil }
    do throws(LendingError) {
        return try Validation.status(text)
    } catch {
        throw ValidationError("--status: \(error.description)")
    }
}

/// Device field options shared by `devices add` and `devices edit`.
struct DeviceFieldOptions: ParsableArguments {
    @Option(name: .long, help: "Device group ID (android-phone, iphone, android-tablet, ipad, other, …).")
    var group: String?
    @Option(name: .long, help: "Model name.")
    var model: String?
    @Option(name: .long, help: "Serial number.")
    var serial: String?
    @Option(name: .customLong("os"), help: "OS version.")
    var osVersion: String?
    @Option(name: .long, help: "normal, broken or disposed (only normal devices can be lent).")
    var status: String?
    @Option(name: .long, help: "Connector type (USB-C, Lightning, …).")
    var connector: String?
    @Option(name: .long, help: "Free-text note; an empty note clears it.")
    var note: String?
    @Option(name: .long, help: ArgumentHelp("Registration date (YYYY-MM-DD, the kiosk's day, or ISO 8601).", valueName: "DATE"))
    var registered: String?

    func validate() throws {
        _ = try dateArgument(registered, option: "--registered")
        try statusArgument(status)
    }

    func fields() throws -> InventoryAPI.DeviceFields {
        InventoryAPI.DeviceFields(groupId: group, model: model, serialNumber: serial, osVersion: osVersion,
                                  status: try statusArgument(status), connectorType: connector,
                                  registeredAt: try dateArgument(registered, option: "--registered"), note: note)
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, add, edit and remove devices; show a device's change log.",
        subcommands: [List.self, Show.self, Add.self, Edit.self, Remove.self, Log.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List devices.")
        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "Only this group.") var group: String?
        @Option(name: .long, help: "Only this status (normal, broken, disposed).") var status: String?
        @Flag(name: .long, help: "Only lent devices.") var lent = false
        @Flag(name: .long, help: "Only available devices.") var available = false
        @Option(name: .long, help: "Substring of ID, model or serial number.") var text: String?

        func validate() throws { try statusArgument(status) }

        func run() async throws {
            try await withClient(options) { client in
                let p = InventoryAPI.ListDevices.Parameters(groupId: group, status: try statusArgument(status),
                                                            isLent: lent != available ? lent : nil, text: text)
                let items = try await allPages(client, InventoryAPI.ListDevices.self, p, \.devices)
                let filtered = group != nil || status != nil || text != nil || lent || available
                printList(items, json: options.json,
                          empty: filtered ? "no match: no device matches these filters (roombridgectl devices list shows all)"
                                          : "no devices; add one with roombridgectl devices add",
                          headers: DeviceRender.headers, row: DeviceRender.row)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one device, its tag and who has it.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Device ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.GetDevice.self, .init(id: id))
                if options.json { emit(JSONValue.object(reply.sent).serialized()) } else {
                    emit(DeviceRender.detail(reply.value.device, tags: reply.value.tags))
                }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a device (needs --group and --model).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "New device ID, e.g. D-0001.") var id: String
        @OptionGroup var fields: DeviceFieldOptions

        func run() async throws {
            try await withClient(options) { client in
                let f = try fields.fields()  // a --registered day is the kiosk's
                let reply = try await call(client, InventoryAPI.AddDevice.self, .init(id: id, fields: f))
                if options.json { emit(reply.sole.serialized()) } else { emit("added device \(id)") }
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a device's fields (each change is logged).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Device ID.") var id: String
        @OptionGroup var fields: DeviceFieldOptions

        func run() async throws {
            guard try fields.fields() != InventoryAPI.DeviceFields() else {
                throw ValidationError("nothing to change; give at least one of --group, --model, --serial, --os, --status, --connector, --note, --registered")
            }
            try await withClient(options) { client in
                let f = try fields.fields()  // a --registered day is the kiosk's
                let reply = try await call(client, InventoryAPI.UpdateDevice.self, .init(id: id, fields: f))
                let changes = reply.value.changes
                if options.json {
                    emit(reply.sent(InventoryAPI.UpdateDevice.Reply.CodingKeys.device)?.serialized() ?? "{}")
                } else if changes.isEmpty {
                    emit("device \(id) unchanged")
                } else {
                    for c in changes {
                        emit("\(id) \(c.field): \(c.oldValue ?? "—") → \(c.newValue ?? "—")")
                    }
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a device that is not lent (its history and log stay).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Device ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, InventoryAPI.DeleteDevice.self, .init(id: id))
                if !options.json { emit("deleted device \(id)") }
            }
        }
    }

    struct Log: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a device's change log, newest first.")

        static let operations = ["add": "added", "update": "changed", "delete": "deleted"]
        static let fields = [
            "groupId": "group", "model": "model", "serialNumber": "serial number", "osVersion": "OS version",
            "status": "status", "connectorType": "connector", "registeredAt": "registered", "note": "note",
            "isNFCRegistered": "NFC tag registered", "dueAt": "due",
        ]

        /// A logged value as people read it: a time in the kiosk's zone, true/false as yes/no.
        static func value(_ logged: String?) -> String {
            let v = logged ?? "—"
            if let date = WireTime.parseParameter(v) { return KioskTime.current.minutes(date) }
            return ["true": "yes", "false": "no"][v] ?? v
        }
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Device ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                let items = try await allPages(client, InventoryAPI.DeviceLog.self, .init(id: id), \.entries)
                // People's words: "OS version", not osVersion; times in the kiosk's zone, not UTC.
                printList(items, json: options.json, empty: "no log entries for \(id); see roombridgectl devices list",
                          headers: [KioskTime.current.header("TIME"), "CHANGE", "FIELD", "OLD", "NEW", "BY"]) { e in
                    [Table.time(e.at), Self.operations[e.operation.rawValue] ?? e.operation.rawValue,
                     Self.fields[e.field] ?? e.field, Self.value(e.oldValue), Self.value(e.newValue), e.actor ?? "—"]
                }
            }
        }
    }
}

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, add, edit and remove users.",
        subcommands: [List.self, Show.self, Add.self, Edit.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "Substring of the name.") var name: String?

        func run() async throws {
            try await withClient(options) { client in
                let items = try await allPages(client, InventoryAPI.ListUsers.self, .init(nameContains: name), \.users)
                printList(items, json: options.json,
                          empty: name != nil ? "no match: no user's name contains '\(name ?? "")'"
                                             : "no users; add one with roombridgectl users add",
                          headers: ["ID", "NAME", KioskTime.current.header("REGISTERED")]) { u in
                    [u.id, u.name, Table.time(u.registeredAt)]
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user, their badges and the devices they have.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "User ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.GetUser.self, .init(id: id))
                let rentals = try await allPages(client, LendingAPI.ListActive.self, .init(userId: id), \.rentals)
                if options.json {
                    // The user and their badges as sent, with the rentals they have.
                    var sent = reply.sent
                    sent["rentals"] = .array(rentals.map(\.sent))
                    emit(JSONValue.object(sent).serialized())
                    return
                }
                let u = reply.value.user
                var lines = ["User:       \(u.id)", "Name:       \(u.name)", "Registered: \(Table.when(u.registeredAt))"]
                let badges = reply.value.badges
                lines.append("Badges:     " + (badges.isEmpty ? "none (bind one with roombridgectl badges bind)" :
                    badges.map { "\($0.identifier) (\($0.kind.rawValue))" }.joined(separator: ", ")))
                lines.append("Has:        " + (rentals.isEmpty ? "no devices" :
                    rentals.map { "\($0.value.deviceId) \($0.value.model)" }.joined(separator: ", ")))
                emit(lines.joined(separator: "\n"))
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "New user ID, e.g. U-0017.") var id: String
        @Option(name: .long, help: "Display name.") var name: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.AddUser.self, .init(id: id, name: name))
                if options.json { emit(reply.sole.serialized()) } else { emit("added user \(id) (\(name))") }
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a user.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "User ID.") var id: String
        @Option(name: .long, help: "New display name.") var name: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.UpdateUser.self, .init(id: id, name: name))
                if options.json { emit(reply.sole.serialized()) } else { emit("user \(id) is now \(name)") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a user who has no devices, and their badges (history stays).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "User ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, InventoryAPI.DeleteUser.self, .init(id: id))
                if !options.json { emit("deleted user \(id)") }
            }
        }
    }
}

struct Badges: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bind, unbind, list and look up users' badges (cards).",
        subcommands: [Bind.self, Unbind.self, List.self, Show.self])

    struct Bind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bind a card to a user.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Card UID or FeliCa IDm in hex (04:A1:B2:C3 or 04A1B2C3).") var identifier: String
        @Option(name: .long, help: "User ID.") var user: String
        @Option(name: .long, help: "iso14443a (default) or felica.") var kind: String?
        @Option(name: .long, help: "Free text (\"staff card\").") var label: String?

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.AddBadge.self,
                                           .init(identifier: identifier, kind: kind.flatMap(BadgeKind.init(rawValue:)),
                                                 userId: user, label: label))
                if options.json { emit(reply.sole.serialized()) } else {
                    emit("badge \(reply.value.badge.identifier) bound to \(user)")
                }
            }
        }
    }

    struct Unbind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a badge.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Card identifier.") var identifier: String

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, InventoryAPI.DeleteBadge.self, .init(identifier: identifier))
                if !options.json { emit("badge \(identifier) removed") }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every badge, or a user's.")
        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "Only this user's badges (user ID).") var user: String?

        func run() async throws {
            try await withClient(options) { client in
                // A user's badges come in one reply (the daemon pages only the list of every badge).
                let badges = try await allPages(client, InventoryAPI.ListBadges.self, .init(userId: user), \.badges)
                printList(badges, json: options.json,
                          empty: user.map { "\($0) has no badges; bind one with roombridgectl badges bind" }
                              ?? "no badges; bind one with roombridgectl badges bind",
                          headers: ["IDENTIFIER", "KIND", "USER", "LABEL", KioskTime.current.header("REGISTERED")]) { b in
                    [b.identifier, b.kind.rawValue, b.userId, b.label ?? "", Table.time(b.registeredAt)]
                }
            }
        }
    }
}

extension Badges {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Whose card is this? Show a badge and its user.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Card UID or FeliCa IDm in hex (04:A1:B2:C3 or 04A1B2C3).") var identifier: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.GetBadge.self, .init(identifier: identifier))
                if options.json { emit(JSONValue.object(reply.sent).serialized()); return }
                let b = reply.value.badge, u = reply.value.user
                let label = b.label ?? ""
                emit("badge \(b.identifier) (\(b.kind.rawValue)\(label.isEmpty ? "" : ", \(label)")) "
                     + "is \(u.name)'s (\(u.id)), bound \(Table.when(b.registeredAt))")
            }
        }
    }
}

/// `roombridgectl tag bind|unbind|list` (registered under `RoomBridgeCtl.Tags`).
struct TagBindings: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bind tag UIDs to devices (tags without a device record), unbind, list.",
        subcommands: [Bind.self, Unbind.self, List.self])

    struct Bind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bind a tag UID to a device.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Tag UID in hex.") var uid: String
        @Option(name: .long, help: "Device ID.") var device: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.BindTag.self, .init(uid: uid, deviceId: device))
                if options.json { emit(reply.sole.serialized()) } else {
                    emit("tag \(reply.value.binding.uid) bound to \(device)")
                }
            }
        }
    }

    struct Unbind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unbind a tag UID.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Tag UID in hex.") var uid: String

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, InventoryAPI.UnbindTag.self, .init(uid: uid))
                if !options.json { emit("tag \(uid) unbound") }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the tag UIDs bound to a device.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Device ID.") var device: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.ListTagBindings.self, .init(deviceId: device))
                printList(reply.listed(\.bindings), json: options.json, empty: "no tags bound to \(device)",
                          headers: ["UID", "DEVICE", KioskTime.current.header("BOUND")]) { t in
                    [t.uid.hex, t.deviceId, Table.time(t.boundAt)]
                }
            }
        }
    }
}

struct Groups: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, add, rename and remove device groups (kinds of device).",
        subcommands: [List.self, Add.self, Edit.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List device groups in their display order.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, InventoryAPI.ListGroups.self)
                printList(reply.listed(\.groups), json: options.json, empty: "no device groups; add one with roombridgectl groups add",
                          headers: ["ID", "NAME", "ORDER"]) { g in
                    [g.id, g.name, String(g.sortOrder)]
                }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a device group.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Stable group ID, e.g. e-reader.") var id: String
        @Option(name: .long, help: "Display name.") var name: String
        @Option(name: .long, help: "Position in lists (ascending).") var order = 0

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, InventoryAPI.AddGroup.self, .init(group: DeviceGroup(id: id, name: name, sortOrder: order)))
                if !options.json { emit("added device group \(id)") }
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename or reorder a device group.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Group ID.") var id: String
        @Option(name: .long, help: "Display name.") var name: String
        @Option(name: .long, help: "Position in lists (ascending).") var order = 0

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, InventoryAPI.UpdateGroup.self, .init(group: DeviceGroup(id: id, name: name, sortOrder: order)))
                if !options.json { emit("device group \(id) updated") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a device group that no device uses.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Group ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, InventoryAPI.DeleteGroup.self, .init(id: id))
                if !options.json { emit("deleted device group \(id)") }
            }
        }
    }
}
