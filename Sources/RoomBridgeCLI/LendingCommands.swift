import ArgumentParser
import Foundation
import Lending
import RoomBridgeAPI
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

    static func row(_ r: Rental) -> [String] {
        var due = Table.time(r.dueAt)
        if r.isOverdue(at: Date()) { due += " OVERDUE" }
        return [String(r.id), r.deviceId, r.model, r.userId, r.userName,
                Table.time(r.rentedAt), due, r.returnedAt.map { Table.time($0) } ?? "—"]
    }

    static func historyRow(_ r: Rental) -> [String] {
        row(r) + [r.lentBy ?? "—", r.returnedBy ?? "—", r.returnNote ?? "—"]
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
        try await withClient(options) { client in
            let dueAt = try dateArgument(due, option: "--due", day: .endOfKioskDay)
            let reply = try await call(client, LendingAPI.Lend.self, .init(deviceId: device, userId: user, dueAt: dueAt))
            if options.json { emit(reply.sole.serialized()); return }
            let r = reply.value.rental
            var line = "lent \(r.deviceId) \(r.model) to \(r.userName) (\(r.userId))"
            if let due = r.dueAt { line += ", due \(Table.when(due))" }
            emit(line)
        }
    }

    private func arm(_ user: String) async throws {
        try await withClient(options) { client in
            let reply = try await call(client, LendingAPI.Arm.self, .init(userId: user))
            if options.json { emit(reply.sole.serialized()) } else {
                let s = reply.value.session
                let until = LendingFormat.spreadsheet(s.expiresAt, timeZone: TimeZone(secondsFromGMT: 0)!)
                emit("armed for \(s.userName) (\(s.userId)) until \(until) UTC; tap device tags now")
            }
        }
    }

    private func disarm() async throws {
        try await withClient(options) { client in
            _ = try await call(client, LendingAPI.Disarm.self)
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
        let p = LendingAPI.Return.Parameters(deviceId: device, returnedBy: by, note: note, broken: broken ? true : nil)
        try await withClient(options) { client in
            let reply = try await call(client, LendingAPI.Return.self, p)
            if options.json { emit(reply.sole.serialized()) } else {
                let r = reply.value.rental
                emit("returned \(r.deviceId) \(r.model) (lent to \(r.userName) since \(Table.when(r.rentedAt)))")
                // Say what else was recorded, so the person at the desk need not look it up.
                if let note { emit("note recorded: \(note)") }
                if broken { emit("\(r.deviceId) is now marked broken: it cannot be lent until its status is set back to normal") }
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
        try await withClient(options) { client in
            // validate() checked it: there is a date.
            guard let dueAt = try dateArgument(due, option: "--due", day: .endOfKioskDay) else { return }
            let reply = try await call(client, LendingAPI.Renew.self, .init(deviceId: device, dueAt: dueAt))
            if options.json { emit(reply.sole.serialized()) } else {
                let r = reply.value.rental
                emit("renewed \(r.deviceId) \(r.model) for \(r.userName) (\(r.userId)) until \(Table.when(r.dueAt))")
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
            var items: [Listed<Rental>]
            if overdue {
                items = try await allPages(client, LendingAPI.ListOverdue.self, .init(), \.rentals)
                if let user { items = items.filter { $0.value.userId == user } }
            } else {
                items = try await allPages(client, LendingAPI.ListActive.self, .init(userId: user), \.rentals)
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
        let from = try dateArgument(since, option: "--since")
        let to = try dateArgument(until, option: "--until")
        // Days are read in one zone here and in another once connected: the order is the same.
        if let from, let to, from >= to {
            throw ValidationError("--since \(since ?? "") is not before --until \(until ?? ""): nothing can have started in that range; give the earlier day first")
        }
    }

    func run() async throws {
        let format = format ?? (options.json ? .json : .table)
        try await withClient(options) { client in
            let range = LendingAPI.HistoryRange(deviceId: device, userId: user, since: try dateArgument(since, option: "--since"),
                                                until: try dateArgument(until, option: "--until"))
            if format == .csv {
                // Page by page, so a long history never needs one huge reply.
                var p = LendingAPI.ExportHistory.Parameters(range, format: .csv, timeZone: timeZone,
                                                            byteOrderMark: bom ? true : nil, limit: 1000)
                while true {
                    let reply = try await call(client, LendingAPI.ExportHistory.self, p).value
                    Output.out(reply.text)
                    guard let next = reply.nextCursor else { return }
                    p.page.cursor = next
                }
            }
            let items = try await allPages(client, LendingAPI.History.self, .init(range), \.rentals)
            printList(items, json: format == .json, empty: "no rentals match", headers: RentalRender.historyHeaders,
                      row: RentalRender.historyRow)
        }
    }
}
