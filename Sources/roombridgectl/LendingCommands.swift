import ArgumentParser
import Foundation
import Varlink
import VarlinkNIO

// roombridgectl lend|return|rentals|history: lending by ID (io.roombridge.Lending).

enum RentalRender {
    static let headers = ["RENTAL", "DEVICE", "MODEL", "USER", "NAME", "LENT", "DUE", "RETURNED"]

    static func row(_ r: JSONValue) -> [String] {
        var due = Table.time(r, "dueAt")
        if r["overdue"]?.boolValue == true { due += " OVERDUE" }
        return [Table.s(r, "id"), Table.s(r, "deviceId"), Table.s(r, "model"), Table.s(r, "userId"), Table.s(r, "userName"),
                Table.time(r, "rentedAt"), due, r["returnedAt"] == nil ? "—" : Table.time(r, "returnedAt")]
    }
}

struct Lend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lend a device to a user by ID (lend --device D --user U), or arm/disarm the reader.",
        discussion: "Dates: YYYY-MM-DD (midnight UTC) or ISO 8601. Without --due the configured loan period applies.",
        subcommands: [Arm.self, Disarm.self])

    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Device ID.") var device: String?
    @Option(name: .long, help: "User ID.") var user: String?
    @Option(name: .long, help: ArgumentHelp("When it is due back (YYYY-MM-DD or ISO 8601).", valueName: "DATE"))
    var due: String?

    func run() async throws {
        guard let device, let user else {
            throw ValidationError("give --device and --user (or use: roombridgectl lend arm --user U)")
        }
        var p: [String: JSONValue] = ["deviceId": .string(device), "userId": .string(user)]
        if let d = try dateArgument(due, option: "--due") { p["dueAt"] = d }
        try await withClient(options) { client in
            let reply = try await call(client, "io.roombridge.Lending.Lend", p)
            let r = reply["rental"]
            if options.json { emit(r?.serialized() ?? "{}"); return }
            var line = "lent \(Table.s(r, "deviceId")) \(Table.s(r, "model")) to \(Table.s(r, "userName")) (\(Table.s(r, "userId")))"
            if r?["dueAt"] != nil { line += ", due \(Table.time(r, "dueAt"))" }
            emit(line)
        }
    }

    struct Arm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Arm the reader for a user, as their badge would.")
        @OptionGroup var options: GlobalOptions
        @Option(name: .long, help: "User ID.") var user: String

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, "io.roombridge.Lending.Arm", ["userId": .string(user)])
                let s = reply["session"]
                if options.json { emit(s?.serialized() ?? "{}") } else {
                    emit("armed for \(Table.s(s, "userName")) (\(Table.s(s, "userId"))) until \(Table.time(s, "expiresAt")); tap device tags now")
                }
            }
        }
    }

    struct Disarm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End the armed session.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await withClient(options) { client in
                _ = try await call(client, "io.roombridge.Lending.Disarm")
                if !options.json { emit("disarmed") }
            }
        }
    }
}

struct Return: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Return a lent device by ID.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Device ID.") var device: String
    @Option(name: .long, help: "Who brought it back (user ID).") var by: String?

    func run() async throws {
        var p: [String: JSONValue] = ["deviceId": .string(device)]
        put(&p, "returnedBy", by)
        try await withClient(options) { client in
            let reply = try await call(client, "io.roombridge.Lending.Return", p)
            let r = reply["rental"]
            if options.json { emit(r?.serialized() ?? "{}") } else {
                emit("returned \(Table.s(r, "deviceId")) \(Table.s(r, "model")) (lent to \(Table.s(r, "userName")) since \(Table.time(r, "rentedAt")))")
            }
        }
    }
}

struct Rentals: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List active rentals (who has what), or only overdue ones.")
    @OptionGroup var options: GlobalOptions
    @Flag(name: .long, help: "Only rentals past their due date, most overdue first.") var overdue = false
    @Option(name: .long, help: "Only this user's rentals.") var user: String?

    func run() async throws {
        try await withClient(options) { client in
            var items: [JSONValue]
            if overdue {
                items = try await allPages(client, "io.roombridge.Lending.ListOverdue", [:], key: "rentals")
                if let user { items = items.filter { $0["userId"]?.stringValue == user } }
            } else {
                var p: [String: JSONValue] = [:]
                put(&p, "userId", user)
                items = try await allPages(client, "io.roombridge.Lending.ListActive", p, key: "rentals")
            }
            printList(items, json: options.json, empty: overdue ? "no overdue rentals" : "no active rentals",
                      headers: RentalRender.headers, row: RentalRender.row)
        }
    }
}

struct History: AsyncParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json, csv }

    static let configuration = CommandConfiguration(
        abstract: "Rental history, newest first; --format csv prints what a spreadsheet opens.",
        discussion: "--since/--until: YYYY-MM-DD (midnight UTC) or ISO 8601; rentals that started in [since, until).")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only this device.") var device: String?
    @Option(name: .long, help: "Only this user.") var user: String?
    @Option(name: .long, help: ArgumentHelp("Started at or after.", valueName: "DATE")) var since: String?
    @Option(name: .long, help: ArgumentHelp("Started before.", valueName: "DATE")) var until: String?
    @Option(name: .long, help: "table (default), json (one rental per line) or csv.") var format: Format?
    @Option(name: .long, help: ArgumentHelp("Time zone of CSV dates (default UTC), e.g. Europe/Berlin.", valueName: "ZONE"))
    var timeZone: String?
    @Flag(name: .long, help: "Start the CSV with a byte order mark (Excel and non-ASCII names).") var bom = false

    func run() async throws {
        var p: [String: JSONValue] = [:]
        put(&p, "deviceId", device)
        put(&p, "userId", user)
        if let s = try dateArgument(since, option: "--since") { p["since"] = s }
        if let u = try dateArgument(until, option: "--until") { p["until"] = u }
        let format = format ?? (options.json ? .json : .table)
        try await withClient(options) { client in
            if format == .csv {
                p["format"] = "csv"
                put(&p, "timeZone", timeZone)
                if bom { p["byteOrderMark"] = true }
                let reply = try await call(client, "io.roombridge.Lending.ExportHistory", p)
                FileHandle.standardOutput.write(Data((reply["text"]?.stringValue ?? "").utf8))
                return
            }
            let items = try await allPages(client, "io.roombridge.Lending.History", p, key: "rentals")
            printList(items, json: format == .json, empty: "no rentals match", headers: RentalRender.headers, row: RentalRender.row)
        }
    }
}
