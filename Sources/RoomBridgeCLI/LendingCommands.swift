import ArgumentParser
import Foundation
import Varlink
import VarlinkNIO

// roombridgectl lend|return|rentals|history: lending by ID (io.roombridge.Lending).

enum RentalRender {
    /// The time columns are in the kiosk's time zone, which the headers name.
    static var headers: [String] {
        let k = KioskTime.current
        return ["RENTAL", "DEVICE", "MODEL", "USER", "NAME", k.header("LENT"), k.header("DUE"), k.header("RETURNED")]
    }
    /// History also shows who lent and who returned.
    static var historyHeaders: [String] { headers + ["LENT BY", "RETURNED BY", "NOTE"] }

    static func row(_ r: JSONValue) -> [String] {
        var due = Table.time(r, "dueAt")
        if r["overdue"]?.boolValue == true { due += " OVERDUE" }
        return [Table.s(r, "id"), Table.s(r, "deviceId"), Table.s(r, "model"), Table.s(r, "userId"), Table.s(r, "userName"),
                Table.time(r, "rentedAt"), due, r["returnedAt"] == nil ? "—" : Table.time(r, "returnedAt")]
    }

    static func historyRow(_ r: JSONValue) -> [String] {
        row(r) + [Table.s(r, "lentBy", "—"), Table.s(r, "returnedBy", "—"), Table.s(r, "returnNote", "—")]
    }
}

struct Lend: AsyncParsableCommand {
    enum Action: String, ExpressibleByArgument, CaseIterable { case arm, disarm }

    static let configuration = CommandConfiguration(
        abstract: "Lend a device by ID (lend --device D --user U [--due DATE]), or arm/disarm the reader (lend arm --user U, lend disarm).",
        discussion: "--due YYYY-MM-DD: due back by the end of that day in the kiosk's time zone (lending.time_zone); or an ISO 8601 time. Without --due the configured loan period applies.")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "arm: arm the reader for --user, as their badge would; disarm: end the armed session.")
    var action: Action?
    @Option(name: .long, help: "Device ID.") var device: String?
    @Option(name: .long, help: "User ID.") var user: String?
    @Option(name: .long, help: ArgumentHelp("When it is due back: YYYY-MM-DD (by the end of that day in the kiosk's time zone) or ISO 8601.", valueName: "DATE"))
    var due: String?

    func validate() throws {
        _ = try dateArgument(due, option: "--due", day: .endOfKioskDay)
        switch action {
        case .arm:
            guard user != nil, device == nil, due == nil else { throw ValidationError("lend arm takes --user U only") }
        case .disarm:
            guard user == nil, device == nil, due == nil else { throw ValidationError("lend disarm takes no options") }
        case nil:
            guard device != nil, user != nil else {
                throw ValidationError("give --device and --user (or: roombridgectl lend arm --user U)")
            }
        }
    }

    func run() async throws {
        switch action {
        case .arm: try await arm(user ?? "")
        case .disarm: try await disarm()
        case nil: try await lend(device ?? "", user ?? "")
        }
    }

    private func lend(_ device: String, _ user: String) async throws {
        var p: [String: JSONValue] = ["deviceId": .string(device), "userId": .string(user)]
        try await withClient(options) { client in
            if let d = try dateArgument(due, option: "--due", day: .endOfKioskDay) { p["dueAt"] = d }
            let reply = try await call(client, "io.roombridge.Lending.Lend", p)
            let r = reply["rental"]
            if options.json { emit(r?.serialized() ?? "{}"); return }
            var line = "lent \(Table.s(r, "deviceId")) \(Table.s(r, "model")) to \(Table.s(r, "userName")) (\(Table.s(r, "userId")))"
            if r?["dueAt"] != nil { line += ", due \(Table.when(r, "dueAt"))" }
            emit(line)
        }
    }

    private func arm(_ user: String) async throws {
        try await withClient(options) { client in
            let reply = try await call(client, "io.roombridge.Lending.Arm", ["userId": .string(user)])
            let s = reply["session"]
            if options.json { emit(s?.serialized() ?? "{}") } else {
                emit("armed for \(Table.s(s, "userName")) (\(Table.s(s, "userId"))) until \(Table.s(s, "expiresAt").prefix(19).replacingOccurrences(of: "T", with: " ")) UTC; tap device tags now")
            }
        }
    }

    private func disarm() async throws {
        try await withClient(options) { client in
            _ = try await call(client, "io.roombridge.Lending.Disarm")
            if !options.json { emit("disarmed") }
        }
    }
}

struct Return: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Return a lent device by ID, optionally with a note on its condition.",
        discussion: "--note is kept in the history and its CSV; with --broken the device's status also becomes broken, in the same step.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Device ID.") var device: String
    @Option(name: .long, help: "Who brought it back (user ID); without it your Unix user is recorded.") var by: String?
    @Option(name: .long, help: ArgumentHelp("The device's condition, e.g. \"cracked screen\".", valueName: "TEXT")) var note: String?
    @Flag(name: .long, help: "Also set the device's status to broken (it cannot be lent until repaired).") var broken = false

    func run() async throws {
        var p: [String: JSONValue] = ["deviceId": .string(device)]
        put(&p, "returnedBy", by)
        put(&p, "note", note)
        if broken { p["broken"] = true }
        try await withClient(options) { client in
            let reply = try await call(client, "io.roombridge.Lending.Return", p)
            let r = reply["rental"]
            if options.json { emit(r?.serialized() ?? "{}") } else {
                emit("returned \(Table.s(r, "deviceId")) \(Table.s(r, "model")) (lent to \(Table.s(r, "userName")) since \(Table.when(r, "rentedAt")))")
                // Say what else was recorded, so the person at the desk need not look it up.
                if let note { emit("note recorded: \(note)") }
                if broken { emit("\(Table.s(r, "deviceId")) is now marked broken: it cannot be lent until its status is set back to normal") }
            }
        }
    }
}

struct Renew: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Renew a lent device until a new due date (the rental goes on; it is not returned and lent again).",
        discussion: "--due YYYY-MM-DD: due back by the end of that day in the kiosk's time zone (lending.time_zone); or an ISO 8601 time. The device log records the new due date and who renewed it.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Device ID.") var device: String
    @Option(name: .long, help: ArgumentHelp("The new due date: YYYY-MM-DD (by the end of that day in the kiosk's time zone) or ISO 8601.", valueName: "DATE"))
    var due: String

    func validate() throws {
        _ = try dateArgument(due, option: "--due", day: .endOfKioskDay)
    }

    func run() async throws {
        var p: [String: JSONValue] = ["deviceId": .string(device)]
        try await withClient(options) { client in
            if let d = try dateArgument(due, option: "--due", day: .endOfKioskDay) { p["dueAt"] = d }
            let reply = try await call(client, "io.roombridge.Lending.Renew", p)
            let r = reply["rental"]
            if options.json { emit(r?.serialized() ?? "{}") } else {
                emit("renewed \(Table.s(r, "deviceId")) \(Table.s(r, "model")) for \(Table.s(r, "userName")) (\(Table.s(r, "userId"))) until \(Table.when(r, "dueAt"))")
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
        discussion: "--since/--until: YYYY-MM-DD (midnight in the kiosk's time zone) or ISO 8601; rentals that started in [since, until).")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only this device.") var device: String?
    @Option(name: .long, help: "Only this user.") var user: String?
    @Option(name: .long, help: ArgumentHelp("Started at or after.", valueName: "DATE")) var since: String?
    @Option(name: .long, help: ArgumentHelp("Started before.", valueName: "DATE")) var until: String?
    @Option(name: .long, help: "table (default), json (one rental per line) or csv.") var format: Format?
    @Option(name: .long, help: ArgumentHelp("Time zone of CSV dates (default the kiosk's, lending.time_zone), e.g. Europe/Berlin.", valueName: "ZONE"))
    var timeZone: String?
    @Flag(name: .long, help: "Start the CSV with a byte order mark (Excel and non-ASCII names).") var bom = false

    func validate() throws {
        let from = try dateArgument(since, option: "--since")?.stringValue.flatMap { WireTime.parseParameter($0) }
        let to = try dateArgument(until, option: "--until")?.stringValue.flatMap { WireTime.parseParameter($0) }
        // Days are read in one zone here and in another once connected: the order is the same.
        if let from, let to, from >= to {
            throw ValidationError("--since \(since ?? "") is not before --until \(until ?? ""): nothing can have started in that range; give the earlier day first")
        }
    }

    func run() async throws {
        var p: [String: JSONValue] = [:]
        put(&p, "deviceId", device)
        put(&p, "userId", user)
        let format = format ?? (options.json ? .json : .table)
        try await withClient(options) { client in
            if let s = try dateArgument(since, option: "--since") { p["since"] = s }
            if let u = try dateArgument(until, option: "--until") { p["until"] = u }
            if format == .csv {
                p["format"] = "csv"
                put(&p, "timeZone", timeZone)
                if bom { p["byteOrderMark"] = true }
                // Page by page, so a long history never needs one huge reply.
                p["limit"] = 1000
                while true {
                    let reply = try await call(client, "io.roombridge.Lending.ExportHistory", p)
                    Output.out(reply["text"]?.stringValue ?? "")
                    guard let next = reply["nextCursor"] else { return }
                    p["cursor"] = next
                }
            }
            let items = try await allPages(client, "io.roombridge.Lending.History", p, key: "rentals")
            printList(items, json: format == .json, empty: "no rentals match", headers: RentalRender.historyHeaders,
                      row: RentalRender.historyRow)
        }
    }
}
