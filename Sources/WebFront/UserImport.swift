import Foundation
import Hummingbird
import Logging
import Varlink

/// The admin's CSV import on the users page: a file of users, badges or devices, uploaded as
/// `multipart/form-data`, sent whole to `io.roombridge.Inventory.Import` with the signed-in admin
/// as actor, and its report shown: what was (or would be) added, updated and left unchanged, and
/// every bad line with its number.
struct UserImport: Sendable {
    let link: DaemonLink
    let pages: Pages
    let logger = Logger(label: "roombridge-web.admin")

    /// The largest upload read. The daemon's own limit (`socket.max_message_size`, 64 KiB by
    /// default) is usually lower; a file over either gets the same advice: split it.
    static let maxUpload = 4 << 20
    static let kinds = ["users", "badges", "devices"]

    struct Call: Encodable, Sendable {
        var kind: String
        var csv: String
        var dryRun: Bool
        var partial: Bool
        var actor: String?
    }

    struct Problem: Decodable, Sendable { var line: Int; var reason: String }
    struct Report: Decodable, Sendable {
        var added: [String]
        var updated: [String]
        var unchanged: [String]
        var problems: [Problem]
        var written: Bool
    }

    func add(to router: Router<WebRequestContext>, admin: AdminRoutes, localizer: @escaping @Sendable (Request) -> Localizer) {
        router.post("/users/import") { request, _ -> Response in
            let l = localizer(request)
            let v = await admin.viewer(request)
            guard v.user != nil else { return admin.refused(.unauthorized, l, l.t("admin.required")) }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: Self.maxUpload)
            } catch let error as HTTPResponseError where error.status == .contentTooLarge {  // NIOTooManyBytesError
                return await usersPage(l, request, v, status: .contentTooLarge, error: l.t("import.tooLarge", ["size": l.number(Self.maxUpload)]))
            }
            let bytes = Array(buffer: body)
            let form = MultipartForm.boundary(request.headers[.contentType]).flatMap { MultipartForm(bytes, boundary: $0) }
            // Not multipart (or not well framed): no token can be read from it.
            if let refusal = admin.check(v, form?.query ?? Query(nil), l) { return refusal }
            guard let form, let file = form.file("file") else {
                return await usersPage(l, request, v, status: .badRequest, error: l.t("import.noFile"))
            }
            guard let csv = String(validating: file.body, as: UTF8.self) else {
                return await usersPage(l, request, v, status: .badRequest, error: l.t("import.notUTF8"))
            }
            let kind = Self.kinds.contains(form["kind"] ?? "") ? form["kind"]! : "users"
            let call = Call(kind: kind, csv: csv, dryRun: form["dryRun"] != nil, partial: form["partial"] != nil, actor: v.user)
            do {
                let report = try await link.write("io.roombridge.Inventory.Import", call, returning: Report.self)
                logger.notice("admin \(v.user ?? "?") imported \(kind) from \(file.filename ?? "?"): \(report.added.count) added, \(report.updated.count) updated, \(report.problems.count) bad lines, written: \(report.written)")
                let refused = !report.written && !call.dryRun
                return WebServer.html(refused ? .badRequest : .ok, result(report, call, filename: file.filename ?? "", l, viewer: v))
            } catch let error as VarlinkError where error.closesConnection {
                return await usersPage(l, request, v, status: .contentTooLarge, error: l.t("import.tooLarge", ["size": l.number(file.body.count)]))
            } catch let error as VarlinkError {
                return await usersPage(l, request, v, status: .badRequest, error: AdminRoutes.message(error, l))
            } catch {
                return WebServer.errorPage(error, l, path: request.uri.path)
            }
        }
    }

    private func usersPage(_ l: Localizer, _ request: Request, _ v: Viewer, status: HTTPResponse.Status, error: String) async -> Response {
        await WebServer.page(l, request, status: status) { try await pages.users(Query(nil), $0, viewer: v, error: error) }
    }

    /// The upload form, for a signed-in admin on /users (and under a report, with its choices).
    static func form(_ l: Localizer, viewer: Viewer, kind: String = "users", dryRun: Bool = false, partial: Bool = false) -> String {
        func t(_ key: String) -> String { HTML.escape(l.t(key)) }
        return "<h2>\(t("import.title"))</h2>"
            + "<form method=\"post\" action=\"/users/import\" enctype=\"multipart/form-data\" class=\"filters\" id=\"import-form\">"
            + viewer.csrfField
            + "<label>\(t("import.kind")) " + HTML.select("kind", kinds.map { ($0, l.t("import.kind.\($0)")) }, selected: kind) + "</label>"
            + "<label>\(t("import.file")) <input type=\"file\" name=\"file\" id=\"import-file\" accept=\".csv,text/csv\" required></label>"
            + "<label><input type=\"checkbox\" name=\"dryRun\" id=\"import-dry-run\" value=\"on\"\(dryRun ? " checked" : "")> \(t("import.dryRun"))</label>"
            + "<label><input type=\"checkbox\" name=\"partial\" id=\"import-partial\" value=\"on\"\(partial ? " checked" : "")> \(t("import.partial"))</label>"
            + "<button type=\"submit\" id=\"import\">\(t("import.submit"))</button></form>"
    }

    /// The daemon's report: what changed (or would), and every bad line as "line N: reason".
    func result(_ report: Report, _ call: Call, filename: String, _ l: Localizer, viewer: Viewer) -> String {
        func t(_ key: String, _ arguments: [String: String] = [:]) -> String { HTML.escape(l.t(key, arguments)) }
        let outcome = report.written ? "written" : call.dryRun ? "dryRun" : "refused"
        var body = "<p class=\"\(outcome == "refused" ? "error" : "notice")\" id=\"import-outcome\">\(t("import.outcome.\(outcome)"))</p>"
        body += "<dl class=\"facts\"><dt>\(t("import.file"))</dt><dd id=\"import-filename\">\(HTML.escape(filename))</dd>"
            + "<dt>\(t("import.kind"))</dt><dd>\(t("import.kind.\(call.kind)"))</dd>"
        let verb = report.written ? "" : "would."
        for (key, ids) in [("added", report.added), ("updated", report.updated), ("unchanged", report.unchanged)] {
            let label = key == "unchanged" ? "import.unchanged" : "import.\(verb)\(key)"
            body += "<dt>\(t(label, ["count": l.number(ids.count)]))</dt><dd id=\"import-\(key)\">"
                + (ids.isEmpty ? t("common.none") : HTML.escape(ids.joined(separator: ", "))) + "</dd>"
        }
        body += "</dl><h2>\(t("import.problems", ["count": l.number(report.problems.count)]))</h2>"
        body += report.problems.isEmpty ? "<p class=\"empty\" id=\"import-no-problems\">\(t("import.noProblems"))</p>"
            : "<ul id=\"import-problems\">" + report.problems.map {
                "<li>\(t("import.problem", ["line": l.number($0.line), "reason": $0.reason]))</li>"
            }.joined() + "</ul>"
        body += Self.form(l, viewer: viewer, kind: call.kind, dryRun: call.dryRun, partial: call.partial)
        body += "<p><a href=\"/users\" id=\"back-to-users\">\(t("import.back"))</a></p>"
        return HTML.page(l, title: l.t("import.resultTitle"), active: "users", viewer: viewer, body: body)
    }
}

