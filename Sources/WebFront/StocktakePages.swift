import Foundation
import Hummingbird
import Lending
import Logging
import NIOCore
import RoomBridgeAPI
import Varlink
import VarlinkNIO

/// The stocktake pages: `/stocktakes` (the list, starting one, closing the open one), a report
/// `/stocktakes/ID` and its CSV `/stocktakes/ID.csv`, through `io.roombridge.Lending`'s
/// StartStocktake, CloseStocktake, GetStocktake, ListStocktakes and ExportStocktake. Anyone may
/// read them, as the history; starting and closing need a signed-in admin, recorded as the actor.
struct StocktakePages: Sendable {
    let link: DaemonLink
    let logger = Logger(label: "roombridge-web.stocktakes")

    func list(_ l: Localizer, viewer: Viewer, values: Query = Query(nil), error: String? = nil) async throws -> String {
        async let stocktakes = link.read(LendingAPI.ListStocktakes.self, .init(limit: Pages.pageSize))
        async let groups = link.read(InventoryAPI.ListGroups.self, .init())
        let body = StocktakeViews.list(l, viewer: viewer, stocktakes: try await stocktakes.stocktakes, groups: try await groups.groups,
                                       values: values, error: error)
        return HTML.page(l, title: l.t("stocktake.pageTitle"), active: "stocktakes", viewer: viewer, body: body)
    }

    func report(_ id: StocktakeID, _ l: Localizer, viewer: Viewer, error: String? = nil) async throws -> String {
        async let report = link.read(LendingAPI.GetStocktake.self, .init(id: id))
        async let groups = link.read(InventoryAPI.ListGroups.self, .init())
        let body = StocktakeViews.report(l, viewer: viewer, report: try await report.report, groups: try await groups.groups, error: error)
        return HTML.page(l, title: StocktakeViews.title(id, l), active: "stocktakes", viewer: viewer, body: body)
    }

    /// The number in `/stocktakes/ID` (nil: no number).
    static func number(_ text: String) -> StocktakeID? {
        guard !text.isEmpty, text.allSatisfy(\.isASCII) else { return nil }
        return StocktakeID(text)
    }

    func add(to router: Router<WebRequestContext>, admin: AdminRoutes, localizer: @escaping @Sendable (Request) -> Localizer) {
        router.get("/stocktakes") { request, _ in
            let v = await admin.viewer(request)
            return await WebServer.page(localizer(request), request) { try await list($0, viewer: v) }
        }
        // `/stocktakes/3` is the report, `/stocktakes/3.csv` its CSV (`?bom=1`: with a byte order mark, for Excel).
        router.get("/stocktakes/:id") { request, context -> Response in
            let l = localizer(request)
            let raw = DeskForms.id(context)
            let csv = raw.hasSuffix(".csv")
            guard let id = Self.number(csv ? String(raw.dropLast(4)) : raw) else {
                return WebServer.errorPage(PageError.unknownAction(request.uri.path), l, path: request.uri.path)
            }
            do {
                if csv { return try await self.csv(id, bom: Query(request.uri.query)["bom"] == "1", l) }
                let v = await admin.viewer(request)
                return WebServer.html(.ok, try await report(id, l, viewer: v))
            } catch let error as VarlinkError where error.name.hasSuffix(".NoSuchStocktake") {
                // Said in words, with where to look, rather than as a page that does not exist.
                return WebServer.html(.notFound, HTML.page(l, title: l.t("error.title"), active: "stocktakes", viewer: .anonymous,
                                                           body: "<p class=\"error\" id=\"error\">\(HTML.escape(Refusals.sentence(error, l)))</p>"))
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
        router.post("/stocktakes/start") { request, context -> Response in
            let l = localizer(request)
            let form = try await AdminRoutes.form(request, context)
            let v = await admin.viewer(request)
            if let refusal = admin.check(v, form, l) { return refusal }
            /// The list again, with the form as it was sent and `error` above it.
            func again(_ status: HTTPResponse.Status, _ error: String) async -> Response {
                await WebServer.page(l, request, status: status) { try await list($0, viewer: v, values: form, error: error) }
            }
            let scope: StocktakeScope
            switch StocktakeViews.scope(from: form) {
            case .success(let s): scope = s
            case .failure(let missing): return await again(.badRequest, l.t(missing.key))
            }
            do {
                let s = try await link.write(LendingAPI.StartStocktake.self, .init(scope: scope, actor: v.user)).stocktake
                logger.notice("admin \(v.user ?? "?") started stocktake \(s.id) of \(s.scope.description)")
                await admin.notify(request, l.t("notice.stocktakeStarted", ["id": String(s.id)]))
                return Response(status: .seeOther, headers: [.location: "/stocktakes"])
            } catch let error as VarlinkError {
                return await again(.badRequest, Refusals.sentence(error, l))
            } catch VarlinkClientError.outcomeUnknown {
                logger.notice("admin \(v.user ?? "?") started a stocktake: no answer from roombridged; outcome unknown")
                return await again(.serviceUnavailable, l.t("error.outcomeUnknown"))
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
        admin.change(router, "/stocktakes/:id/close", localizer: localizer,
                     page: { l, v, error, _, context in
                         guard let id = Self.number(DeskForms.id(context)) else { return try await list(l, viewer: v, error: error) }
                         return try await report(id, l, viewer: v, error: error)
                     }) { _, v, l, request, context in
            guard let id = Self.number(DeskForms.id(context)) else { throw PageError.unknownAction(request.uri.path) }
            let s = try await link.write(LendingAPI.CloseStocktake.self, .init(id: id, actor: v.user)).report.stocktake
            await admin.notify(request, l.t("notice.stocktakeClosed", ["id": String(s.id), "counted": l.number(s.counted),
                                                                        "unexpected": l.number(s.unexpected)]))
            return "/stocktakes/\(s.id)"
        }
    }

    /// The report as CSV (the daemon's ExportStocktake, times in the kiosk's zone), as a download.
    func csv(_ id: StocktakeID, bom: Bool, _ l: Localizer) async throws -> Response {
        let text = try await link.read(LendingAPI.ExportStocktake.self,
                                       .init(id: id, format: "csv", timeZone: l.timeZone.identifier, byteOrderMark: bom)).text
        var headers = HTTPFields()
        headers[.contentType] = "text/csv; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"\(StocktakeViews.fileName(id))\""
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
