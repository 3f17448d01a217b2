import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Varlink
import VarlinkNIO

/// roombridge-web's settings (flags of the executable; docs/web.md).
public struct WebOptions: Sendable {
    public var host: String
    public var port: Int
    public var socketPath: String
    /// The zone dates are shown in; nil: the daemon's (`lending.time_zone`, else its system's).
    public var timeZone: TimeZone?
    public var idleSeconds: Int
    /// Admin accounts; nil: nobody can sign in.
    public var accounts: Accounts?
    /// Mark cookies `Secure` (pages reached over HTTPS through a proxy).
    public var secureCookies: Bool
    /// Open HTTP connections beyond which a new one is closed at once; keep it below the open
    /// file limit (`LimitNOFILE` in the unit), so that connections that send nothing cannot
    /// take the last descriptors the kiosk needs.
    public var maxConnections: Int
    /// How long a connection may stay quiet, or spend sending one request's head, before it is
    /// closed (a request line sent a byte at a time does not keep it open; event streams do).
    public var connectionTimeout: Duration
    /// API tokens for `/api/v1`; nil: every API call is refused (401).
    public var apiTokens: APITokens?
    /// Per API token: requests at once, then per second.
    public var apiBurst: Int
    public var apiPerSecond: Double

    public init(host: String = "127.0.0.1", port: Int = 8080, socketPath: String = "/run/roombridge/roombridge.sock",
                timeZone: TimeZone? = nil, idleSeconds: Int = 6, accounts: Accounts? = nil, secureCookies: Bool = false,
                maxConnections: Int = 512, connectionTimeout: Duration = .seconds(30), apiTokens: APITokens? = nil,
                apiBurst: Int = 60, apiPerSecond: Double = 20) {
        self.apiTokens = apiTokens
        self.apiBurst = apiBurst
        self.apiPerSecond = apiPerSecond
        self.maxConnections = maxConnections
        self.connectionTimeout = connectionTimeout
        self.host = host
        self.port = port
        self.socketPath = socketPath
        self.timeZone = timeZone
        self.idleSeconds = idleSeconds
        self.accounts = accounts
        self.secureCookies = secureCookies
    }
}

/// The web front end: an HTTP server whose every page is read from roombridged over Varlink.
public enum WebServer {
    /// The services to run in one ServiceGroup: the HTTP server and the Watch fan-out. The
    /// fan-out is listed last so it stops first on SIGTERM, ending the browsers' event
    /// streams, which lets the HTTP server finish its requests and stop.
    public static func services(_ options: WebOptions, logger: Logger) -> [any Service] {
        let link = DaemonLink(socketPath: options.socketPath)
        let hub = EventHub(link: link)
        let limit = ConnectionLimit(maximum: options.maxConnections)
        let app = Application(
            router: router(options, link: link, hub: hub),
            server: .http1(configuration: .init(
                additionalChannelHandlers: [ConnectionLimit.Handler(limit: limit, logger: logger)],
                idleTimeout: TimeAmount(options.connectionTimeout))),
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "roombridge-web"),
            onServerRunning: { channel in
                logger.info("roombridge-web listening on http://\(options.host):\(channel.localAddress?.port ?? options.port)/kiosk")
            },
            logger: logger)
        return [app, WatchService(hub: hub)]
    }

    static func router(_ options: WebOptions, link: DaemonLink, hub: EventHub) -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        let pages = Pages(link: link)
        let admin = AdminRoutes(accounts: options.accounts, sessions: Sessions(), admin: AdminPages(link: link),
                                secureCookies: options.secureCookies)
        @Sendable func localizer(_ request: Request) -> Localizer {
            Localizer(language: LanguageChoice.language(of: request), timeZone: options.timeZone ?? hub.daemonTimeZone ?? .current)
        }
        router.add(middleware: LanguageChoice(secure: options.secureCookies))

        router.get("/") { _, _ in Response(status: .seeOther, headers: [.location: "/kiosk"]) }
        for asset in Assets.all { asset.add(to: router) }

        router.get("/kiosk") { request, _ in
            html(.ok, KioskPage.render(localizer(request), idleSeconds: options.idleSeconds))
        }
        router.get("/events") { request, _ -> Response in
            let l = localizer(request)
            return await eventStream(request, hub) { KioskPage.sse($0, l) }
        }

        admin.add(to: router, localizer: localizer)
        APIRoutes(link: link, hub: hub, tokens: options.apiTokens, limit: APIRateLimit(burst: options.apiBurst, perSecond: options.apiPerSecond))
            .add(to: router, localizer: localizer)
        CurtainPage(link: link).add(to: router, admin: admin, localizer: localizer)
        DeskForms(link: link, pages: pages).add(to: router, admin: admin, localizer: localizer)
        UserImport(link: link, pages: pages).add(to: router, admin: admin, localizer: localizer)
        BookingForms(link: link, pages: pages).add(to: router, admin: admin, localizer: localizer)
        StocktakePages(link: link).add(to: router, admin: admin, localizer: localizer)
        ReportPages(link: link).add(to: router, admin: admin, localizer: localizer)
        DashboardPage(link: link, tokens: options.apiTokens).add(to: router, admin: admin, localizer: localizer)
        router.get("/devices") { request, _ in
            let v = await admin.viewer(request)
            return await page(localizer(request), request) { try await pages.devices(Query(request.uri.query), $0, viewer: v) }
        }
        router.get("/devices/:id") { request, context in
            let id = (context.parameters.get("id") ?? "").removingPercentEncoding ?? ""
            let v = await admin.viewer(request)
            return await page(localizer(request), request) { try await pages.device(id, Query(request.uri.query), $0, viewer: v) }
        }
        router.get("/rentals") { request, _ in
            let v = await admin.viewer(request)
            return await page(localizer(request), request) { try await pages.rentals($0, viewer: v) }
        }
        router.get("/history") { request, _ in
            let v = await admin.viewer(request)
            return await page(localizer(request), request) { try await pages.history(Query(request.uri.query), $0, viewer: v) }
        }
        router.get("/history.csv") { request, _ -> Response in
            let l = localizer(request)
            do {
                let text = try await pages.historyCSV(Query(request.uri.query), l)
                var headers = HTTPFields()
                headers[.contentType] = "text/csv; charset=utf-8"
                headers[.contentDisposition] = "attachment; filename=\"roombridge-history.csv\""
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
            } catch {
                return errorPage(error, l, path: request.uri.path)
            }
        }
        router.get("/users") { request, _ in
            let v = await admin.viewer(request)
            return await page(localizer(request), request) { try await pages.users(Query(request.uri.query), $0, viewer: v) }
        }
        return router
    }

    /// A Server-Sent Events response fed by the hub from the request's `Last-Event-ID` on, each message as `render`
    /// words it (the kiosk's `/events`, the API's `/api/v1/events`).
    static func eventStream(_ request: Request, _ hub: EventHub, render: @escaping @Sendable (HubMessage) -> String) async -> Response {
        let last = request.headers.first { $0.name.canonicalName == "last-event-id" }
            .flatMap { Int($0.value.trimmingCharacters(in: .whitespaces)) }
        let stream = await hub.subscribe(lastEventID: last)
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            for await message in stream { try await writer.write(ByteBuffer(string: render(message))) }
            try await writer.finish(nil)
        })
    }

    static func page(_ l: Localizer, _ request: Request, status: HTTPResponse.Status = .ok,
                     _ render: (Localizer) async throws -> String) async -> Response {
        do {
            return html(status, try await render(l))
        } catch {
            return errorPage(error, l, path: request.uri.path)
        }
    }

    /// The error as a page that says what to do, with the status that fits it.
    static func errorPage(_ error: any Error, _ l: Localizer, path: String) -> Response {
        let status: HTTPResponse.Status
        let text: String
        switch error {
        case VarlinkClientError.outcomeUnknown:
            status = .serviceUnavailable
            text = l.t("error.outcomeUnknown")
        case let e as VarlinkClientError:
            status = .serviceUnavailable
            text = l.t("error.daemon", ["reason": e.description])
        case let e as VarlinkError where e.namesAMissingRecord:
            status = .notFound
            text = l.t("error.notFound", ["path": path])
        case let e as VarlinkError:
            status = .badRequest
            text = Refusals.sentence(e, l)
        case PageError.badDate(let value):
            status = .badRequest
            text = l.t("error.badDate", ["value": value])
        case PageError.unknownAction:
            status = .notFound
            text = l.t("error.notFound", ["path": path])
        default:
            status = .internalServerError
            text = "\(error)"
        }
        return html(status, HTML.page(l, title: l.t("error.title"), active: "", viewer: .anonymous,
                                      body: "<p class=\"error\" id=\"error\">\(HTML.escape(text))</p>"))
    }

    /// roombridge-web's log handler: standard error, with every control character a client could
    /// send (a sign-in name, a path) escaped, so that one event is one line (`LogText`).
    public static func logHandler(label: String, level: Logger.Level) -> any LogHandler {
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return EscapingLogHandler(handler)
    }

    static func html(_ status: HTTPResponse.Status, _ body: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentSecurityPolicy] = "default-src 'self'; frame-ancestors 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

}

extension VarlinkError {
    /// The daemon has no such record (`NoSuchDevice`, `NoSuchUser`, `NoSuchBadge`, …): a page's and an API route's 404.
    var namesAMissingRecord: Bool { name.split(separator: ".").last?.hasPrefix("NoSuch") == true }
}

/// Runs the hub's Watch until graceful shutdown, then ends every browser's event stream.
struct WatchService: Service {
    let hub: EventHub

    func run() async throws {
        await cancelWhenGracefulShutdown { await hub.run() }
        await hub.finishAll()
    }
}
