import ArgumentParser
import Foundation
import Lending
import Varlink
import VarlinkNIO

// roombridgectl devices|users|badges|tags: the inventory (io.roombridge.Inventory).

enum DeviceRender {
    static var headers: [String] {
        ["ID", "GROUP", "MODEL", "OS", "SERIAL", "STATUS", "NFC", "LENT TO", KioskTime.current.header("DUE")]
    }

    static func row(_ d: JSONValue) -> [String] {
        let rental = d["rental"]
        let lentTo = rental.map { Table.s($0, "userName") + " (" + Table.s($0, "userId") + ")" } ?? ""
        var due = Table.time(rental, "dueAt")
        if rental?["overdue"]?.boolValue == true { due += " OVERDUE" }
        return [Table.s(d, "id"), Table.s(d, "groupId"), Table.s(d, "model"), Table.s(d, "osVersion"),
                Table.s(d, "serialNumber"), Table.s(d, "status"), Table.s(d, "isNfcRegistered"), lentTo, due]
    }

    static func detail(_ d: JSONValue, tags: [JSONValue]) -> String {
        var lines = [
            "Device:     \(Table.s(d, "id"))",
            "Group:      \(Table.s(d, "groupId"))",
            "Model:      \(Table.s(d, "model"))",
            "OS:         \(Table.s(d, "osVersion"))",
            "Serial:     \(Table.s(d, "serialNumber"))",
            "Connector:  \(Table.s(d, "connectorType"))",
            "Status:     \(Table.s(d, "status"))",
            "Registered: \(Table.when(d, "registeredAt"))",
            "NFC tag:    \(Table.s(d, "isNfcRegistered"))" + (tags.isEmpty ? "" : " (UID " + tags.map { Table.s($0, "uid") }.joined(separator: ", ") + ")"),
        ]
        if let note = d["note"]?.stringValue { lines.append("Note:       \(note)") }
        if let r = d["rental"] {
            var lent = "Lent to:    \(Table.s(r, "userName")) (\(Table.s(r, "userId"))) since \(Table.when(r, "rentedAt"))"
            if r["dueAt"] != nil { lent += ", due \(Table.when(r, "dueAt"))" }
            if r["overdue"]?.boolValue == true { lent += " — OVERDUE" }
            lines.append(lent)
        } else {
            lines.append("Lent to:    — (available)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Checks a `--status` argument with the inventory's rule (unknownStatus): a usage error, exit
/// status 64, that lists the allowed statuses.
func statusArgument(_ text: String?) throws {
    guard let text else { return }
    do throws(LendingError) {
        _ = try Validation.status(text)
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

    func fields() throws -> [String: JSONValue] {
        var f: [String: JSONValue] = [:]
        put(&f, "groupId", group)
        put(&f, "model", model)
        put(&f, "serialNumber", serial)
        put(&f, "osVersion", osVersion)
        put(&f, "status", status)
        put(&f, "connectorType", connector)
        put(&f, "note", note)
        if let r = try dateArgument(registered, option: "--registered") { f["registeredAt"] = r }
        return f
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
                var p: [String: JSONValue] = [:]
                put(&p, "groupId", group)
                put(&p, "status", status)
                put(&p, "text", text)
                if lent != available { p["isLent"] = .bool(lent) }
                let items = try await allPages(client, "io.roombridge.Inventory.ListDevices", p, key: "devices")
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
                let reply = try await call(client, "io.roombridge.Inventory.GetDevice", ["id": .string(id)])
                guard let d = reply["device"] else { throw CtlError(exit: .protocolError, message: "GetDevice returned no device") }
                if options.json { emit(JSONValue.object(reply).serialized()) } else {
                    emit(DeviceRender.detail(d, tags: reply["tags"]?.arrayValue ?? []))
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
                let reply = try await call(client, "io.roombridge.Inventory.AddDevice", ["id": .string(id), "fields": .object(f)])
                if options.json { emit(reply["device"]?.serialized() ?? "{}") } else { emit("added device \(id)") }
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a device's fields (each change is logged).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Device ID.") var id: String
        @OptionGroup var fields: DeviceFieldOptions

        func run() async throws {
            let f = try fields.fields()
            guard !f.isEmpty else {
                throw ValidationError("nothing to change; give at least one of --group, --model, --serial, --os, --status, --connector, --note, --registered")
            }
            try await withClient(options) { client in
                let f = try fields.fields()  // a --registered day is the kiosk's
                let reply = try await call(client, "io.roombridge.Inventory.UpdateDevice", ["id": .string(id), "fields": .object(f)])
                let changes = reply["changes"]?.arrayValue ?? []
                if options.json {
                    emit(reply["device"]?.serialized() ?? "{}")
                } else if changes.isEmpty {
                    emit("device \(id) unchanged")
                } else {
                    for c in changes {
                        emit("\(id) \(Table.s(c, "field")): \(Table.s(c, "oldValue", "—")) → \(Table.s(c, "newValue", "—"))")
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
                _ = try await call(client, "io.roombridge.Inventory.DeleteDevice", ["id": .string(id)])
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
        static func value(_ e: JSONValue?, _ key: String) -> String {
            let v = Table.s(e, key, "—")
            if let date = WireTime.parseParameter(v) { return KioskTime.current.minutes(date) }
            return ["true": "yes", "false": "no"][v] ?? v
        }
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Device ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                let items = try await allPages(client, "io.roombridge.Inventory.DeviceLog", ["id": .string(id)], key: "entries")
                // People's words: "OS version", not osVersion; times in the kiosk's zone, not UTC.
                printList(items, json: options.json, empty: "no log entries for \(id); see roombridgectl devices list",
                          headers: [KioskTime.current.header("TIME"), "CHANGE", "FIELD", "OLD", "NEW", "BY"]) { e in
                    [Table.time(e, "at"), Self.operations[Table.s(e, "operation")] ?? Table.s(e, "operation"),
                     Self.fields[Table.s(e, "field")] ?? Table.s(e, "field"),
                     Self.value(e, "oldValue"), Self.value(e, "newValue"), Table.s(e, "actor", "—")]
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
                var p: [String: JSONValue] = [:]
                put(&p, "nameContains", name)
                let items = try await allPages(client, "io.roombridge.Inventory.ListUsers", p, key: "users")
                printList(items, json: options.json,
                          empty: name != nil ? "no match: no user's name contains '\(name ?? "")'"
                                             : "no users; add one with roombridgectl users add",
                          headers: ["ID", "NAME", KioskTime.current.header("REGISTERED")]) { u in
                    [Table.s(u, "id"), Table.s(u, "name"), Table.time(u, "registeredAt")]
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
                var reply = try await call(client, "io.roombridge.Inventory.GetUser", ["id": .string(id)])
                let rentals = try await allPages(client, "io.roombridge.Lending.ListActive", ["userId": .string(id)], key: "rentals")
                reply["rentals"] = .array(rentals)
                if options.json { emit(JSONValue.object(reply).serialized()); return }
                let u = reply["user"]
                var lines = ["User:       \(Table.s(u, "id"))", "Name:       \(Table.s(u, "name"))",
                             "Registered: \(Table.when(u, "registeredAt"))"]
                let badges = reply["badges"]?.arrayValue ?? []
                lines.append("Badges:     " + (badges.isEmpty ? "none (bind one with roombridgectl badges bind)" :
                    badges.map { Table.s($0, "identifier") + " (" + Table.s($0, "kind") + ")" }.joined(separator: ", ")))
                lines.append("Has:        " + (rentals.isEmpty ? "no devices" :
                    rentals.map { Table.s($0, "deviceId") + " " + Table.s($0, "model") }.joined(separator: ", ")))
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
                let reply = try await call(client, "io.roombridge.Inventory.AddUser", ["id": .string(id), "name": .string(name)])
                if options.json { emit(reply["user"]?.serialized() ?? "{}") } else { emit("added user \(id) (\(name))") }
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
                let reply = try await call(client, "io.roombridge.Inventory.UpdateUser", ["id": .string(id), "name": .string(name)])
                if options.json { emit(reply["user"]?.serialized() ?? "{}") } else { emit("user \(id) is now \(name)") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a user who has no devices, and their badges (history stays).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "User ID.") var id: String

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, "io.roombridge.Inventory.DeleteUser", ["id": .string(id)])
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
                var p: [String: JSONValue] = ["identifier": .string(identifier), "userId": .string(user)]
                put(&p, "kind", kind)
                put(&p, "label", label)
                let reply = try await call(client, "io.roombridge.Inventory.AddBadge", p)
                if options.json { emit(reply["badge"]?.serialized() ?? "{}") } else {
                    emit("badge \(Table.s(reply["badge"], "identifier")) bound to \(user)")
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
                _ = try await call(client, "io.roombridge.Inventory.DeleteBadge", ["identifier": .string(identifier)])
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
                let badges = if let user {
                    try await call(client, "io.roombridge.Inventory.ListBadges", ["userId": .string(user)])["badges"]?.arrayValue ?? []
                } else {
                    try await allPages(client, "io.roombridge.Inventory.ListBadges", [:], key: "badges")
                }
                printList(badges, json: options.json,
                          empty: user.map { "\($0) has no badges; bind one with roombridgectl badges bind" }
                              ?? "no badges; bind one with roombridgectl badges bind",
                          headers: ["IDENTIFIER", "KIND", "USER", "LABEL", KioskTime.current.header("REGISTERED")]) { b in
                    [Table.s(b, "identifier"), Table.s(b, "kind"), Table.s(b, "userId"), Table.s(b, "label"),
                     Table.time(b, "registeredAt")]
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
                let reply = try await call(client, "io.roombridge.Inventory.GetBadge", ["identifier": .string(identifier)])
                if options.json { emit(JSONValue.object(reply).serialized()); return }
                let b = reply["badge"], u = reply["user"]
                let label = Table.s(b, "label", "")
                emit("badge \(Table.s(b, "identifier")) (\(Table.s(b, "kind"))\(label.isEmpty ? "" : ", \(label)")) "
                     + "is \(Table.s(u, "name"))'s (\(Table.s(u, "id"))), bound \(Table.when(b, "registeredAt"))")
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
                let reply = try await call(client, "io.roombridge.Inventory.BindTag", ["uid": .string(uid), "deviceId": .string(device)])
                if options.json { emit(reply["binding"]?.serialized() ?? "{}") } else {
                    emit("tag \(Table.s(reply["binding"], "uid")) bound to \(device)")
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
                _ = try await call(client, "io.roombridge.Inventory.UnbindTag", ["uid": .string(uid)])
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
                let reply = try await call(client, "io.roombridge.Inventory.ListTagBindings", ["deviceId": .string(device)])
                printList(reply["bindings"]?.arrayValue ?? [], json: options.json, empty: "no tags bound to \(device)",
                          headers: ["UID", "DEVICE", KioskTime.current.header("BOUND")]) { t in
                    [Table.s(t, "uid"), Table.s(t, "deviceId"), Table.time(t, "boundAt")]
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
                let reply = try await call(client, "io.roombridge.Inventory.ListGroups")
                printList(reply["groups"]?.arrayValue ?? [], json: options.json, empty: "no device groups; add one with roombridgectl groups add",
                          headers: ["ID", "NAME", "ORDER"]) { g in
                    [Table.s(g, "id"), Table.s(g, "name"), Table.s(g, "sortOrder")]
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
                _ = try await call(client, "io.roombridge.Inventory.AddGroup",
                                   ["group": ["id": .string(id), "name": .string(name), "sortOrder": .int(Int64(order))]])
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
                _ = try await call(client, "io.roombridge.Inventory.UpdateGroup",
                                   ["group": ["id": .string(id), "name": .string(name), "sortOrder": .int(Int64(order))]])
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
                _ = try await call(client, "io.roombridge.Inventory.DeleteGroup", ["id": .string(id)])
                if !options.json { emit("deleted device group \(id)") }
            }
        }
    }
}
