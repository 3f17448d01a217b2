import Foundation
import Testing
import JSON
import Lending
@testable import WebFront


private let tokyo = TimeZone(identifier: "Asia/Tokyo")!
private let start = WireTime.parse("2026-10-31T15:00:00Z")!  // 1 Nov 2026, 00:00 in Tokyo
private let end = WireTime.parse("2026-11-30T15:00:00Z")!

private func rental(_ id: Int64, _ device: String, _ user: String, _ name: String, lent: String, due: String? = nil,
                    returned: String? = nil) -> Rental {
    Rental(id: id, deviceId: device, model: device == "D-0001" ? "Pixel <7>" : "Pixel 6", osVersion: "", serialNumber: "",
           userId: user, userName: name, rentedAt: WireTime.parse(lent)!, dueAt: due.flatMap { WireTime.parse($0) },
           returnedAt: returned.flatMap { WireTime.parse($0) })
}

private let november = MonthlyLendingReport.make(month: "2026-11", timeZone: tokyo, from: start, until: end, rentals: [
    rental(1, "D-0001", "U-0003", "山田 花子", lent: "2026-11-02T01:00:00Z", due: "2026-11-03T09:00:00Z", returned: "2026-11-04T02:00:00Z"),
    rental(2, "D-0001", "U-0002", "Grace Hopper", lent: "2026-11-05T01:00:00Z"),
    rental(3, "D-0002", "U-0003", "山田 花子", lent: "2026-11-06T01:00:00Z", due: "2026-12-06T09:00:00Z"),
], now: WireTime.parse("2026-11-27T00:00:00Z")!)

private let empty = MonthlyLendingReport.make(month: "2026-12", timeZone: tokyo, from: end, until: end.addingTimeInterval(31 * 86400),
                                              rentals: [], now: end)

@Suite struct ReportViewTests {
    let en = Localizer(language: .en, timeZone: tokyo)
    let ja = Localizer(language: .ja, timeZone: tokyo)

    @Test func onlyAMonthAsTheAddressWritesItIsOne() {
        #expect(ReportViews.month("2026-11") == "2026-11")
        #expect(ReportViews.month("2026-01") == "2026-01")
        for bad in ["2026-13", "2026-00", "2026-1", "26-11", "2026/11", "2026-11-01", "november", "", "２０２６-11", "2026-+1", "0000-05"] {
            #expect(ReportViews.month(bad) == nil, "\(bad)")
        }
    }

    @Test func theMonthsAroundAMonthCrossTheYear() {
        #expect(ReportViews.month("2026-12", adding: 1) == "2027-01")
        #expect(ReportViews.month("2026-01", adding: -1) == "2025-12")
        #expect(ReportViews.month("2026-11", adding: -1) == "2026-10")
    }

    @Test func thisMonthIsTheKiosksMonth() {
        // 30 Nov 2026, 23:05 UTC is already December in Tokyo, still November in UTC.
        let at = WireTime.parse("2026-11-30T23:05:00Z")!
        #expect(ReportViews.month(of: at, in: tokyo) == "2026-12")
        #expect(ReportViews.month(of: at, in: TimeZone(identifier: "UTC")!) == "2026-11")
    }

    @Test func theTitleNamesTheMonthAndTheZone() {
        #expect(ReportViews.title("2026-11", en) == "Lending report November 2026 (Asia/Tokyo)")
        #expect(ReportViews.title("2026-11", ja) == "貸出月報 2026年11月（Asia/Tokyo）")
        #expect(ReportViews.badMonth("2026-13", en).contains("YYYY-MM"))
        #expect(ReportViews.badMonth("2026-13", ja).contains("YYYY-MM"))
    }

    @Test func theReportShowsTheSummaryTheTopDevicesAndWhoHadWhatInTheKiosksZone() {
        let page = ReportViews.report(en, report: november)
        #expect(page.contains("<dd id=\"summary-lends\">3</dd>"))
        #expect(page.contains("<dd id=\"summary-returns\">1</dd>"))
        #expect(page.contains("<dd id=\"summary-overdue\">1</dd>"))
        #expect(page.contains("<dd id=\"summary-borrowers\">2</dd>"))
        #expect(page.contains("<dd id=\"summary-zone\">Asia/Tokyo</dd>"))
        // The most lent first, the model escaped.
        let top = page.range(of: "<table id=\"top-devices\">")!
        let rest = String(page[top.upperBound...])
        #expect(rest.range(of: "D-0001")!.lowerBound < rest.range(of: "D-0002")!.lowerBound)
        #expect(page.contains("<td>Pixel &lt;7&gt;</td><td>2</td>"))
        #expect(!page.contains("Pixel <7>"))
        // Borrowers by name, named as in the stocktake report; times in Tokyo (10:00 = 01:00 UTC).
        #expect(page.range(of: "Grace Hopper (U-0002)")!.lowerBound < page.range(of: "山田 花子 (U-0003)")!.lowerBound)
        #expect(page.contains("<table id=\"rentals-U-0003\">"))
        #expect(page.contains("2 Nov 2026") && page.contains("10:00"))
        #expect(page.contains("not returned") && page.contains("open-ended"))
        #expect(page.contains("href=\"/reports/2026-10\"") && page.contains("href=\"/reports/2026-12\""))
        #expect(page.contains("← October 2026") && page.contains("December 2026 →"))
        // The month links and the print hint do not print.
        #expect(page.contains("<p class=\"no-print\" id=\"months\">"))
    }

    @Test func inJapaneseTheBorrowersAreNamedAsTheOtherTablesNameThem() {
        let page = ReportViews.report(ja, report: november)
        #expect(page.contains("山田 花子 さん（U-0003）"))
        #expect(page.contains("利用者ごとの貸出（2 人）"))
        #expect(page.contains("未返却"))
        #expect(page.contains("← 2026年10月"))
    }

    @Test func anEmptyMonthSaysSo() {
        let page = ReportViews.report(en, report: empty)
        #expect(page.contains("<dd id=\"summary-lends\">0</dd>"))
        #expect(page.contains("id=\"top-empty\"") && page.contains("id=\"borrowers-empty\""))
        #expect(!page.contains("<table"))
    }

    @Test func theNavigationLinksToTheReport() {
        let page = HTML.page(en, title: "t", active: "reports", viewer: .anonymous, body: "")
        #expect(page.contains("<a href=\"/reports\" aria-current=\"page\">Monthly report</a>"))
        #expect(HTML.page(ja, title: "t", active: "", viewer: .anonymous, body: "").contains(">月報</a>"))
    }
}
