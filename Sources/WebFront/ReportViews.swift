import Foundation
import Lending

/// The monthly lending report page (`/reports/YYYY-MM`), as pure functions of what the daemon
/// answered: the summary, the most lent devices and who had what, with links to the months
/// around it. It prints as a document of its own (the stylesheet's `@media print`). Times are the
/// kiosk's (the ``Localizer``'s).
enum ReportViews {
    /// `month` if it is a month as the page's address has it (`YYYY-MM`, 01–12), else nil.
    static func month(_ text: String) -> String? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let y = Int(parts[0]), y >= 1, let m = Int(parts[1]), (1...12).contains(m) else { return nil }
        return text
    }

    /// The month `offset` months from `month` (a valid `YYYY-MM`).
    static func month(_ month: String, adding offset: Int) -> String {
        let parts = month.split(separator: "-")
        let index = Int(parts[0])! * 12 + Int(parts[1])! - 1 + offset
        return String(index / 12).leftPadded(to: 4) + "-" + String(index % 12 + 1).leftPadded(to: 2)
    }

    /// The month `date` falls in, in the kiosk's time zone.
    static func month(of date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month], from: date)
        return String(c.year!).leftPadded(to: 4) + "-" + String(c.month!).leftPadded(to: 2)
    }

    /// The month in words, "November 2026" / "2026年11月".
    static func monthName(_ month: String, _ l: Localizer) -> String {
        let parts = month.split(separator: "-")
        guard parts.count == 2, let y = Int(parts[0]), let m = Int(parts[1]) else { return month }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = l.timeZone
        guard let date = calendar.date(from: DateComponents(year: y, month: m, day: 15)) else { return month }
        let f = DateFormatter()
        f.locale = l.language.locale
        f.timeZone = l.timeZone
        f.setLocalizedDateFormatFromTemplate("yMMMM")
        return f.string(from: date)
    }

    /// The page's title: the month and the zone it is a month of.
    static func title(_ month: String, _ l: Localizer) -> String {
        l.t("report.title", ["month": monthName(month, l), "zone": l.timeZone.identifier])
    }

    /// The 400 page's sentence for a month that is not one.
    static func badMonth(_ text: String, _ l: Localizer) -> String {
        l.t("report.badMonth", ["value": text])
    }

    /// `/reports/YYYY-MM`: the months around it, the summary, the most lent devices and who had what.
    static func report(_ l: Localizer, report r: MonthlyLendingReport) -> String {
        let previous = month(r.month, adding: -1), next = month(r.month, adding: 1)
        var body = "<p class=\"no-print\" id=\"months\"><a href=\"/reports/\(previous)\" rel=\"prev\" id=\"previous-month\">"
            + HTML.escape(l.t("report.previous", ["month": monthName(previous, l)])) + "</a> · "
            + "<a href=\"/reports/\(next)\" rel=\"next\" id=\"next-month\">"
            + HTML.escape(l.t("report.next", ["month": monthName(next, l)])) + "</a> · "
            + HTML.escape(l.t("report.printHint")) + "</p>"
        let facts: [(String, String, String)] = [
            ("lends", l.t("report.lends"), l.number(r.lends)),
            ("returns", l.t("report.returns"), l.number(r.returns)),
            ("overdue", l.t("report.overdue"), l.number(r.overdue)),
            ("borrowers", l.t("report.borrowerCount"), l.number(r.borrowers.count)),
            ("zone", l.t("stocktake.timeZone"), l.timeZone.identifier),
        ]
        body += "<dl class=\"facts\" id=\"report-summary\">" + facts.map {
            "<dt>\(HTML.escape($0.1))</dt><dd id=\"summary-\($0.0)\">\(HTML.escape($0.2))</dd>"
        }.joined() + "</dl>"
        body += "<section id=\"section-top\"><h2>\(HTML.escape(l.t("report.topDevices")))</h2>"
        if r.topDevices.isEmpty {
            body += "<p class=\"empty\" id=\"top-empty\">\(HTML.escape(l.t("report.noLends")))</p>"
        } else {
            body += HTML.table(["report.rank", "device.id", "device.model", "report.lendCount"].map { l.t($0) },
                               r.topDevices.enumerated().map { i, d in
                                   ([HTML.escape(l.number(i + 1)), deviceLink(d.deviceId), HTML.escape(d.model), HTML.escape(l.number(d.lends))],
                                    " data-device=\"\(HTML.escape(d.deviceId))\"")
                               }, id: "top-devices")
        }
        body += "</section><section id=\"section-borrowers\"><h2>"
            + HTML.escape(l.t("report.borrowers", ["count": l.number(r.borrowers.count)])) + "</h2>"
        guard !r.borrowers.isEmpty else {
            return body + "<p class=\"empty\" id=\"borrowers-empty\">\(HTML.escape(l.t("report.noBorrowers")))</p></section>"
        }
        for b in r.borrowers { body += borrower(b, l) }
        return body + "</section>"
    }

    /// One borrower, named as the stocktake report names a user ("Name (ID)", "名前 さん（ID）"), a link to the user, and their rentals.
    static func borrower(_ b: MonthlyLendingReport.Borrower, _ l: Localizer) -> String {
        let name = "<a href=\"/users/\(HTML.urlComponent(b.userId))\">"
            + HTML.escape(l.t("stocktake.user", ["name": b.userName, "id": b.userId])) + "</a>"
        let rows = b.rentals.map { h -> (cells: [String], attributes: String) in
            ([deviceLink(h.deviceId), HTML.escape(h.model), HTML.escape(l.dateTime(h.rentedAt)),
              HTML.escape(h.dueAt.map { l.dateTime($0) } ?? l.t("rentals.open")),
              HTML.escape(h.returnedAt.map { l.dateTime($0) } ?? l.t("report.notReturned"))],
             " data-device=\"\(HTML.escape(h.deviceId))\"")
        }
        return "<div class=\"borrower\" data-user=\"\(HTML.escape(b.userId))\"><h3>\(name)</h3>"
            + HTML.table(["device.id", "device.model", "report.lentAt", "rentals.due", "rentals.returned"].map { l.t($0) }, rows,
                         id: "rentals-\(HTML.escape(b.userId))")
            + "</div>"
    }

    private static func deviceLink(_ id: String) -> String {
        "<a class=\"nowrap\" href=\"/devices/\(HTML.urlComponent(id))\">\(HTML.escape(id))</a>"
    }
}
