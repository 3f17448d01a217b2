import Foundation
import Hummingbird
import Lending
import RoomBridgeAPI
import Varlink

/// `/dashboard`: lending at a glance (``DashboardViews``), through
/// `io.roombridge.Lending.GetDashboard` in the kiosk's zone, and today's time axis through
/// `io.roombridge.State.GetTimeline`. For a signed-in admin, or a request
/// with an API token (`Authorization: Bearer`, read or write); `?days=N` (1–366, default 30).
struct DashboardPage: Sendable {
    let link: DaemonLink
    let tokens: APITokens?

    func add(to router: Router<WebRequestContext>, admin: AdminRoutes, localizer: @escaping @Sendable (Request) -> Localizer) {
        router.get("/dashboard") { request, _ -> Response in
            let l = localizer(request)
            let v = await admin.viewer(request)
            if v.user == nil && tokens?.token(authorization: request.headers[.authorization]) == nil {
                if v.booker != nil { return admin.refused(.forbidden, l, l.t("admin.adminOnly")) }
                return admin.signIn(request)
            }
            let query = Query(request.uri.query)
            let days = query["days"].map { Int($0) ?? 0 } ?? LendingDashboard.defaultDays
            guard (1...LendingDashboard.maximumDays).contains(days) else {
                return WebServer.html(.badRequest, HTML.page(l, title: l.t("error.title"), active: "dashboard", viewer: v, body:
                    "<p class=\"error\" id=\"error\">\(HTML.escape(l.t("dashboard.badDays", ["value": query.raw("days") ?? ""])))</p>"))
            }
            return await WebServer.page(l, request) { l in
                async let board = link.read(LendingAPI.GetDashboard.self, .init(days: days, timeZone: l.timeZone.identifier)).dashboard
                async let today = link.read(StateAPI.GetTimeline.self, VarlinkNothing()).timeline
                return HTML.page(l, title: l.t("dashboard.title"), active: "dashboard", viewer: v,
                                 body: DashboardViews.page(l, try await board, today: try await today))
            }
        }
    }
}
