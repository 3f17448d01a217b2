import Foundation
import Hummingbird
import Lending
import Logging
import RoomBridgeAPI
import Varlink
import VarlinkNIO

/// The admin's forms on the rentals and users pages: lend by ID, return, renew, add a user, bind
/// the badge that was just tapped. Each goes through roombridged's existing methods
/// (`io.roombridge.Lending.Lend`/`Return`/`Renew`, `io.roombridge.Inventory.AddUser`/`AddBadge`).
struct DeskForms: Sendable {
    let link: DaemonLink
    let pages: Pages

    /// The sentence a lend or renew leaves on the next page: who has what, until when.
    static func lentNotice(_ key: String, _ r: Rental, _ l: Localizer) -> String {
        let args = ["device": r.deviceId, "user": r.userName]
        guard let due = r.dueAt else { return l.t(key, args) }
        return l.t(key + "Due", args.merging(["due": l.day(due)]) { a, _ in a })
    }

    func add(to router: Router<WebRequestContext>, admin: AdminRoutes, localizer: @escaping @Sendable (Request) -> Localizer) {
        admin.change(router, "/rentals/lend", localizer: localizer,
                     page: { l, v, error, _, _ in try await pages.rentals(l, viewer: v, error: error) }) { form, v, l, request, _ in
            let due = try form["due"].map { day throws(PageError) in try Self.endOfDay(day, l) }
            let reply = try await link.write(LendingAPI.Lend.self, .init(deviceId: form["device"] ?? "", userId: form["user"] ?? "",
                                                                         dueAt: due, actor: v.user))
            await admin.notify(request, Self.lentNotice("notice.lent", reply.rental, l))
            return "/rentals"
        }
        admin.change(router, "/rentals/return", localizer: localizer,
                     page: { l, v, error, _, _ in try await pages.rentals(l, viewer: v, error: error) },
                     confirm: { form, l in
                         (l.t("confirm.return", ["device": form["device"] ?? ""]), l.t("rentals.return"), "/rentals")
                     }) { form, v, l, request, _ in
            let reply = try await link.write(LendingAPI.Return.self, .init(deviceId: form["device"] ?? "", actor: v.user))
            await admin.notify(request, l.t("notice.returned", ["device": reply.rental.deviceId, "user": reply.rental.userName]))
            return "/rentals"
        }
        admin.change(router, "/rentals/renew", localizer: localizer,
                     page: { l, v, error, _, _ in try await pages.rentals(l, viewer: v, error: error) }) { form, v, l, request, _ in
            let due = try Self.endOfDay(form["due"] ?? "", l)
            let reply = try await link.write(LendingAPI.Renew.self, .init(deviceId: form["device"] ?? "", dueAt: due, actor: v.user))
            await admin.notify(request, Self.lentNotice("notice.renewed", reply.rental, l))
            return "/rentals"
        }
        admin.change(router, "/users/new", localizer: localizer,
                     page: { l, v, error, _, _ in try await pages.users(Query(nil), l, viewer: v, error: error) }) { form, _, l, request, _ in
            let id = form["id"] ?? ""
            _ = try await link.write(InventoryAPI.AddUser.self, .init(id: id, name: form["name"] ?? ""))
            await admin.notify(request, l.t("notice.userAdded", ["user": form["name"] ?? id, "id": id]))
            return "/users/\(HTML.urlComponent(id))"
        }
        admin.change(router, "/users/:id/badge", localizer: localizer,
                     page: { l, v, error, _, context in try await pages.user(Self.id(context), l, viewer: v, error: error) }) { form, _, l, request, context in
            let id = Self.id(context)
            _ = try await link.write(InventoryAPI.AddBadge.self,
                                    .init(identifier: form["uid"] ?? "", kind: form["kind"] == "felica" ? .felica : .iso14443a, userId: id))
            await admin.notify(request, l.t("notice.badgeBound", ["uid": form["uid"] ?? "", "id": id]))
            return "/users/\(HTML.urlComponent(id))"
        }
        router.get("/users/:id") { request, context in
            let v = await admin.viewer(request)
            return await WebServer.page(localizer(request), request) { try await pages.user(Self.id(context), $0, viewer: v) }
        }
    }

    /// The end of a due day (YYYY-MM-DD) in the kiosk's time zone, on the wire: due on that day,
    /// overdue after it.
    static func endOfDay(_ day: String, _ l: Localizer) throws(PageError) -> Date {
        guard let end = KioskDay(day)?.end(in: l.timeZone) else { throw .badDate(day) }
        return end
    }

    static func id(_ context: WebRequestContext) -> String {
        (context.parameters.get("id") ?? "").removingPercentEncoding ?? ""
    }
}

extension AdminRoutes {
    /// A POST that changes something. Refused without a signed-in admin (401) or without the
    /// session's CSRF token (403). `perform` sends it to the daemon and returns where to go next
    /// (303); when the daemon refuses it, `page` is shown again with the daemon's message (400;
    /// if that page cannot be shown either, e.g. an unknown user, the error page says why).
    func change(_ router: Router<WebRequestContext>, _ path: RouterPath, localizer: @escaping @Sendable (Request) -> Localizer,
                page: @escaping @Sendable (Localizer, Viewer, String, Request, WebRequestContext) async throws -> String,
                confirm: (@Sendable (Query, Localizer) -> (question: String, button: String, cancel: String))? = nil,
                perform: @escaping @Sendable (Query, Viewer, Localizer, Request, WebRequestContext) async throws -> String) {
        router.post(path) { request, context -> Response in
            let l = localizer(request)
            let form = try await Self.form(request, context)
            let v = await viewer(request)
            if let refusal = check(v, form, l) { return refusal }
            if let confirm, form["confirmed"] != "yes" {
                let (question, button, cancel) = confirm(form, l)
                return WebServer.html(.ok, Self.confirmation(l, viewer: v, action: request.uri.path, form: form,
                                                             question: question, button: button, cancel: cancel))
            }
            do {
                let next = try await perform(form, v, l, request, context)
                logger.notice("admin \(v.user ?? "?") posted \(request.uri.path)")
                return Response(status: .seeOther, headers: [.location: next])
            } catch let error as VarlinkError {
                return await WebServer.page(l, request, status: .badRequest) { try await page($0, v, Self.message(error, l), request, context) }
            } catch VarlinkClientError.outcomeUnknown {
                // Sent, and no answer: say so on the same page, which shows what the daemon now has.
                logger.notice("admin \(v.user ?? "?") posted \(request.uri.path): no answer from roombridged; outcome unknown")
                return await WebServer.page(l, request, status: .serviceUnavailable) {
                    try await page($0, v, $0.t("error.outcomeUnknown"), request, context)
                }
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
    }
}
