import Foundation
import CurtainProtocol
import Hummingbird
import Logging
import RoomBridgeAPI
import struct RoomBridgeCore.CurtainState
import struct RoomBridgeCore.CurtainOutcome
import Varlink

/// The curtain page: one panel per curtain with its position (animated as it moves), motion
/// buttons, the wall-switch lockout, the connection with a reconnect button, and the schedule.
/// Everything is read from and sent to roombridged (`io.roombridge.State`, `io.roombridge.Curtain`);
/// the page's script follows `/events`. Commands need a signed-in admin, like every change.
struct CurtainPage: Sendable {
    let link: DaemonLink

    /// The panels' DOM keys and curtains: one curtain keeps the key `curtain` (ids `curtain-open`, …), several
    /// are `curtain-NAME` (`curtain-left-open`, …); none configured is one disabled panel.
    func curtains() async throws -> [(key: String, curtain: CurtainState)] {
        let state = try await link.read(StateAPI.GetState.self, .init()).state
        let all = state.allCurtains
        guard all.count > 1 else { return [(key: "curtain", curtain: all.first ?? state.curtain)] }
        return all.map { (key: "curtain-" + ($0.id ?? ""), curtain: $0) }
    }

    func render(_ l: Localizer, viewer: Viewer, error: String? = nil) async throws -> String {
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        let panels = try await curtains()
        if panels.count > 1 {
            let groups = try await link.read(CurtainAPI.GetState.self, .init()).groups
            body += Self.groupPanel(groups.map { ($0.name, $0.curtains) }, l, viewer: viewer)
        }
        for (key, curtain) in panels {
            body += Self.panel(key: key, curtain, l, viewer: viewer, named: panels.count > 1)
        }
        body += "<script src=\"\(Assets.curtain.path)\"></script>"
        return HTML.page(l, title: l.t("curtainPage.title"), active: "curtain", viewer: viewer, body: body)
    }

    /// One curtain's panel. Element ids start with `key`; the script finds panels by class and each curtain's by
    /// `data-curtain` (its id). `named`: one of several, headed by its name in the configuration. Every form carries
    /// the curtain's id (`curtain`), which the commands pass on as `name`.
    static func panel(key: String, _ c: CurtainState, _ l: Localizer, viewer: Viewer, named: Bool = false) -> String {
        guard let live = CurtainView.live(c, l) else {
            return "<p class=\"empty\" id=\"\(key)-none\">\(HTML.escape(l.t("curtainPage.conn.disabled")))</p>"
        }
        let admin = viewer.user != nil
        func t(_ key: String) -> String { HTML.escape(l.t(key)) }
        let field = Self.target(c)
        func button(_ action: String, _ label: String, motion: Bool) -> String {
            let disabled = !admin || (motion && !live.usable) ? " disabled" : ""
            let kind = motion ? " data-motion=\"1\"" : ""
            return "<form method=\"post\" action=\"/curtain/\(action)\" class=\"inline\">\(viewer.csrfField)\(field)"
                + "<button type=\"submit\" id=\"\(key)-\(action)\"\(kind)\(disabled)>\(t(label))</button></form>"
        }
        var out = """
            <section class="curtain-panel" id="\(key)" data-curtain="\(HTML.escape(c.id ?? ""))" data-admin="\(admin ? 1 : 0)" data-position="\(c.position.map(String.init) ?? "")"
             data-target="\(c.target.map(String.init) ?? "")" data-motion="\(c.motion.description)"
             data-offline-text="\(t("curtainPage.offline"))">
            <h2>\(heading(c, l, named: named))</h2>
            <p>\(t("curtainPage.connection")): <strong class="curtain-status" id="\(key)-status">\(HTML.escape(live.status))</strong>
            """
        out += button("reconnect", "curtainPage.reconnect", motion: false) + "</p>"
        out += """
            <div class="curtain-track" aria-hidden="true"><div class="curtain-fill"></div><div class="curtain-target"></div></div>
            <p>\(t("curtainPage.position")): <span class="curtain-position" id="\(key)-position" aria-live="polite">\(HTML.escape(live.positionText))</span></p>
            <p class="lockout" id="\(key)-lockout"\(live.lockedOut ? "" : " hidden")>\(t("curtainPage.lockout"))</p>
            <p class="curtain-error" id="\(key)-error"\(live.lastError == nil ? " hidden" : "")>\(HTML.escape(live.lastError ?? ""))</p>
            <div class="curtain-buttons">
            """
        out += button("open", "curtainPage.open", motion: true) + button("close", "curtainPage.close", motion: true)
            + button("stop", "curtainPage.stop", motion: true)
        out += "<form method=\"post\" action=\"/curtain/move\" class=\"inline\">\(viewer.csrfField)\(field)"
            + "<label>\(t("curtainPage.move")) <input type=\"number\" name=\"position\" id=\"\(key)-move-position\" min=\"0\" max=\"100\" value=\"\(c.position ?? 50)\" required> \(t("curtainPage.percent"))</label> "
            + "<button type=\"submit\" id=\"\(key)-move\" data-motion=\"1\"\(!admin || !live.usable ? " disabled" : "")>\(t("curtainPage.moveButton"))</button></form>"
        out += "</div>"
        if !admin {
            out += "<p class=\"empty\"><a href=\"/login?next=/curtain\">\(t("curtainPage.signIn"))</a></p>"
        }
        out += schedule(key: key, c, l, viewer: viewer)
        return out + "</section>"
    }

    /// With several curtains: open, close and stop for each group of the configuration and for all of them
    /// (`group-NAME-open`, `group-all-open`, …); each form names the group as its curtain.
    static func groupPanel(_ groups: [(name: String, curtains: [String])], _ l: Localizer, viewer: Viewer) -> String {
        let admin = viewer.user != nil
        func t(_ key: String) -> String { HTML.escape(l.t(key)) }
        var out = "<section class=\"curtain-groups\" id=\"curtain-groups\"><h2>\(t("curtainPage.groups"))</h2>"
        for (name, members) in groups + [(name: "all", curtains: [])] {
            let label = name == "all" ? t("curtainPage.allCurtains")
                : HTML.escape(name) + " <small>" + HTML.escape(members.joined(separator: ", ")) + "</small>"
            out += "<div class=\"curtain-group\" id=\"group-\(HTML.escape(name))\"><strong>\(label)</strong> "
            for action in ["open", "close", "stop"] {
                out += "<form method=\"post\" action=\"/curtain/\(action)\" class=\"inline\">\(viewer.csrfField)"
                    + "<input type=\"hidden\" name=\"curtain\" value=\"\(HTML.escape(name))\">"
                    + "<button type=\"submit\" id=\"group-\(HTML.escape(name))-\(action)\"\(admin ? "" : " disabled")>"
                    + "\(t("curtainPage.\(action)"))</button></form>"
            }
            out += "</div>"
        }
        return out + "</section>"
    }

    /// The hidden field naming the curtain a form is for.
    static func target(_ c: CurtainState) -> String {
        c.id.map { "<input type=\"hidden\" name=\"curtain\" value=\"\(HTML.escape($0))\">" } ?? ""
    }

    /// The panel's heading: the device's name (or address); one of several by its configured name first.
    static func heading(_ c: CurtainState, _ l: Localizer, named: Bool) -> String {
        let device = HTML.escape(c.name ?? c.address ?? l.t("curtainPage.title"))
        guard named, let id = c.id else { return device }
        return HTML.escape(id) + " <small>" + device + "</small>"
    }

    /// The schedule: a table for everyone, a form with enable toggles for admins.
    static func schedule(key: String, _ c: CurtainState, _ l: Localizer, viewer: Viewer) -> String {
        func t(_ key: String) -> String { HTML.escape(l.t(key)) }
        func entry(_ e: CurtainSchedule.Entry?) -> String {
            guard let e else { return t("curtainPage.noSchedule") }
            return HTML.escape(e.time.description) + " (" + t(e.enabled ? "curtainPage.on" : "curtainPage.off") + ")"
        }
        var out = "<h3>\(t("curtainPage.schedule"))</h3>"
        guard viewer.user != nil else {
            return out + HTML.table([l.t("curtainPage.scheduleOpen"), l.t("curtainPage.scheduleClose")],
                                    [(cells: [entry(c.openSchedule), entry(c.closeSchedule)], attributes: "")], id: "\(key)-schedule")
        }
        func row(_ name: String, _ label: String, _ e: CurtainSchedule.Entry?) -> String {
            // `KEY-schedule-…`: the motion buttons already have `KEY-open` and `KEY-close`.
            "<div class=\"schedule-row\"><label>\(t(label)) <input type=\"time\" name=\"\(name)\" id=\"\(key)-schedule-\(name)\" value=\"\(HTML.escape(e?.time.description ?? ""))\" required></label> "
                + "<label><input type=\"checkbox\" name=\"\(name)Enabled\" id=\"\(key)-schedule-\(name)Enabled\" value=\"true\"\(e?.enabled == true ? " checked" : "")> \(t("curtainPage.on"))</label></div>"
        }
        out += "<form method=\"post\" action=\"/curtain/schedule\" class=\"form\" id=\"\(key)-schedule\">" + viewer.csrfField + target(c)
            + row("open", "curtainPage.scheduleOpen", c.openSchedule) + row("close", "curtainPage.scheduleClose", c.closeSchedule)
            + "<button type=\"submit\" id=\"\(key)-schedule-save\">\(t("curtainPage.scheduleSave"))</button></form>"
        return out
    }

    struct MoveTo: Encodable, Sendable { var position: Int; var name: String?; var actor: String? }
    struct Schedule: Encodable, Sendable {
        var open: String; var close: String; var openEnabled: Bool; var closeEnabled: Bool; var name: String?
        var actor: String?
    }
    /// `actor`: the signed-in admin, recorded as who asked (the daemon trusts it from roombridge-web only).
    struct Named: Encodable, Sendable { var name: String?; var actor: String? }
    typealias Outcomes = CurtainAPI.Outcomes

    /// Sends one command of the page's forms to `io.roombridge.Curtain`, for the curtain (or group) the form names;
    /// a group's command returns each curtain's outcome.
    func command(_ action: String, _ form: Query, actor: String?) async throws -> [CurtainOutcome] {
        let method = "io.roombridge.Curtain."
        let name = form["curtain"].flatMap { $0.isEmpty ? nil : $0 }
        let reply: Outcomes
        switch action {
        case "open": reply = try await link.command(method + "Open", Named(name: name, actor: actor), returning: Outcomes.self)
        case "close": reply = try await link.command(method + "Close", Named(name: name, actor: actor), returning: Outcomes.self)
        case "stop": reply = try await link.command(method + "Stop", Named(name: name, actor: actor), returning: Outcomes.self)
        case "reconnect":
            reply = try await link.command(method + "Reconnect", Named(name: name, actor: actor), returning: Outcomes.self)
        case "move":
            // An out-of-range or missing number goes to the daemon as -1, which refuses it with its own message.
            reply = try await link.command(method + "MoveTo", MoveTo(position: form["position"].flatMap { Int($0) } ?? -1,
                                                                     name: name, actor: actor),
                                           returning: Outcomes.self)
        case "schedule":
            reply = try await link.command(method + "SetSchedule", Schedule(open: form["open"] ?? "", close: form["close"] ?? "",
                                                                         openEnabled: form["openEnabled"] == "true",
                                                                         closeEnabled: form["closeEnabled"] == "true", name: name,
                                                                         actor: actor),
                                           returning: Outcomes.self)
        default:
            throw PageError.unknownAction(action)
        }
        return reply.outcomes ?? []
    }

    /// The curtains of a group command that did not take it, with why, in the reader's language where the reason
    /// is one of the curtain's errors; nil when every one took it.
    static func refusals(_ outcomes: [CurtainOutcome], _ l: Localizer) -> String? {
        let refused = outcomes.filter { $0.outcome != .moving && $0.outcome != .done }
        guard !refused.isEmpty else { return nil }
        return l.t("curtainPage.groupRefused") + " " + refused.map { o in
            // The refusal as the curtain's own error would read on this page.
            let text = o.error.map { message(VarlinkError($0, parameters: ["message": .string(o.message ?? "")]), l) }
            return "\(o.curtain): \(text ?? o.message ?? o.outcome.rawValue)"
        }.joined(separator: "; ")
    }

    /// A refused command in the reader's language: the curtain's own errors from the catalogue,
    /// others as the daemon said them.
    static func message(_ error: VarlinkError, _ l: Localizer) -> String {
        let name = error.name.split(separator: ".").last.map(String.init) ?? error.name
        return l.has("curtainPage.error.\(name)") ? l.t("curtainPage.error.\(name)") : AdminRoutes.message(error, l)
    }

    static let actions: Set<String> = ["open", "close", "stop", "move", "reconnect", "schedule"]

    /// GET /curtain and the POSTs of its forms.
    func add(to router: Router<WebRequestContext>, admin: AdminRoutes, localizer: @escaping @Sendable (Request) -> Localizer) {
        let logger = Logger(label: "roombridge-web.curtain")
        router.get("/curtain") { request, _ in
            let v = await admin.viewer(request)
            return await WebServer.page(localizer(request), request) { try await render($0, viewer: v) }
        }
        router.post("/curtain/:action") { request, context -> Response in
            let l = localizer(request)
            let form = try await AdminRoutes.form(request, context)
            let v = await admin.viewer(request)
            if let refusal = admin.check(v, form, l) { return refusal }
            let action = context.parameters.get("action") ?? ""
            guard Self.actions.contains(action) else { return WebServer.errorPage(PageError.unknownAction(action), l, path: request.uri.path) }
            do {
                let outcomes = try await command(action, form, actor: v.user)
                logger.notice("admin \(v.user ?? "?") sent curtain \(action)")
                if let refused = Self.refusals(outcomes, l) {
                    return await WebServer.page(l, request, status: .conflict) {
                        try await render($0, viewer: v, error: refused)
                    }
                }
                return Response(status: .seeOther, headers: [.location: "/curtain"])
            } catch let error as VarlinkError {
                return await WebServer.page(l, request, status: .conflict) {
                    try await render($0, viewer: v, error: Self.message(error, l))
                }
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
    }
}
