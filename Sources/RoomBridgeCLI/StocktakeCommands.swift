import ArgumentParser
import Foundation
import Lending
import RoomBridgeAPI
import Varlink

/// `roombridgectl stocktake`: count the shelf by tapping (io.roombridge.Lending's stocktake methods).
struct StocktakeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stocktake",
        abstract: "Count the shelf by tapping: start a stocktake, see how far it got, close it, read its report.",
        discussion: """
            While a stocktake is open, a device tap at any kiosk on the database counts the device and lends nothing; \
            a tag that is not in the inventory is noted as unexpected. Closing it gives four lists: found, missing \
            (not lent, not tapped), lent (with who has it) and unexpected.
            """,
        subcommands: [StocktakeStart.self, StocktakeStatus.self, StocktakeClose.self, StocktakeReportCommand.self,
                      StocktakeList.self],
        defaultSubcommand: StocktakeStatus.self)
}

enum StocktakeRender {
    static func describe(_ s: Stocktake) -> String {
        let state = s.closedAt.map { "closed \(Table.when($0))" } ?? "open"
        return "stocktake \(s.id) of \(s.scope.description), started \(Table.when(s.startedAt)), \(state): "
            + "\(s.counted) counted, \(s.unexpected) unexpected"
    }

    static var headers: [String] {
        ["LIST", "DEVICE", "MODEL", "SERIAL", "USER", "NAME", "UID", KioskTime.current.header("TAPPED"), "WHERE"]
    }

    static func row(_ e: StocktakeEntry) -> [String] {
        [e.list.rawValue, e.deviceId ?? "—", e.model ?? "—", e.serialNumber ?? "—", e.userId ?? "—", e.userName ?? "—",
         e.uid?.hex ?? "—", e.tappedAt.map { Table.time($0) } ?? "—", e.location ?? "—"]
    }
}

struct StocktakeStart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start", abstract: "Start a stocktake of every device, one group's, or those at one location.")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only this group's devices.") var group: String?
    @Option(name: .long, help: ArgumentHelp("Only the devices at this lending.location (where their last rental came back).",
                                            valueName: "NAME"))
    var location: String?

    func validate() throws {
        if group != nil && location != nil { throw ValidationError("give --group or --location, not both") }
    }

    func run() async throws {
        let scope: StocktakeScope = group.map { .group($0) } ?? location.map { .location($0) } ?? .all
        try await withClient(options) { client in
            let reply = try await call(client, LendingAPI.StartStocktake.self, .init(scope: scope))
            if options.json { emit(reply.sole.serialized()); return }
            emit("started \(StocktakeRender.describe(reply.value.stocktake))")
            emit("tap each device at the reader; close it with: roombridgectl stocktake close")
        }
    }
}

struct StocktakeStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "The open stocktake, if any.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await withClient(options) { client in
            let open = try await call(client, LendingAPI.ListStocktakes.self, .init(limit: 1)).value.stocktakes.first
            guard let open, open.isOpen else {
                if !options.json { emit("no stocktake is open; start one with: roombridgectl stocktake start") }
                return
            }
            if options.json {
                emit(try await call(client, LendingAPI.GetStocktake.self, .init(id: open.id)).sole.serialized())
                return
            }
            emit(StocktakeRender.describe(open))
        }
    }
}

struct StocktakeClose: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "close", abstract: "Close the open stocktake (or ID) and print its report.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Stocktake number (default: the open one).") var id: Int64?

    func run() async throws {
        try await withClient(options) { client in
            let reply = try await call(client, LendingAPI.CloseStocktake.self, .init(id: id))
            if options.json { emit(reply.sole.serialized()); return }
            printReport(reply.value.report)
        }
    }
}

/// The report: a line of totals, then the entries list by list.
func printReport(_ report: StocktakeReport) {
    emit(StocktakeRender.describe(report.stocktake))
    let counts = StocktakeEntry.List.allCases.map { "\(report.list($0).count) \($0.rawValue)" }
    emit(counts.joined(separator: ", "))
    if !report.entries.isEmpty { emit(Table.render(StocktakeRender.headers, report.entries.map(StocktakeRender.row))) }
}

struct StocktakeReportCommand: AsyncParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable { case table, json, csv }

    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "A stocktake's report; --format csv prints what a spreadsheet opens.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Stocktake number.") var id: Int64
    @Option(name: .long, help: "table (default), json or csv.") var format: Format?
    @Option(name: .long, help: ArgumentHelp("Time zone of CSV dates (default the kiosk's, lending.time_zone).", valueName: "ZONE"))
    var timeZone: String?
    @Flag(name: .long, help: "Start the CSV with a byte order mark (Excel and non-ASCII names).") var bom = false

    func run() async throws {
        let format = format ?? (options.json ? .json : .table)
        try await withClient(options) { client in
            switch format {
            case .csv, .json:
                let p = LendingAPI.ExportStocktake.Parameters(id: id, format: format.rawValue, timeZone: timeZone,
                                                              byteOrderMark: bom ? true : nil)
                Output.out(try await call(client, LendingAPI.ExportStocktake.self, p).value.text)
            case .table:
                printReport(try await call(client, LendingAPI.GetStocktake.self, .init(id: id)).value.report)
            }
        }
    }
}

struct StocktakeList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Stocktakes, newest first.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await withClient(options) { client in
            let items = try await call(client, LendingAPI.ListStocktakes.self, .init(limit: 100)).listed(\.stocktakes)
            let k = KioskTime.current
            printList(items, json: options.json, empty: "no stocktakes yet",
                      headers: ["STOCKTAKE", "SCOPE", k.header("STARTED"), k.header("CLOSED"), "COUNTED", "UNEXPECTED"]) { s in
                [String(s.id), s.scope.description, Table.time(s.startedAt), s.closedAt.map { Table.time($0) } ?? "open",
                 String(s.counted), String(s.unexpected)]
            }
        }
    }
}

/// `roombridgectl report 2026-11`: a month of lending, for people who keep paper.
struct MonthReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "A month of lending: lends, returns, overdue, the most lent devices and who had what.",
        discussion: "MONTH is YYYY-MM, a calendar month of the kiosk's time zone (lending.time_zone).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The month, e.g. 2026-11.", valueName: "MONTH")) var month: String

    func validate() throws {
        guard MonthlyLendingReport.bounds(of: month, in: TimeZone(secondsFromGMT: 0)!) != nil else {
            throw ValidationError("'\(month)' is not a month: use YYYY-MM, e.g. 2026-11")
        }
    }

    func run() async throws {
        try await withClient(options) { client in
            let reply = try await call(client, LendingAPI.GetMonthlyReport.self, .init(month: month, timeZone: KioskTime.current.name))
            if options.json { emit(reply.sole.serialized()); return }
            let r = reply.value.report
            emit("Lending in \(r.month) (\(r.timeZone)): \(r.lends) lent, \(r.returns) returned, \(r.overdue) fell overdue")
            if !r.topDevices.isEmpty {
                emit("")
                emit(Table.render(["DEVICE", "MODEL", "LENDS"], r.topDevices.map { [$0.deviceId, $0.model, String($0.lends)] }))
            }
            if !r.borrowers.isEmpty {
                emit("")
                let k = KioskTime.current
                let rows = r.borrowers.flatMap { b in
                    b.rentals.map { h in
                        [b.userId, b.userName, h.deviceId, h.model, Table.time(h.rentedAt), Table.time(h.dueAt),
                         h.returnedAt.map { Table.time($0) } ?? "—"]
                    }
                }
                emit(Table.render(["USER", "NAME", "DEVICE", "MODEL", k.header("LENT"), k.header("DUE"), k.header("RETURNED")], rows))
            }
        }
    }
}
