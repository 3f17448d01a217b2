import Foundation
import Lending
import struct RoomBridgeCore.Timeline

/// The dashboard page (`/dashboard`), as pure functions of what the daemon answered
/// (`io.roombridge.Lending.GetDashboard`): charts drawn here as SVG (no script, nothing to ship),
/// each with a title and a sentence for screen readers (`role="img"`, `<title>`, `<desc>`) and the
/// same figures as a table beside it. Every bar is a `rect` of class `bar` and its series.
enum DashboardViews {
    static let width = 640.0

    static func page(_ l: Localizer, _ d: LendingDashboard, today timeline: Timeline) -> String {
        var body = today(l, timeline)
        body += "<p id=\"period\">" + HTML.escape(l.t("dashboard.period", ["from": l.dateTime(d.from), "zone": d.timeZone,
                                                                                 "days": l.number(d.days.count)])) + "</p>"
        body += now(l, d.groups)
        body += days(l, d)
        body += busiest(l, d.topDevices)
        body += neverLent(l, d)
        return body
    }

    // MARK: Today: the curtains and the room

    /// Today on one time axis, midnight to midnight: a row per curtain with its position (a step line, 0 % at
    /// the row's foot, 100 % at its head), and a row per presence region with a bar (`rect.bar.stay`) per stay.
    /// The hours before ``Timeline/from`` (the daemon started then) are shaded: nothing was recorded.
    static func today(_ l: Localizer, _ t: Timeline) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = l.timeZone
        let start = calendar.startOfDay(for: t.until)
        let end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
        let left = 150.0, right = 24.0, plot = width - left - right, curtainRow = 64.0, stayRow = 26.0, axis = 22.0
        func x(_ date: Date) -> Double {
            left + plot * min(1, max(0, date.timeIntervalSince(start) / end.timeIntervalSince(start)))
        }
        let heads = l.language == .ja ? "" : " "
        var sentences: [String] = []
        var svg = ""
        if t.from > start {
            svg += "<rect class=\"unrecorded\" x=\"\(f(left))\" y=\"0\" width=\"\(f(x(t.from) - left))\" "
                + "height=\"\(f(Double(t.curtains.count) * curtainRow + Double(t.presence.count) * stayRow))\">"
                + "<title>\(HTML.escape(l.t("dashboard.unrecorded", ["time": l.time(t.from)])))</title></rect>"
            sentences.append(l.t("dashboard.unrecorded", ["time": l.time(t.from)]))
        }
        var y = 0.0
        var moves: [(curtain: String, at: Date, position: Int?)] = []
        for track in t.curtains {
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y + curtainRow / 2 + 4))\" text-anchor=\"end\">\(HTML.escape(track.id))</text>"
                + "<line class=\"axis\" x1=\"\(f(left))\" y1=\"\(f(y + curtainRow - 6))\" x2=\"\(f(width - right))\" y2=\"\(f(y + curtainRow - 6))\"/>"
            func py(_ position: Int) -> Double { y + 6 + (curtainRow - 12) * (1 - Double(position) / 100) }
            var d = ""
            for (i, p) in track.points.enumerated() {
                let next = i + 1 < track.points.count ? track.points[i + 1].at : t.until
                guard let position = p.position else { continue }
                d += (d.isEmpty || track.points[max(0, i - 1)].position == nil ? "M" : "L") + "\(f(x(p.at))) \(f(py(position)))"
                d += " H\(f(x(next))) "
                // A rest: where the curtain stayed at least a minute (or stays now), as the table lists it.
                if next.timeIntervalSince(p.at) >= 60 || i == track.points.count - 1 { moves.append((track.id, p.at, position)) }
            }
            if !d.isEmpty {
                svg += "<path class=\"position\" data-curtain=\"\(HTML.escape(track.id))\" d=\"\(d.trimmingCharacters(in: .whitespaces))\">"
                    + "<title>\(HTML.escape(track.id))</title></path>"
            }
            let now = track.points.last?.position
            sentences.append(now.map { l.t("dashboard.curtainNow", ["curtain": track.id, "position": l.number($0),
                                                                     "moves": l.number(max(0, track.points.count - 1))]) }
                             ?? l.t("dashboard.curtainUnknown", ["curtain": track.id]))
            y += curtainRow
        }
        var stays: [(label: String, stay: Timeline.Stay)] = []
        for track in t.presence {
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y + 17))\" text-anchor=\"end\">\(HTML.escape(track.label))</text>"
            var seconds = 0.0
            for stay in track.stays {
                let until = stay.until ?? t.until
                seconds += until.timeIntervalSince(stay.from)
                svg += "<rect class=\"bar stay\" data-region=\"\(HTML.escape(track.region))\" x=\"\(f(x(stay.from)))\" y=\"\(f(y + 4))\" "
                    + "width=\"\(f(max(1, x(until) - x(stay.from))))\" height=\"18\"><title>\(HTML.escape(track.label)): "
                    + "\(HTML.escape(l.time(stay.from)))–\(HTML.escape(stay.until.map(l.time) ?? l.t("dashboard.stillHere")))</title></rect>"
                stays.append((track.label, stay))
            }
            sentences.append(l.t("dashboard.presenceToday", ["who": track.label, "stays": l.number(track.stays.count),
                                                              "length": duration(Int(seconds), l)]))
            y += stayRow
        }
        if t.presence.isEmpty { sentences.append(l.t("dashboard.nobodySeen")) }
        // The hours, every three.
        for hour in stride(from: 0, through: 24, by: 3) {
            let at = calendar.date(byAdding: .hour, value: hour, to: start) ?? start
            svg += "<line class=\"tick\" x1=\"\(f(x(at)))\" y1=\"0\" x2=\"\(f(x(at)))\" y2=\"\(f(y + 4))\"/>"
                + "<text x=\"\(f(x(at)))\" y=\"\(f(y + 16))\" text-anchor=\"middle\">\(String(format: "%02d:00", hour))</text>"
        }
        svg += "<line class=\"now\" x1=\"\(f(x(t.until)))\" y1=\"0\" x2=\"\(f(x(t.until)))\" y2=\"\(f(y + 4))\"/>"
        let table = HTML.table([l.t("dashboard.curtain"), l.t("dashboard.since"), l.t("dashboard.position")],
                               moves.map { m in (cells: [HTML.escape(m.curtain), HTML.escape(l.time(m.at)),
                                                         m.position.map { "\(l.number($0))%" } ?? "—"], attributes: "") },
                               id: "today-curtain-table")
            + HTML.table([l.t("dashboard.who"), l.t("dashboard.from"), l.t("dashboard.until")],
                         stays.map { s in (cells: [HTML.escape(s.label), HTML.escape(l.time(s.stay.from)),
                                                   HTML.escape(s.stay.until.map(l.time) ?? l.t("dashboard.stillHere"))], attributes: "") },
                         id: "today-presence-table")
        return section("today", l.t("dashboard.today"), summary: sentences.joined(separator: heads), svg: svg, height: y + axis,
                       legend: legend(l, ["position", "stay"], keys: ["dashboard.position", "dashboard.stay"]), table: table, l)
    }

    // MARK: Now, by group

    static func now(_ l: Localizer, _ groups: [LendingDashboard.GroupLoad]) -> String {
        let total = groups.reduce(into: (devices: 0, lent: 0, overdue: 0, available: 0, broken: 0)) {
            $0.devices += $1.devices; $0.lent += $1.lent; $0.overdue += $1.overdue; $0.available += $1.available; $0.broken += $1.broken
        }
        let summary = l.t("dashboard.nowSummary", ["devices": l.number(total.devices), "lent": l.number(total.lent),
                                                   "overdue": l.number(total.overdue), "available": l.number(total.available),
                                                   "broken": l.number(total.broken)])
        let series = ["lent", "overdue", "available", "broken"]
        let most = max(1, groups.map { $0.lent + $0.available + $0.broken }.max() ?? 1)
        let label = 150.0, row = 28.0, plot = width - label - 50
        var svg = ""
        for (i, g) in groups.enumerated() {
            let y = Double(i) * row + 4
            svg += "<text x=\"\(label - 8)\" y=\"\(y + 15)\" text-anchor=\"end\">\(HTML.escape(g.name))</text>"
            var x = label
            for (name, value) in zip(series, [g.lent - g.overdue, g.overdue, g.available, g.broken]) where value > 0 {
                let w = plot * Double(value) / Double(most)
                svg += "<rect class=\"bar \(name)\" data-group=\"\(HTML.escape(g.groupId))\" x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(w))\" height=\"20\">"
                    + "<title>\(HTML.escape(g.name)): \(HTML.escape(l.t("dashboard.\(name)"))) \(l.number(value))</title></rect>"
                x += w
            }
            svg += "<text x=\"\(f(x + 6))\" y=\"\(y + 15)\">\(l.number(g.lent + g.available + g.broken))</text>"
        }
        let height = max(row, Double(groups.count) * row + 8)
        let table = HTML.table(["dashboard.group", "dashboard.devices", "dashboard.lent", "dashboard.overdue", "dashboard.available",
                                "dashboard.broken"].map { l.t($0) },
                               groups.map { g in (cells: [HTML.escape(g.name), l.number(g.devices), l.number(g.lent), l.number(g.overdue),
                                                          l.number(g.available), l.number(g.broken)], attributes: "") },
                               id: "now-table")
        return section("now", l.t("dashboard.now"), summary: summary, svg: svg, height: height,
                       legend: legend(l, series), table: table, l)
    }

    // MARK: The last days

    static func days(_ l: Localizer, _ d: LendingDashboard) -> String {
        let lends = d.days.reduce(0) { $0 + $1.lends }, overdue = d.days.reduce(0) { $0 + $1.overdue }
        var summary = l.t("dashboard.daysSummary", ["days": l.number(d.days.count), "lends": l.number(lends), "overdue": l.number(overdue)])
        let space = l.language == .ja ? "" : " "  // Japanese sentences follow each other without one
        if let busiest = d.days.max(by: { ($0.lends, $1.day) < ($1.lends, $0.day) }), busiest.lends > 0 {
            summary += space + l.t("dashboard.busiestDay", ["day": dayName(busiest.day, l), "lends": l.number(busiest.lends)])
        }
        summary += space + (d.medianRentalSeconds.map { l.t("dashboard.median", ["length": duration($0, l)]) } ?? l.t("dashboard.noMedian"))
        let most = max(1, d.days.map { max($0.lends, $0.overdue) }.max() ?? 1)
        let plotHeight = 160.0, left = 30.0, slot = (width - left - 10) / Double(max(1, d.days.count)), bar = max(1, slot * 0.4)
        var svg = "<text x=\"\(f(left - 6))\" y=\"14\" text-anchor=\"end\">\(l.number(most))</text>"
            + "<text x=\"\(f(left - 6))\" y=\"\(f(plotHeight + 10))\" text-anchor=\"end\">0</text>"
            + "<line class=\"axis\" x1=\"\(f(left))\" y1=\"\(f(plotHeight + 10))\" x2=\"\(f(width - 10))\" y2=\"\(f(plotHeight + 10))\"/>"
        for (i, day) in d.days.enumerated() {
            let x = left + Double(i) * slot + slot * 0.1
            for (offset, name, value) in [(0.0, "lends", day.lends), (bar, "overdue", day.overdue)] {
                let h = plotHeight * Double(value) / Double(most)
                svg += "<rect class=\"bar \(name)\" data-day=\"\(day.day)\" x=\"\(f(x + offset))\" y=\"\(f(plotHeight + 10 - h))\" "
                    + "width=\"\(f(bar))\" height=\"\(f(h))\"><title>\(HTML.escape(dayName(day.day, l))): "
                    + "\(HTML.escape(l.t(name == "lends" ? "dashboard.lends" : "dashboard.overdueDay"))) \(l.number(value))</title></rect>"
            }
            if i == 0 || i == d.days.count - 1 || d.days.count <= 7 {
                svg += "<text x=\"\(f(x + bar))\" y=\"\(f(plotHeight + 26))\" text-anchor=\"middle\">\(HTML.escape(shortDay(day.day, l)))</text>"
            }
        }
        let table = HTML.table([l.t("dashboard.day"), l.t("dashboard.lends"), l.t("dashboard.overdueDay")],
                               d.days.map { (cells: [HTML.escape(dayName($0.day, l)), l.number($0.lends), l.number($0.overdue)], attributes: "") },
                               id: "days-table")
        return section("days", l.t("dashboard.days", ["days": l.number(d.days.count)]), summary: summary, svg: svg,
                       height: plotHeight + 32, legend: legend(l, ["lends", "overdue"], keys: ["dashboard.lends", "dashboard.overdueDay"]),
                       table: table, l)
    }

    // MARK: Busiest and never lent

    static func busiest(_ l: Localizer, _ top: [MonthlyLendingReport.DeviceCount]) -> String {
        guard let first = top.first else {
            return "<section id=\"busiest\"><h2>\(HTML.escape(l.t("dashboard.busiest")))</h2>"
                + "<p class=\"empty\">\(HTML.escape(l.t("dashboard.noLends")))</p></section>"
        }
        let summary = l.t("dashboard.busiestSummary", ["device": "\(first.deviceId) (\(first.model))", "lends": l.number(first.lends)])
        let label = 220.0, row = 24.0, plot = width - label - 40
        var svg = ""
        for (i, d) in top.enumerated() {
            let y = Double(i) * row + 2, w = plot * Double(d.lends) / Double(max(1, first.lends))
            svg += "<text x=\"\(label - 8)\" y=\"\(f(y + 14))\" text-anchor=\"end\">\(HTML.escape("\(d.deviceId) \(d.model)"))</text>"
                + "<rect class=\"bar busiest\" data-device=\"\(HTML.escape(d.deviceId))\" x=\"\(f(label))\" y=\"\(f(y))\" width=\"\(f(w))\" height=\"18\">"
                + "<title>\(HTML.escape(d.deviceId)): \(l.number(d.lends))</title></rect>"
                + "<text x=\"\(f(label + w + 6))\" y=\"\(f(y + 14))\">\(l.number(d.lends))</text>"
        }
        let table = HTML.table([l.t("device.id"), l.t("device.model"), l.t("dashboard.lendsCount")],
                               top.map { d in (cells: ["<a href=\"/devices/\(HTML.urlComponent(d.deviceId))\">\(HTML.escape(d.deviceId))</a>",
                                                       HTML.escape(d.model), l.number(d.lends)], attributes: "") },
                               id: "busiest-table")
        return section("busiest", l.t("dashboard.busiest"), summary: summary, svg: svg, height: Double(top.count) * row + 4,
                       legend: "", table: table, l)
    }

    static func neverLent(_ l: Localizer, _ d: LendingDashboard) -> String {
        var out = "<section id=\"never-lent\"><h2>\(HTML.escape(l.t("dashboard.neverLent", ["count": l.number(d.neverLentCount)])))</h2>"
        guard !d.neverLent.isEmpty else { return out + "<p class=\"empty\">\(HTML.escape(l.t("dashboard.noneIdle")))</p></section>" }
        out += "<p>\(HTML.escape(l.t("dashboard.neverLentHint", ["listed": l.number(d.neverLent.count)])))</p>"
        out += HTML.table([l.t("device.id"), l.t("device.model"), l.t("dashboard.registered")],
                          d.neverLent.map { x in (cells: ["<a href=\"/devices/\(HTML.urlComponent(x.deviceId))\">\(HTML.escape(x.deviceId))</a>",
                                                          HTML.escape(x.model), HTML.escape(l.dateTime(x.registeredAt))], attributes: "") },
                          id: "never-lent-table")
        return out + "</section>"
    }

    // MARK: Pieces

    /// A chart's section: its heading, the SVG (`role="img"`, titled and described by the
    /// summary), a legend, and the table of the same figures.
    static func section(_ id: String, _ title: String, summary: String, svg: String, height: Double, legend: String, table: String,
                        _ l: Localizer) -> String {
        "<section id=\"\(id)\"><h2 id=\"\(id)-title\">\(HTML.escape(title))</h2>"
            + "<p id=\"\(id)-desc\" class=\"summary\">\(HTML.escape(summary))</p>"
            + "<svg class=\"chart\" id=\"\(id)-chart\" role=\"img\" aria-labelledby=\"\(id)-title \(id)-desc\" "
            + "viewBox=\"0 0 \(f(width)) \(f(height))\" width=\"\(f(width))\" height=\"\(f(height))\" xmlns=\"http://www.w3.org/2000/svg\">"
            + "<title>\(HTML.escape(title))</title><desc>\(HTML.escape(summary))</desc>\(svg)</svg>"
            + legend
            + "<details class=\"fallback\"><summary>\(HTML.escape(l.t("dashboard.table")))</summary>\(table)</details></section>"
    }

    static func legend(_ l: Localizer, _ series: [String], keys: [String]? = nil) -> String {
        "<p class=\"legend\" aria-hidden=\"true\">" + zip(series, keys ?? series.map { "dashboard.\($0)" }).map { name, key in
            "<span class=\"key \(name)\"></span>\(HTML.escape(l.t(key)))"
        }.joined(separator: " ") + "</p>"
    }

    /// A rental's length in words: "2 days 3 h" / "2日3時間", or "5 h 10 min" under a day.
    static func duration(_ seconds: Int, _ l: Localizer) -> String {
        let minutes = seconds / 60, hours = minutes / 60, days = hours / 24
        return days > 0 ? l.t("dashboard.durationDays", ["days": l.number(days), "hours": l.number(hours % 24)])
            : l.t("dashboard.durationHours", ["hours": l.number(hours), "minutes": l.number(minutes % 60)])
    }

    /// `YYYY-MM-DD` with its weekday, as the pages write days ("Tue 1 Dec").
    static func dayName(_ day: String, _ l: Localizer) -> String {
        KioskDay(day).flatMap { $0.start(in: l.timeZone) }.map { l.day($0) } ?? day
    }

    static func shortDay(_ day: String, _ l: Localizer) -> String {
        guard let d = KioskDay(day) else { return day }
        return l.language == .ja ? "\(d.month)/\(d.day)" : "\(d.day)/\(d.month)"
    }

    static func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
