import Foundation
import Hummingbird
import Lending
import Logging
import RoomBridgeAPI
import Varlink
import VarlinkNIO

/// Booking a device and cancelling a booking, through `io.roombridge.Lending.Book` and
/// `CancelBooking`. A signed-in admin books on anyone's behalf; a self-service account
/// (`hash-password --user ID`) books only for its own inventory user, and a form naming anyone
/// else is refused (403). The change is recorded as the account's (`actor`). Only an admin cancels.
struct BookingForms: Sendable {
    let link: DaemonLink
    let pages: Pages
    let logger = Logger(label: "roombridge-web.bookings")

    /// Suggestions for the form's user field: the first page of users, for an admin; none for a
    /// self-service account, whose field is fixed to its own user.
    func users(_ v: Viewer) async throws -> [(id: String, name: String)] {
        guard v.booker == nil else { return [] }
        return try await link.read(InventoryAPI.ListUsers.self, .init(limit: Pages.pageSize)).users.map { ($0.id, $0.name) }
    }

    /// The sentence a booking leaves on the next page.
    static func bookedNotice(_ b: Booking, _ l: Localizer) -> String {
        l.t("notice.booked", ["device": b.deviceId, "user": b.userName, "from": l.dateTime(b.startsAt), "until": l.dateTime(b.endsAt)])
    }

    func add(to router: Router<WebRequestContext>, admin: AdminRoutes, localizer: @escaping @Sendable (Request) -> Localizer) {
        router.get("/bookings/new") { request, _ -> Response in
            let l = localizer(request)
            let v = await admin.viewer(request)
            guard v.signedIn != nil else {
                let here = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
                return Response(status: .seeOther, headers: [.location: "/login?next=\(HTML.urlComponent(here))"])
            }
            return await WebServer.page(l, request) {
                BookingViews.form($0, viewer: v, users: try await users(v), values: Query(request.uri.query), error: nil)
            }
        }
        router.post("/bookings/new") { request, context -> Response in
            let l = localizer(request)
            let form = try await AdminRoutes.form(request, context)
            let v = await admin.viewer(request)
            if let refusal = admin.checkSignedIn(v, form, l) { return refusal }
            if let booker = v.booker, form["user"] != booker.userId {
                logger.notice("self-service account \(booker.name) tried to book for \(form["user"] ?? "nobody")")
                return admin.refused(.forbidden, l, l.t("booking.onlyYourself", ["user": booker.userId]))
            }
            /// The form again, as it was sent, with `error` above it.
            func again(_ status: HTTPResponse.Status, _ error: String) async -> Response {
                await WebServer.page(l, request, status: status) {
                    BookingViews.form($0, viewer: v, users: try await users(v), values: form, error: error)
                }
            }
            guard let starts = form["starts"].flatMap({ BookingViews.localTime($0, l.timeZone) }),
                  let ends = form["ends"].flatMap({ BookingViews.localTime($0, l.timeZone) }) else {
                return await again(.badRequest, l.t("booking.badTime"))
            }
            do {
                let booking = try await link.write(LendingAPI.Book.self, .init(deviceId: form["device"] ?? "", userId: form["user"] ?? "",
                                                                               startsAt: starts, endsAt: ends, actor: v.signedIn)).booking
                logger.notice("\(v.signedIn ?? "?") booked \(booking.deviceId) for \(booking.userId) (booking \(booking.id))")
                await admin.notify(request, Self.bookedNotice(booking, l))
                let week = BookingViews.text(BookingViews.day(of: booking.startsAt, l.timeZone))
                return Response(status: .seeOther, headers: [.location: "/devices/\(HTML.urlComponent(booking.deviceId))?week=\(week)"])
            } catch let error as VarlinkError {
                // Every refusal, an unknown device or user included, is said on the form, which keeps what was typed.
                return await again(.badRequest, Refusals.sentence(error, l))
            } catch VarlinkClientError.outcomeUnknown {
                logger.notice("\(v.signedIn ?? "?") booked: no answer from roombridged; outcome unknown")
                return await again(.serviceUnavailable, l.t("error.outcomeUnknown"))
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
        admin.change(router, "/users/:id/bookings/:booking/cancel", localizer: localizer,
                     page: { l, v, error, _, context in try await pages.user(DeskForms.id(context), l, viewer: v, error: error) }) { _, v, l, request, context in
            let user = DeskForms.id(context)
            guard let number = context.parameters.get("booking").flatMap({ BookingID($0) }) else {
                throw PageError.unknownAction(request.uri.path)
            }
            let b = try await link.write(LendingAPI.CancelBooking.self, .init(id: number, actor: v.user)).booking
            await admin.notify(request, l.t("notice.bookingCancelled", ["device": b.deviceId, "user": b.userName, "from": l.dateTime(b.startsAt)]))
            return "/users/\(HTML.urlComponent(user))"
        }
    }
}
