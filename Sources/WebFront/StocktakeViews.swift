import Foundation
import Lending

/// The stocktake pages, as pure functions of what the daemon answered: the list with the form that
/// starts one and the Close button, and a stocktake's report (its four lists), which prints as a
/// document of its own (the stylesheet's `@media print`). Times are the kiosk's (the ``Localizer``'s).
enum StocktakeViews {
    /// The scope in words: "All devices", "Group Android phones", "Location front desk".
    static func scope(_ scope: StocktakeScope, groups: [String: String], _ l: Localizer) -> String {
        switch scope {
        case .all: l.t("stocktake.scope.all")
        case .group(let id): l.t("stocktake.scope.groupNamed", ["group": groups[id] ?? id])
        case .location(let name): l.t("stocktake.scope.locationNamed", ["location": name])
        }
    }

    static func title(_ id: StocktakeID, _ l: Localizer) -> String {
        l.t("stocktake.title", ["id": String(id)])
    }

    /// The CSV download's file name.
    static func fileName(_ id: StocktakeID) -> String { "roombridge-stocktake-\(id).csv" }

    /// The scope the start form asks for (`scope` all, group or location, with `group` or `location`),
    /// or the catalogue key of the sentence saying what is missing.
    static func scope(from form: Query) -> Result<StocktakeScope, ScopeMissing> {
        switch form["scope"] ?? "all" {
        case "all": return .success(.all)
        case "group":
            guard let g = form["group"]?.trimmingCharacters(in: .whitespaces), !g.isEmpty else { return .failure(.init(key: "stocktake.needGroup")) }
            return .success(.group(g))
        case "location":
            guard let name = form["location"]?.trimmingCharacters(in: .whitespaces), !name.isEmpty else {
                return .failure(.init(key: "stocktake.needLocation"))
            }
            return .success(.location(name))
        default: return .failure(.init(key: "stocktake.needScope"))
        }
    }

    struct ScopeMissing: Error, Equatable { var key: String }

    // MARK: The list

    /// `/stocktakes`: newest first; for a signed-in admin the open one's Close button, else the start form.
    static func list(_ l: Localizer, viewer: Viewer, stocktakes: [Stocktake], groups: [DeviceGroup], values: Query = Query(nil),
                     error: String? = nil) -> String {
        let names = Dictionary(groups.map { ($0.id, $0.name) }) { a, _ in a }
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        let open = stocktakes.first { $0.isOpen }
        if let open {
            body += "<p id=\"open-stocktake\">" + HTML.escape(l.t("stocktake.openNow", [
                "id": String(open.id), "scope": scope(open.scope, groups: names, l), "counted": l.number(open.counted)])) + "</p>"
            if viewer.user != nil { body += closeForm(open.id, l, viewer: viewer) }
        } else if viewer.user != nil {
            body += startForm(l, viewer: viewer, groups: groups, values: values)
        } else {
            body += "<p id=\"none-open\">\(HTML.escape(l.t("stocktake.noneOpen")))</p>"
        }
        guard !stocktakes.isEmpty else {
            return body + "<p class=\"empty\" id=\"no-stocktakes\">\(HTML.escape(l.t("stocktake.none")))</p>"
        }
        let rows = stocktakes.map { s -> (cells: [String], attributes: String) in
            let link = "<a href=\"/stocktakes/\(s.id)\" id=\"stocktake-\(s.id)\">\(HTML.escape(title(s.id, l)))</a>"
            let closed = s.closedAt.map { HTML.escape(l.dateTime($0)) } ?? "<strong>\(HTML.escape(l.t("stocktake.open")))</strong>"
            return ([link, HTML.escape(scope(s.scope, groups: names, l)), HTML.escape(l.dateTime(s.startedAt)), closed,
                     HTML.escape(l.number(s.counted)), HTML.escape(l.number(s.unexpected))], " data-stocktake=\"\(s.id)\"")
        }
        return body + HTML.table([l.t("stocktake.number"), l.t("stocktake.scope"), l.t("stocktake.startedAt"), l.t("stocktake.closedAt"),
                                  l.t("stocktake.counted"), l.t("stocktake.unexpected")], rows, id: "stocktakes")
    }

    static func closeForm(_ id: StocktakeID, _ l: Localizer, viewer: Viewer) -> String {
        "<form method=\"post\" action=\"/stocktakes/\(id)/close\" class=\"inline\" id=\"close-form\">" + viewer.csrfField
            + "<button type=\"submit\" id=\"close-stocktake\">\(HTML.escape(l.t("stocktake.close")))</button></form>"
    }

    static func startForm(_ l: Localizer, viewer: Viewer, groups: [DeviceGroup], values: Query) -> String {
        let chosen = values["scope"] ?? "all"
        func radio(_ value: String) -> String {
            "<label><input type=\"radio\" name=\"scope\" value=\"\(value)\" id=\"scope-\(value)\"\(chosen == value ? " checked" : "")> "
                + HTML.escape(l.t("stocktake.scope.\(value)")) + "</label>"
        }
        let groupOptions = [("", l.t("stocktake.chooseGroup"))] + groups.map { ($0.id, $0.name) }
        return "<form method=\"post\" action=\"/stocktakes/start\" class=\"filters\" id=\"start-form\">" + viewer.csrfField
            + "<strong>\(HTML.escape(l.t("stocktake.scope")))</strong> " + radio("all") + " " + radio("group") + " "
            + HTML.select("group", groupOptions, selected: values["group"]) + " " + radio("location") + " "
            + "<input name=\"location\" id=\"location\" value=\"\(HTML.escape(values["location"] ?? ""))\" "
            + "placeholder=\"\(HTML.escape(l.t("stocktake.locationPlaceholder")))\" aria-label=\"\(HTML.escape(l.t("stocktake.scope.location")))\">"
            + "<button type=\"submit\" id=\"start-stocktake\">\(HTML.escape(l.t("stocktake.start")))</button></form>"
            + "<p class=\"no-print\">\(HTML.escape(l.t("stocktake.startHint")))</p>"
    }

    // MARK: The report

    /// `/stocktakes/ID`: what it counted, and once closed its four lists, a CSV download and a hint to print.
    static func report(_ l: Localizer, viewer: Viewer, report: StocktakeReport, groups: [DeviceGroup], error: String? = nil) -> String {
        let s = report.stocktake
        let names = Dictionary(groups.map { ($0.id, $0.name) }) { a, _ in a }
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        func by(_ time: Date, _ who: String?) -> String {
            guard let who, !who.isEmpty else { return l.dateTime(time) }
            return l.t("stocktake.timeBy", ["time": l.dateTime(time), "actor": who])
        }
        var facts: [(String, String, String)] = [
            ("scope", l.t("stocktake.scope"), scope(s.scope, groups: names, l)),
            ("started", l.t("stocktake.startedAt"), by(s.startedAt, s.startedBy)),
            ("closed", l.t("stocktake.closedAt"), s.closedAt.map { by($0, s.closedBy) } ?? l.t("stocktake.open")),
            ("counted", l.t("stocktake.counted"), l.number(s.counted)),
            ("unexpected-count", l.t("stocktake.unexpected"), l.number(s.unexpected)),
        ]
        facts.append(("zone", l.t("stocktake.timeZone"), l.timeZone.identifier))
        body += "<dl class=\"facts\" id=\"stocktake-facts\">" + facts.map {
            "<dt>\(HTML.escape($0.1))</dt><dd id=\"fact-\($0.0)\">\(HTML.escape($0.2))</dd>"
        }.joined() + "</dl>"
        guard !s.isOpen else {
            body += "<p id=\"still-open\">\(HTML.escape(l.t("stocktake.stillOpen")))</p>"
            if viewer.user != nil { body += closeForm(s.id, l, viewer: viewer) }
            return body
        }
        body += "<p class=\"no-print\" id=\"downloads\"><a href=\"/stocktakes/\(s.id).csv\" id=\"csv\" download>"
            + HTML.escape(l.t("stocktake.csv")) + "</a> · <a href=\"/stocktakes/\(s.id).csv?bom=1\" id=\"csv-excel\" download>"
            + HTML.escape(l.t("stocktake.csvExcel")) + "</a> · " + HTML.escape(l.t("stocktake.printHint")) + "</p>"
        for list in StocktakeEntry.List.allCases { body += section(list, report.list(list), l) }
        return body
    }

    /// One of the four lists as a table (or a line saying it is empty), under its heading with the count.
    static func section(_ list: StocktakeEntry.List, _ entries: [StocktakeEntry], _ l: Localizer) -> String {
        let name = list.rawValue
        var out = "<section id=\"section-\(name)\"><h2>" + HTML.escape(l.t("stocktake.list.\(name)", ["count": l.number(entries.count)]))
            + "</h2>"
        guard !entries.isEmpty else {
            return out + "<p class=\"empty\" id=\"\(name)-empty\">\(HTML.escape(l.t("stocktake.list.empty.\(name)")))</p></section>"
        }
        let e = { (text: String?) in HTML.escape(text ?? "") }
        let time = { (date: Date?) in HTML.escape(date.map { l.dateTime($0) } ?? "") }
        let headers: [String]
        let rows: [(cells: [String], attributes: String)]
        switch list {
        case .found:
            headers = ["device.id", "device.model", "device.serial", "stocktake.tappedAt", "stocktake.location"].map { l.t($0) }
            rows = entries.map { ([e($0.deviceId), e($0.model), e($0.serialNumber), time($0.tappedAt), e($0.location)], attributes($0)) }
        case .missing:
            headers = ["device.id", "device.model", "device.serial"].map { l.t($0) }
            rows = entries.map { ([e($0.deviceId), e($0.model), e($0.serialNumber)], attributes($0)) }
        case .lent:
            headers = ["device.id", "device.model", "device.serial", "stocktake.lentTo"].map { l.t($0) }
            rows = entries.map { entry in
                let who = entry.userName.map { name in entry.userId.map { l.t("stocktake.user", ["name": name, "id": $0]) } ?? name }
                    ?? entry.userId ?? ""
                return ([e(entry.deviceId), e(entry.model), e(entry.serialNumber), HTML.escape(who)], attributes(entry))
            }
        case .unexpected:
            headers = ["stocktake.uid", "device.id", "device.model", "stocktake.tappedAt", "stocktake.location"].map { l.t($0) }
            rows = entries.map { ([e($0.uid?.hex), e($0.deviceId), e($0.model), time($0.tappedAt), e($0.location)], attributes($0)) }
        }
        out += HTML.table(headers, rows, id: name)
        return out + "</section>"
    }

    private static func attributes(_ entry: StocktakeEntry) -> String {
        (entry.deviceId.map { " data-device=\"\(HTML.escape($0))\"" } ?? "") + (entry.uid.map { " data-uid=\"\(HTML.escape($0.hex))\"" } ?? "")
    }
}
