import Foundation
import Hummingbird
import JSON
import Logging
import RoomBridgeAPI
import Synchronization
import Varlink
import VarlinkNIO

/// One route of the HTTP API: an HTTP method and path over one Varlink method of the contract. Everything else
/// follows from the method's description in ``InterfaceIDL``: the query parameters of a GET and the fields of a
/// request body (the method's input, less the path's parameters and `actor`), the reply (the method's output, as the
/// daemon sent it), and the OpenAPI document (``APIDocument``). So the API cannot say something the contract does
/// not.
struct APIRoute: Sendable {
    enum Verb: String, Sendable { case get, post, put, patch, delete }
    var verb: Verb
    /// OpenAPI form, below `/api/v1`: `/devices/{id}`.
    var path: String
    /// The Varlink method, e.g. `io.roombridge.Inventory.GetDevice`.
    var method: String
    var summary: String
    /// A path parameter that fills an input field of another name (the router needs one name per position:
    /// `/users/{id}` and `/users/{id}/badges`, where `AddBadge` takes `userId`).
    var field: [String: String] = [:]

    /// The input field a path parameter fills.
    func field(of pathParameter: String) -> String { field[pathParameter] ?? pathParameter }
    /// The input fields the path fills.
    var pathFields: [String] { pathParameters.map(field(of:)) }

    var scope: APITokens.Scope { verb == .get ? .read : .write }
    /// The path's parameters, in order.
    var pathParameters: [String] {
        path.split(separator: "/").compactMap { $0.hasPrefix("{") ? String($0.dropFirst().dropLast()) : nil }
    }
    var operationID: String {
        let parts = method.split(separator: ".")
        return parts.suffix(2).joined()
    }

    /// The routes, in the document's order.
    static let all: [APIRoute] = [
        APIRoute(verb: .get, path: "/state", method: "io.roombridge.State.GetState",
                 summary: "The daemon's state: readers, the last tap, curtains, the lending arm, presence, the database."),
        APIRoute(verb: .get, path: "/groups", method: "io.roombridge.Inventory.ListGroups", summary: "Device groups."),
        APIRoute(verb: .post, path: "/groups", method: "io.roombridge.Inventory.AddGroup", summary: "Adds a device group ({\"group\": {…}})."),
        APIRoute(verb: .put, path: "/groups", method: "io.roombridge.Inventory.UpdateGroup",
                 summary: "Renames or reorders a device group ({\"group\": {…}}, by its id)."),
        APIRoute(verb: .delete, path: "/groups/{id}", method: "io.roombridge.Inventory.DeleteGroup", summary: "Deletes a group no device is in."),
        APIRoute(verb: .get, path: "/devices", method: "io.roombridge.Inventory.ListDevices",
                 summary: "Devices, filtered and paged (pass nextCursor as cursor)."),
        APIRoute(verb: .post, path: "/devices", method: "io.roombridge.Inventory.AddDevice", summary: "Adds a device."),
        APIRoute(verb: .get, path: "/devices/{id}", method: "io.roombridge.Inventory.GetDevice",
                 summary: "One device, its active rental and its tags."),
        APIRoute(verb: .patch, path: "/devices/{id}", method: "io.roombridge.Inventory.UpdateDevice",
                 summary: "Changes a device's fields."),
        APIRoute(verb: .delete, path: "/devices/{id}", method: "io.roombridge.Inventory.DeleteDevice",
                 summary: "Deletes a device that is not lent (its history and log stay)."),
        APIRoute(verb: .get, path: "/devices/{id}/log", method: "io.roombridge.Inventory.DeviceLog",
                 summary: "A device's change log, newest first."),
        APIRoute(verb: .get, path: "/users", method: "io.roombridge.Inventory.ListUsers", summary: "Users, paged."),
        APIRoute(verb: .post, path: "/users", method: "io.roombridge.Inventory.AddUser", summary: "Adds a user."),
        APIRoute(verb: .get, path: "/users/{id}", method: "io.roombridge.Inventory.GetUser", summary: "One user and their badges."),
        APIRoute(verb: .patch, path: "/users/{id}", method: "io.roombridge.Inventory.UpdateUser", summary: "Renames a user."),
        APIRoute(verb: .delete, path: "/users/{id}", method: "io.roombridge.Inventory.DeleteUser",
                 summary: "Deletes a user without devices, and their badges (their history stays)."),
        APIRoute(verb: .get, path: "/devices/{id}/tags", method: "io.roombridge.Inventory.ListTagBindings",
                 summary: "The tags bound to a device.", field: ["id": "deviceId"]),
        APIRoute(verb: .post, path: "/devices/{id}/tags", method: "io.roombridge.Inventory.BindTag",
                 summary: "Binds a tag (its UID) to a device.", field: ["id": "deviceId"]),
        APIRoute(verb: .delete, path: "/tags/{uid}", method: "io.roombridge.Inventory.UnbindTag", summary: "Unbinds a tag."),
        APIRoute(verb: .get, path: "/badges", method: "io.roombridge.Inventory.ListBadges",
                 summary: "Badges: a user's (userId), or every badge, paged."),
        APIRoute(verb: .delete, path: "/badges/{identifier}", method: "io.roombridge.Inventory.DeleteBadge", summary: "Unbinds a card."),
        APIRoute(verb: .post, path: "/import", method: "io.roombridge.Inventory.Import",
                 summary: "Imports a CSV file of users, badges or devices in one transaction (dryRun: only say what would change)."),
        APIRoute(verb: .post, path: "/users/{id}/badges", method: "io.roombridge.Inventory.AddBadge",
                 summary: "Binds a card to a user.", field: ["id": "userId"]),
        APIRoute(verb: .get, path: "/rentals", method: "io.roombridge.Lending.ListActive", summary: "Active rentals, oldest first."),
        APIRoute(verb: .get, path: "/rentals/overdue", method: "io.roombridge.Lending.ListOverdue",
                 summary: "Active rentals past their due date, most overdue first."),
        APIRoute(verb: .get, path: "/history", method: "io.roombridge.Lending.History",
                 summary: "Rentals that started in [since, until), newest first."),
        APIRoute(verb: .get, path: "/history/export", method: "io.roombridge.Lending.ExportHistory",
                 summary: "The history as CSV (spreadsheet dates in timeZone) or JSON text, paged."),
        APIRoute(verb: .post, path: "/lend", method: "io.roombridge.Lending.Lend", summary: "Lends a device to a user."),
        APIRoute(verb: .post, path: "/return", method: "io.roombridge.Lending.Return", summary: "Returns a lent device."),
        APIRoute(verb: .post, path: "/renew", method: "io.roombridge.Lending.Renew", summary: "Moves a rental's due date."),
        APIRoute(verb: .get, path: "/bookings", method: "io.roombridge.Lending.ListBookings",
                 summary: "Bookings of a device or a user that overlap [from, until), by start, paged."),
        APIRoute(verb: .post, path: "/bookings", method: "io.roombridge.Lending.Book",
                 summary: "Books a device for a user from startsAt to endsAt (no overlap with its other bookings)."),
        APIRoute(verb: .post, path: "/bookings/{id}/cancel", method: "io.roombridge.Lending.CancelBooking",
                 summary: "Cancels a booking that is still booked."),
        APIRoute(verb: .get, path: "/stocktakes", method: "io.roombridge.Lending.ListStocktakes", summary: "Stocktakes, newest first, paged."),
        APIRoute(verb: .post, path: "/stocktakes", method: "io.roombridge.Lending.StartStocktake",
                 summary: "Starts a stocktake of all devices, a group or a location; device taps then count instead of lending."),
        APIRoute(verb: .get, path: "/stocktakes/{id}", method: "io.roombridge.Lending.GetStocktake",
                 summary: "A stocktake's report: found, missing, lent and unexpected."),
        APIRoute(verb: .post, path: "/stocktakes/{id}/close", method: "io.roombridge.Lending.CloseStocktake",
                 summary: "Closes a stocktake and keeps its report."),
        APIRoute(verb: .get, path: "/stocktakes/{id}/export", method: "io.roombridge.Lending.ExportStocktake",
                 summary: "A stocktake's report as CSV (spreadsheet dates in timeZone)."),
        APIRoute(verb: .get, path: "/reports/monthly/{month}", method: "io.roombridge.Lending.GetMonthlyReport",
                 summary: "The lending report of a month (YYYY-MM) in the kiosk's time zone or timeZone."),
        APIRoute(verb: .get, path: "/dashboard", method: "io.roombridge.Lending.GetDashboard",
                 summary: "Lending at a glance: now by group, the last days (default 30), the busiest and the never-lent devices."),
        APIRoute(verb: .get, path: "/curtains", method: "io.roombridge.Curtain.GetState", summary: "The curtains."),
        APIRoute(verb: .post, path: "/curtains/{name}/open", method: "io.roombridge.Curtain.Open", summary: "Opens a curtain fully."),
        APIRoute(verb: .post, path: "/curtains/{name}/close", method: "io.roombridge.Curtain.Close", summary: "Closes a curtain fully."),
        APIRoute(verb: .post, path: "/curtains/{name}/stop", method: "io.roombridge.Curtain.Stop", summary: "Stops a curtain's motion."),
        APIRoute(verb: .post, path: "/curtains/{name}/move", method: "io.roombridge.Curtain.MoveTo",
                 summary: "Moves a curtain to a position (percent open)."),
        APIRoute(verb: .post, path: "/curtains/{name}/reconnect", method: "io.roombridge.Curtain.Reconnect",
                 summary: "Drops a curtain's link and connects again."),
        APIRoute(verb: .post, path: "/curtains/{name}/sync", method: "io.roombridge.Curtain.Sync",
                 summary: "Asks a curtain's controller for its state and schedule again."),
        APIRoute(verb: .put, path: "/curtains/{name}/schedule", method: "io.roombridge.Curtain.SetSchedule",
                 summary: "Sets a curtain's open and close times (HH:MM) and whether each is on."),
        APIRoute(verb: .get, path: "/presence", method: "io.roombridge.Presence.GetPresence", summary: "Who or what is in the room."),
        APIRoute(verb: .get, path: "/timeline", method: "io.roombridge.State.GetTimeline",
                 summary: "Today on one time axis: each curtain's positions and each presence region's stays."),
        APIRoute(verb: .get, path: "/outbox", method: "io.roombridge.Outbox.Status",
                 summary: "The outbox's counts per target."),
        APIRoute(verb: .get, path: "/outbox/entries", method: "io.roombridge.Outbox.List", summary: "Outbox entries, by state, paged."),
        APIRoute(verb: .post, path: "/outbox/{seq}/retry", method: "io.roombridge.Outbox.Retry",
                 summary: "Sends a pending or dropped notification again now."),
        APIRoute(verb: .post, path: "/outbox/{seq}/drop", method: "io.roombridge.Outbox.Drop", summary: "Drops a pending notification: it is never sent."),
    ]
}

/// The interfaces' descriptions, parsed once.
enum ContractDescriptions {
    static let definitions: [String: VarlinkInterfaceDefinition] = {
        var all: [String: VarlinkInterfaceDefinition] = [:]
        for text in InterfaceIDL.all {
            // The texts are the daemon's own, parsed by every test run: a parse failure here is a build defect.
            guard let def = try? VarlinkInterfaceDefinition(parsing: text) else { continue }
            all[def.name] = def
        }
        return all
    }()

    /// The description of a fully qualified method, and its interface.
    static func method(_ name: String) -> (interface: VarlinkInterfaceDefinition, method: VarlinkMethodDefinition)? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        guard let def = definitions[String(name[..<dot])], let m = def.methods[String(name[name.index(after: dot)...])] else { return nil }
        return (def, m)
    }
}

/// An RFC 9457 problem: the daemon's typed error name, its parameters, and the sentence in the request's language.
struct APIProblem: Error {
    var status: HTTPResponse.Status
    var error: String
    var detail: String
    var parameters: [String: JSONValue] = [:]
    var headers: HTTPFields = [:]

    var response: Response {
        var body: [String: JSONValue] = [
            "type": .string("urn:roombridge:error:\(error)"),
            "title": .string(error.split(separator: ".").last.map(String.init) ?? error),
            "status": .int(Int64(status.code)),
            "detail": .string(detail),
            "error": .string(error),
        ]
        if !parameters.isEmpty { body["parameters"] = .object(parameters) }
        var headers = headers
        headers[.contentType] = "application/problem+json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(body).serialized())))
    }
}

/// A token bucket per token: `burst` requests at once, then `perSecond`.
final class APIRateLimit: Sendable {
    let burst: Double
    let perSecond: Double
    private let buckets = Mutex<[String: (tokens: Double, at: ContinuousClock.Instant)]>([:])

    init(burst: Int, perSecond: Double) {
        self.burst = Double(burst)
        self.perSecond = perSecond
    }

    /// Nil when `name` may go on; else the seconds until it may.
    func take(_ name: String, now: ContinuousClock.Instant = .now) -> Int? {
        buckets.withLock { buckets in
            var b = buckets[name] ?? (burst, now)
            let elapsed = now - b.at
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            b.tokens = min(burst, b.tokens + seconds * perSecond)
            b.at = now
            defer { buckets[name] = b }
            guard b.tokens >= 1 else { return max(1, Int(((1 - b.tokens) / perSecond).rounded(.up))) }
            b.tokens -= 1
            return nil
        }
    }
}

/// `/api/v1`: the routes above behind bearer tokens, and `/api/v1/openapi.json`.
struct APIRoutes: Sendable {
    let link: DaemonLink
    let hub: EventHub
    let tokens: APITokens?
    let limit: APIRateLimit
    let logger = Logger(label: "roombridge-web.api")

    func add(to router: Router<WebRequestContext>, localizer: @escaping @Sendable (Request) -> Localizer) {
        let document = APIDocument.text  // made once, at start, not on the event loop of the first request
        router.get("/api/v1/openapi.json") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: document)))
        }
        router.get("/api/v1/events") { request, _ -> Response in
            let l = localizer(request)
            do throws(APIProblem) {
                let token = try authorize(request, scope: .read, l)
                try takeFromBucket(token, l)
            } catch {
                return error.response
            }
            return await WebServer.eventStream(request, hub, render: Self.sse)
        }
        for route in APIRoute.all {
            let path = RouterPath("/api/v1/" + route.path.split(separator: "/").map {
                $0.hasPrefix("{") ? ":" + $0.dropFirst().dropLast() : $0
            }.joined(separator: "/"))
            let handler: @Sendable (Request, WebRequestContext) async throws -> Response = { request, context in
                do {
                    return try await handle(route, request, context, localizer(request))
                } catch let problem as APIProblem {
                    return problem.response
                }
            }
            switch route.verb {
            case .get: router.get(path, use: handler)
            case .post: router.post(path, use: handler)
            case .put: router.put(path, use: handler)
            case .patch: router.patch(path, use: handler)
            case .delete: router.delete(path, use: handler)
            }
        }
    }

    private func handle(_ route: APIRoute, _ request: Request, _ context: WebRequestContext, _ l: Localizer) async throws -> Response {
        let token = try authorize(request, scope: route.scope, l)
        try takeFromBucket(token, l)
        guard let (_, method) = ContractDescriptions.method(route.method) else {
            throw APIProblem(status: .internalServerError, error: "io.roombridge.web.NoSuchMethod", detail: route.method)
        }
        var parameters: [String: JSONValue] = [:]
        let inputs = Dictionary(method.input.map { ($0.name, $0.type) }) { a, _ in a }
        for name in route.pathParameters {
            // A path parameter is read as its field's type, as a query parameter is (`/bookings/7/cancel`: an int).
            let field = route.field(of: name), raw = context.parameters.get(name)?.removingPercentEncoding ?? ""
            parameters[field] = try inputs[field].map { type throws(APIProblem) in try Self.queryValue(raw, type, name: name, l) } ?? .string(raw)
        }
        if route.verb == .get {
            for (name, value) in Query(request.uri.query).items {
                guard let type = inputs[name], !route.pathFields.contains(name) else {
                    throw APIProblem(status: .badRequest, error: "org.varlink.service.InvalidParameter",
                                     detail: l.t("api.unknownParameter", ["parameter": name]), parameters: ["parameter": .string(name)])
                }
                parameters[name] = try Self.queryValue(value, type, name: name, l)
            }
        } else {
            let body = try await request.body.collect(upTo: 1 << 20)
            if body.readableBytes > 0 {
                guard case .object(let fields)? = try? JSONParser.parse(Array(body.readableBytesView)) else {
                    throw APIProblem(status: .badRequest, error: "io.roombridge.web.BadBody", detail: l.t("api.badBody"))
                }
                for (name, value) in fields {
                    guard inputs[name] != nil, !route.pathFields.contains(name), name != "actor" else {
                        throw APIProblem(status: .badRequest, error: "org.varlink.service.InvalidParameter",
                                         detail: l.t("api.unknownParameter", ["parameter": name]), parameters: ["parameter": .string(name)])
                    }
                    parameters[name] = value
                }
            }
            // Every change is recorded with the token's name as the actor.
            if inputs["actor"] != nil { parameters["actor"] = .string("token:\(token.name)") }
        }
        let reply: [String: JSONValue]
        do {
            reply = try await link.client.call(route.method, parameters: parameters,
                                               retry: route.verb == .get ? .idempotent : .notIfSent)
        } catch let error as VarlinkError {
            throw Self.problem(error, l)
        } catch VarlinkClientError.outcomeUnknown {
            throw APIProblem(status: .serviceUnavailable, error: "io.roombridge.web.OutcomeUnknown", detail: l.t("error.outcomeUnknown"))
        } catch {
            throw APIProblem(status: .serviceUnavailable, error: "io.roombridge.web.DaemonUnreachable",
                             detail: l.t("error.daemon", ["reason": "\(error)"]))
        }
        if route.verb != .get { logger.notice("API token \(token.name): \(route.method)") }
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(reply).serialized())))
    }

    /// One request from the token's bucket, or 429.
    private func takeFromBucket(_ token: APITokens.Token, _ l: Localizer) throws(APIProblem) {
        guard let wait = limit.take(token.name) else { return }
        var headers = HTTPFields()
        headers[.retryAfter] = String(wait)
        throw APIProblem(status: .tooManyRequests, error: "io.roombridge.web.RateLimited",
                         detail: l.t("api.rateLimited", ["seconds": String(wait)]), headers: headers)
    }

    /// The event stream's text for one hub message: the state (`event: state`, at first and after the daemon
    /// came back), each event as Watch sent it (`event:` its kind, `id:` its seq, so `Last-Event-ID` resumes), or
    /// `event: offline`.
    static func sse(_ message: HubMessage) -> String {
        switch message {
        case .snapshot(let state):
            let json = (try? JSONValueEncoder().encode(state))?.serialized() ?? "{}"
            return "id: \(state.seq)\nevent: state\ndata: \(json)\n\n"
        case .event(let event, _):
            return "id: \(event.seq)\nevent: \(event.kind)\ndata: \((event.raw ?? .object([:])).serialized())\n\n"
        case .offline:
            return "event: offline\ndata: {}\n\n"
        }
    }

    private func authorize(_ request: Request, scope: APITokens.Scope, _ l: Localizer) throws(APIProblem) -> APITokens.Token {
        var challenge = HTTPFields()
        challenge[.wwwAuthenticate] = "Bearer realm=\"roombridge\""
        guard let token = tokens?.token(authorization: request.headers[.authorization]) else {
            throw APIProblem(status: .unauthorized, error: "io.roombridge.web.Unauthorized", detail: l.t("api.unauthorized"),
                             headers: challenge)
        }
        guard token.scope == .write || scope == .read else {
            throw APIProblem(status: .forbidden, error: "io.roombridge.State.PermissionDenied",
                             detail: l.t("api.readOnly", ["token": token.name]))
        }
        return token
    }

    /// A query parameter as the IDL type of its field.
    static func queryValue(_ text: String, _ type: VarlinkType, name: String, _ l: Localizer) throws(APIProblem) -> JSONValue {
        let bad = APIProblem(status: .badRequest, error: "org.varlink.service.InvalidParameter",
                             detail: l.t("api.badParameter", ["parameter": name, "type": type.description]),
                             parameters: ["parameter": .string(name)])
        switch type {
        case .optional(let t): return try queryValue(text, t, name: name, l)
        case .int: guard let i = Int64(text) else { throw bad }; return .int(i)
        case .bool:
            switch text { case "true": return .bool(true); case "false": return .bool(false); default: throw bad }
        case .enum(let values): guard values.contains(text) else { throw bad }; return .string(text)
        case .string: return .string(text)
        default: throw bad
        }
    }

    /// The daemon's refusal as a problem: unknown records 404, bad input 400, permission 403, the rest (the record is
    /// not in a state that allows it: lent, not lent, a curtain locked out) 409.
    static func problem(_ error: VarlinkError, _ l: Localizer) -> APIProblem {
        let name = error.name
        let status: HTTPResponse.Status
        if error.namesAMissingRecord {
            status = .notFound
        } else if name.hasSuffix(".InvalidParameter") || name.hasSuffix(".InvalidField") {
            status = .badRequest
        } else if name.hasSuffix(".PermissionDenied") {
            status = .forbidden
        } else {
            status = .conflict
        }
        return APIProblem(status: status, error: name, detail: Refusals.sentence(error, l), parameters: error.parameters)
    }
}
