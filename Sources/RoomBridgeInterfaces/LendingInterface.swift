import Foundation
import Lending
import RoomBridgeCore
import Varlink
import RoomBridgeAPI

/// `io.roombridge.Lending`: arm, disarm, lend and return by ID through the
/// ``LendingCoordinator`` (so every outcome is published), active and overdue rentals,
/// history and its CSV/JSON export.
public struct LendingInterface: VarlinkInterface {
    public let name = "io.roombridge.Lending"
    public var interfaceDescription: String { Self.idl }
    /// The interface's description, the contract's text (`RoomBridgeAPI`).
    public static let idl = InterfaceIDL.lending

    private let lending: LendingCoordinator
    private let authorizer: Authorizer
    private let now: @Sendable () -> Date
    private let timeZoneName: String

    /// - Parameters:
    ///   - timeZone: the name of the kiosk's time zone, the CSV export's default (a `TimeZone` is
    ///     made only for an export: it loads ICU's data).
    ///   - now: the clock for `overdue` (injected for tests).
    public init(lending: LendingCoordinator, authorizer: Authorizer, timeZone: String = "UTC",
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.lending = lending
        self.authorizer = authorizer
        self.timeZoneName = timeZone
        self.now = now
    }

    static let mutations: Set<String> = ["Arm", "Disarm", "Lend", "Return", "Renew", "Book", "CancelBooking", "StartStocktake",
                                           "CloseStocktake"]

    public func handle(_ call: VarlinkCall, context: VarlinkCallContext, replies: any VarlinkReplySink) async throws {
        if Self.mutations.contains(call.methodName) { try authorizer.requireMutation(context) }
        let reply = try await LendingWireErrors.mapping(name) { try await self.answer(call, context) }
        try await replies.reply(reply, continues: false)
    }

    private func answer(_ call: VarlinkCall, _ context: VarlinkCallContext) async throws -> [String: JSONValue] {
        let p = Parameters(call)
        let store = lending.store
        switch call.methodName {
        case "Arm":
            let session = try await lending.arm(userId: try p.string("userId"))
            return ["session": try WireCoding.encode(session)]
        case "Disarm":
            await lending.disarm()
            return [:]
        case "GetSession":
            guard let session = await lending.session() else { return [:] }
            return ["session": try WireCoding.encode(session)]
        case "Lend":
            let due = try p.optionalDate("dueAt", interface: name)
            let actor = try authorizer.actor(context, named: try p.optionalString("actor"))
            let rental = try await lending.lend(deviceId: try p.string("deviceId"), userId: try p.string("userId"),
                                                dueAt: due, by: actor)
            return ["rental": try WireCoding.encode(rental, now: now())]
        case "Return":
            // A named user brought it back; otherwise the caller (or who it acts for) did.
            let actor = try authorizer.actor(context, named: try p.optionalString("actor"))
            let returnedBy = try p.optionalString("returnedBy").map(ChangeActor.user) ?? actor
            let note = try p.optionalString("note").flatMap { $0.isEmpty ? nil : $0 }
            let rental = try await lending.returnDevice(deviceId: try p.string("deviceId"), returnedBy: returnedBy,
                                                        note: note, markBroken: try p.optionalBool("broken") ?? false)
            return ["rental": try WireCoding.encode(rental, now: now())]
        case "Renew":
            guard let due = try p.optionalDate("dueAt", interface: name) else {
                throw LendingError.invalidField("dueAt", reason: "give the new due date (YYYY-MM-DD or ISO 8601)")
            }
            let actor = try authorizer.actor(context, named: try p.optionalString("actor"))
            let rental = try await lending.renew(deviceId: try p.string("deviceId"), dueAt: due, by: actor)
            return ["rental": try WireCoding.encode(rental, now: now())]
        case "Book":
            guard let starts = try p.optionalDate("startsAt", interface: name) else {
                throw LendingError.invalidField("startsAt", reason: "give the booking's start (ISO 8601)")
            }
            guard let ends = try p.optionalDate("endsAt", interface: name) else {
                throw LendingError.invalidField("endsAt", reason: "give the booking's end (ISO 8601)")
            }
            let actor = try authorizer.actor(context, named: try p.optionalString("actor"))
            let booking = try await lending.book(deviceId: try p.string("deviceId"), userId: try p.string("userId"),
                                                 startsAt: starts, endsAt: ends, by: actor)
            return ["booking": try WireCoding.encode(booking)]
        case "CancelBooking":
            guard let id = try p.optionalInt("id") else { throw VarlinkError.invalidParameter("id") }
            let actor = try authorizer.actor(context, named: try p.optionalString("actor"))
            return ["booking": try WireCoding.encode(try await lending.cancelBooking(id: Int64(id), by: actor))]
        case "ListBookings":
            let from = try p.optionalDate("from", interface: name)
            let until = try p.optionalDate("until", interface: name)
            if let from, let until, until <= from { throw LendingError.invalidField("until", reason: "must be after from") }
            let query = BookingQuery(deviceId: try p.optionalString("deviceId"), userId: try p.optionalString("userId"),
                                     from: from, until: until, includeCancelled: try p.optionalBool("includeCancelled") ?? false)
            let page = try await store.bookings(query, page: try p.page())
            var reply: [String: JSONValue] = ["bookings": .array(try page.items.map { try WireCoding.encode($0) })]
            if let next = page.nextCursor { reply["nextCursor"] = .string(next) }
            return reply
        case "StartStocktake":
            let kind = try p.string("scope")
            guard let scope = StocktakeScope(kind: kind, value: try p.optionalString("scopeValue")) else {
                throw LendingError.invalidField("scopeValue", reason: "a \(kind) stocktake needs scopeValue (the group's ID or the location's name)")
            }
            let actor = try authorizer.actor(context, named: try p.optionalString("actor"))
            return ["stocktake": try WireCoding.encode(try await lending.startStocktake(scope, by: actor))]
        case "CloseStocktake":
            let actor = try authorizer.actor(context, named: try p.optionalString("actor"))
            let report = try await lending.closeStocktake(id: try p.optionalInt("id").map(Int64.init), by: actor)
            return ["report": try WireCoding.encode(report)]
        case "GetStocktake":
            let report: StocktakeReport?
            if let id = try p.optionalInt("id") {
                guard let found = try await store.stocktakeReport(id: Int64(id)) else { throw LendingError.noSuchStocktake(Int64(id)) }
                report = found
            } else {
                report = try await store.openStocktake().map { StocktakeReport(stocktake: $0, entries: []) }
            }
            guard let report else { throw LendingError.noSuchStocktake(0) }
            return ["report": try WireCoding.encode(report)]
        case "ListStocktakes":
            let page = try await store.stocktakes(page: try p.page())
            var reply: [String: JSONValue] = ["stocktakes": .array(try page.items.map { try WireCoding.encode($0) })]
            if let next = page.nextCursor { reply["nextCursor"] = .string(next) }
            return reply
        case "ExportStocktake":
            guard let id = try p.optionalInt("id") else { throw VarlinkError.invalidParameter("id") }
            guard let report = try await store.stocktakeReport(id: Int64(id)) else { throw LendingError.noSuchStocktake(Int64(id)) }
            let text: String
            if try p.string("format") == "json" {
                text = String(decoding: try WireCoding.encode(report.entries).serializedBytes(), as: UTF8.self)
            } else {
                var options = RentalExport.CSVOptions(timeZone: try exportZone(p), byteOrderMark: try p.optionalBool("byteOrderMark") ?? false)
                options.neutralizeFormulas = true
                text = report.csv(options: options)
            }
            return ["text": .string(text), "count": .int(Int64(report.entries.count))]
        case "GetMonthlyReport":
            let report = try await store.monthlyReport(month: try p.string("month"), timeZone: try exportZone(p), now: now())
            return ["report": try WireCoding.encode(report)]
        case "GetDashboard":
            let days = try p.optionalInt("days") ?? LendingDashboard.defaultDays
            let dashboard = try await store.dashboard(days: days, timeZone: try exportZone(p), now: now())
            return ["dashboard": try WireCoding.encode(dashboard)]
        case "ListActive":
            return try rentals(try await store.activeRentals(userId: try p.optionalString("userId"), page: try p.page()))
        case "ListOverdue":
            return try rentals(try await store.overdueRentals(at: now(), page: try p.page()))
        case "History":
            return try rentals(try await store.history(try query(p), page: try p.page()))
        case "ExportHistory":
            let q = try query(p)
            let rentals: [Rental]
            var next: String?
            let continuation = try p.optionalString("cursor") != nil
            if try p.optionalLimit() != nil || continuation {
                let page = try await store.history(q, page: try p.page())
                rentals = page.items
                next = page.nextCursor
            } else {
                rentals = try await store.allHistory(q)
            }
            let text: String
            if try p.string("format") == "json" {
                text = String(decoding: try RentalExport.json(rentals), as: UTF8.self)
            } else {
                let options = RentalExport.CSVOptions(timeZone: try exportZone(p),
                                                      byteOrderMark: try !continuation && (p.optionalBool("byteOrderMark") ?? false))
                let csv = RentalExport.csv(rentals, options: options)
                // Later pages continue the file: drop the header line.
                text = continuation ? (csv.range(of: "\r\n").map { String(csv[$0.upperBound...]) } ?? csv) : csv
            }
            var reply: [String: JSONValue] = ["text": .string(text), "count": .int(Int64(rentals.count))]
            if let next { reply["nextCursor"] = .string(next) }
            return reply
        default:
            throw VarlinkError.methodNotImplemented(call.method)
        }
    }

    /// The time zone of a CSV export: `timeZone`, else the kiosk's.
    private func exportZone(_ p: Parameters) throws -> TimeZone {
        guard let zone = try p.optionalString("timeZone") else {
            return TimeZone(identifier: timeZoneName) ?? TimeZone(secondsFromGMT: 0)!
        }
        guard let tz = TimeZone(identifier: zone) else {
            throw LendingError.invalidField("timeZone", reason: "unknown time zone '\(zone)'; use a name such as Europe/Berlin or UTC")
        }
        return tz
    }

    private func query(_ p: Parameters) throws -> HistoryQuery {
        let since = try p.optionalDate("since", interface: name)
        let until = try p.optionalDate("until", interface: name)
        if let since, let until, until <= since {
            throw LendingError.invalidField("until", reason: "must be after since")
        }
        return HistoryQuery(deviceId: try p.optionalString("deviceId"), userId: try p.optionalString("userId"),
                            since: since, until: until, includeActive: !(try p.optionalBool("returnedOnly") ?? false))
    }

    private func rentals(_ page: Page<Rental>) throws -> [String: JSONValue] {
        let t = now()
        var reply: [String: JSONValue] = ["rentals": .array(try page.items.map { try WireCoding.encode($0, now: t) })]
        if let next = page.nextCursor { reply["nextCursor"] = .string(next) }
        return reply
    }
}
