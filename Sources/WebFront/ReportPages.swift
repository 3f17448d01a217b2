import Foundation
import Hummingbird
import Lending
import RoomBridgeAPI
import Varlink

/// The monthly lending report: `/reports` (this month in the kiosk's time zone) and
/// `/reports/YYYY-MM`, through `io.roombridge.Lending.GetMonthlyReport` in the kiosk's zone. Anyone
/// may read it, as the history it is made of.
struct ReportPages: Sendable {
    let link: DaemonLink

    func report(_ month: String, _ l: Localizer, viewer: Viewer) async throws -> String {
        let report = try await link.read(LendingAPI.GetMonthlyReport.self, .init(month: month, timeZone: l.timeZone.identifier)).report
        return HTML.page(l, title: ReportViews.title(report.month, l), active: "reports", viewer: viewer,
                         body: ReportViews.report(l, report: report))
    }

    /// The page saying how a month is written, with 400.
    static func badMonth(_ text: String, _ l: Localizer) -> Response {
        WebServer.html(.badRequest, HTML.page(l, title: l.t("error.title"), active: "reports", viewer: .anonymous,
                                              body: "<p class=\"error\" id=\"error\">\(HTML.escape(ReportViews.badMonth(text, l)))</p>"))
    }

    func add(to router: Router<WebRequestContext>, admin: AdminRoutes, localizer: @escaping @Sendable (Request) -> Localizer) {
        router.get("/reports") { request, _ -> Response in
            let month = ReportViews.month(of: Date(), in: localizer(request).timeZone)
            return Response(status: .found, headers: [.location: "/reports/\(month)", .cacheControl: "no-store"])
        }
        router.get("/reports/:month") { request, context -> Response in
            let l = localizer(request)
            let raw = (context.parameters.get("month") ?? "").removingPercentEncoding ?? ""
            guard let month = ReportViews.month(raw) else { return Self.badMonth(raw, l) }
            let v = await admin.viewer(request)
            do {
                return WebServer.html(.ok, try await report(month, l, viewer: v))
            } catch let error as VarlinkError where error.name.hasSuffix(".InvalidField") && error.parameters["field"]?.stringValue == "month" {
                return Self.badMonth(raw, l)
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
    }
}
