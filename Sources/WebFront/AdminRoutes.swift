import Foundation
import Hummingbird
import Logging
import RoomBridgeAPI
import Varlink
import VarlinkNIO

/// Sign-in, sign-out and the device forms. Every POST carries the CSRF token of its session
/// (or, for the sign-in form, of the `rb_login` cookie) and is refused without it.
struct AdminRoutes: Sendable {
    let accounts: Accounts?
    let sessions: Sessions
    let admin: AdminPages
    let secureCookies: Bool
    let logger = Logger(label: "roombridge-web.admin")

    static let sessionCookie = "rb_session"
    static let loginCookie = "rb_login"

    func viewer(_ request: Request) async -> Viewer {
        let id = request.cookies[Self.sessionCookie]?.value
        guard let s = await sessions.session(id) else { return .anonymous }
        let notice = request.method == .get ? await sessions.takeNotice(id) : nil
        if let userId = s.userId {
            return Viewer(user: nil, csrf: s.csrf, booker: .init(name: s.user, userId: userId), notice: notice)
        }
        return Viewer(user: s.user, csrf: s.csrf, notice: notice)
    }

    /// Says `text` on the admin's next page.
    func notify(_ request: Request, _ text: String) async {
        await sessions.post(text, to: request.cookies[Self.sessionCookie]?.value)
    }

    func cookie(_ name: String, _ value: String, maxAge: Int? = nil) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/", secure: secureCookies, httpOnly: true, sameSite: .strict)
    }

    /// A submitted form (`application/x-www-form-urlencoded`, at most 64 KiB).
    static func form(_ request: Request, _ context: WebRequestContext) async throws -> Query {
        let body = try await request.body.collect(upTo: 64 << 10)
        return Query(String(buffer: body))
    }

    func add(to router: Router<WebRequestContext>, localizer: @escaping @Sendable (Request) -> Localizer) {
        router.get("/login") { request, _ -> Response in
            let l = localizer(request)
            let token = request.cookies[Self.loginCookie]?.value ?? Sessions.token()
            var response = WebServer.html(.ok, admin.login(l, csrf: token, next: Query(request.uri.query)["next"],
                                                                 error: accounts == nil ? l.t("admin.none") : nil))
            response.setCookie(cookie(Self.loginCookie, token))
            return response
        }
        router.post("/login") { request, context -> Response in
            let l = localizer(request)
            let form = try await Self.form(request, context)
            guard let expected = request.cookies[Self.loginCookie]?.value, form["csrf"] == expected else {
                return refused(.forbidden, l, l.t("admin.csrf"))
            }
            let name = form["name"] ?? ""
            let next = form["next"].flatMap(Self.sameOriginPath) ?? "/devices"
            let known = accounts?.has(name) ?? false
            switch await sessions.beginAttempt(name, known: known, source: context.source) {
            case .admitted: break
            case .tooManyForName:
                return WebServer.html(.tooManyRequests, admin.login(l, csrf: expected, next: next, error: l.t("admin.tooMany")))
            case .busy:
                var busy = WebServer.html(.serviceUnavailable, admin.login(l, csrf: expected, next: next, error: l.t("admin.busy")))
                busy.headers[.retryAfter] = "1"
                return busy
            }
            let verified = await accounts?.verify(name: name, password: form.raw("password") ?? "") ?? false
            await sessions.endAttempt(name, known: known, source: context.source, succeeded: verified)
            guard verified else {
                logger.notice("failed sign-in as \(name)")
                return WebServer.html(.unauthorized, admin.login(l, csrf: expected, next: next, error: l.t("admin.failed")))
            }
            let userId = accounts?.userId(of: name)
            logger.notice("\(userId == nil ? "admin" : "self-service account") \(name) signed in")
            let (id, _) = await sessions.start(user: name, userId: userId)
            var response = Response(status: .seeOther, headers: [.location: next])
            response.setCookie(cookie(Self.sessionCookie, id))
            return response
        }
        router.post("/logout") { request, context -> Response in
            let l = localizer(request)
            let v = await viewer(request)
            let form = try await Self.form(request, context)
            guard v.signedIn != nil, form["csrf"] == v.csrf else { return refused(.forbidden, l, l.t("admin.csrf")) }
            await sessions.end(request.cookies[Self.sessionCookie]?.value)
            var response = Response(status: .seeOther, headers: [.location: "/devices"])
            response.setCookie(cookie(Self.sessionCookie, "", maxAge: 0))
            return response
        }

        router.get("/devices/new") { request, _ -> Response in
            let l = localizer(request)
            let v = await viewer(request)
            guard v.user != nil else { return signIn(request) }
            return await WebServer.page(l, request) { try await admin.deviceForm($0, viewer: v, device: nil, form: nil, error: nil) }
        }
        router.post("/devices/new") { request, context -> Response in
            let l = localizer(request)
            let form = try await Self.form(request, context)
            let v = await viewer(request)
            if let refusal = check(v, form, l) { return refusal }
            do {
                let id = try await admin.add(form, actor: v.user)
                logger.notice("admin \(v.user ?? "?") added device \(id)")
                return Response(status: .seeOther, headers: [.location: "/devices/\(HTML.urlComponent(id))"])
            } catch let error as VarlinkError {
                return await WebServer.page(l, request, status: .badRequest) {
                    try await admin.deviceForm($0, viewer: v, device: nil, form: form, error: Self.message(error, l))
                }
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
        router.get("/devices/:id/edit") { request, context -> Response in
            let l = localizer(request)
            let v = await viewer(request)
            guard v.user != nil else { return signIn(request) }
            let id = (context.parameters.get("id") ?? "").removingPercentEncoding ?? ""
            return await WebServer.page(l, request) {
                let device = try await admin.link.read(InventoryAPI.GetDevice.self, .init(id: id)).device.device
                return try await admin.deviceForm($0, viewer: v, device: device, form: nil, error: nil)
            }
        }
        router.post("/devices/:id/delete") { request, context -> Response in
            let l = localizer(request)
            let form = try await Self.form(request, context)
            let v = await viewer(request)
            if let refusal = check(v, form, l) { return refusal }
            let id = (context.parameters.get("id") ?? "").removingPercentEncoding ?? ""
            // A destructive action asks once (no script needed: a page with the same form, confirmed).
            guard form["confirmed"] == "yes" else {
                return WebServer.html(.ok, Self.confirmation(l, viewer: v, action: request.uri.path, form: form,
                                                             question: l.t("confirm.deleteDevice", ["device": id]),
                                                             button: l.t("device.delete"), cancel: "/devices/\(HTML.urlComponent(id))"))
            }
            do {
                try await admin.delete(id, actor: v.user)
                logger.notice("admin \(v.user ?? "?") deleted device \(id)")
                await notify(request, l.t("notice.deleted", ["device": id]))
                return Response(status: .seeOther, headers: [.location: "/devices"])
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)  // e.g. lent: the daemon says so
            }
        }
        router.post("/devices/:id/edit") { request, context -> Response in
            let l = localizer(request)
            let form = try await Self.form(request, context)
            let v = await viewer(request)
            if let refusal = check(v, form, l) { return refusal }
            let id = (context.parameters.get("id") ?? "").removingPercentEncoding ?? ""
            do {
                try await admin.update(id, form, actor: v.user)
                logger.notice("admin \(v.user ?? "?") changed device \(id)")
                return Response(status: .seeOther, headers: [.location: "/devices/\(HTML.urlComponent(id))"])
            } catch let error as VarlinkError where !error.name.hasSuffix(".NoSuchDevice") {
                return await WebServer.page(l, request, status: .badRequest) {
                    let device = try await admin.link.read(InventoryAPI.GetDevice.self, .init(id: id)).device.device
                    return try await admin.deviceForm($0, viewer: v, device: device, form: form, error: Self.message(error, l))
                }
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
    }

    /// Refuses a change by someone not signed in as an admin (401; 403 for a self-service
    /// account) or without the session's token (403).
    func check(_ v: Viewer, _ form: Query, _ l: Localizer) -> Response? {
        if v.booker != nil { return refused(.forbidden, l, l.t("admin.adminOnly")) }
        return checkSignedIn(v, form, l)
    }

    /// Refuses a change by someone not signed in at all (401) or without the session's token
    /// (403); a self-service account passes (the booking form, which checks whom it books for).
    func checkSignedIn(_ v: Viewer, _ form: Query, _ l: Localizer) -> Response? {
        guard v.signedIn != nil else { return refused(.unauthorized, l, l.t("admin.required")) }
        guard let token = form["csrf"], token == v.csrf else { return refused(.forbidden, l, l.t("admin.csrf")) }
        return nil
    }

    /// `next` when it is a path on this site, else nil: it starts with one `/`, and holds no
    /// backslash, whitespace or control character (a browser reads `/\host` and `/\t/host` as
    /// another origin, as it does `//host`), nor a percent-encoded one that a later decoding
    /// could turn into such.
    static func sameOriginPath(_ next: String) -> String? {
        guard next.hasPrefix("/"), !next.hasPrefix("//") else { return nil }
        for scalar in next.unicodeScalars {
            if scalar == "\\" || scalar.properties.isWhitespace || scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                return nil
            }
        }
        let lowered = next.lowercased()
        for encoded in ["%5c", "%2f%2f", "%09", "%0a", "%0d", "%00"] where lowered.contains(encoded) { return nil }
        if lowered.hasPrefix("/%2f") { return nil }
        return next
    }

    /// The page that asks once before a destructive action: the question, the form's fields
    /// again with `confirmed=yes`, and a way back.
    static func confirmation(_ l: Localizer, viewer: Viewer, action: String, form: Query, question: String,
                             button: String, cancel: String) -> String {
        let fields = form.items.filter { $0.0 != "csrf" && $0.0 != "confirmed" }.map {
            "<input type=\"hidden\" name=\"\(HTML.escape($0.0))\" value=\"\(HTML.escape($0.1))\">"
        }.joined()
        let body = "<p id=\"confirm-question\">\(HTML.escape(question))</p>"
            + "<form method=\"post\" action=\"\(HTML.escape(action))\" class=\"inline\">" + viewer.csrfField + fields
            + "<input type=\"hidden\" name=\"confirmed\" value=\"yes\">"
            + "<button type=\"submit\" id=\"confirm\">\(HTML.escape(button))</button></form> "
            + "<a href=\"\(HTML.escape(cancel))\" id=\"cancel\">\(HTML.escape(l.t("confirm.cancel")))</a>"
        return HTML.page(l, title: l.t("confirm.title"), active: "", viewer: viewer, body: body)
    }

    func refused(_ status: HTTPResponse.Status, _ l: Localizer, _ text: String) -> Response {
        WebServer.html(status, HTML.page(l, title: l.t("error.title"), active: "", viewer: .anonymous,
                                         body: "<p class=\"error\" id=\"error\">\(HTML.escape(text))</p>"))
    }

    func signIn(_ request: Request) -> Response {
        Response(status: .seeOther, headers: [.location: "/login?next=\(HTML.urlComponent(request.uri.path))"])
    }

    static func message(_ error: VarlinkError, _ l: Localizer) -> String {
        Refusals.sentence(error, l)
    }
}
