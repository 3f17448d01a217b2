import Foundation
import Testing
import JSON
@testable import WebFront

private let tokyo = TimeZone(identifier: "Asia/Tokyo")!
private let london = TimeZone(identifier: "Europe/London")!

private func slot(_ id: Int64, _ from: String, _ until: String, user: String = "Grace <Hopper>", state: String = "booked") -> BookingViews.Slot {
    BookingViews.Slot(id: id, deviceId: "D-0001", model: "Pixel 7", userId: "U-0002", userName: user,
                      startsAt: WireTime.parse(from)!, endsAt: WireTime.parse(until)!, state: state)
}

@Suite struct BookingViewTests {
    let en = Localizer(language: .en, timeZone: tokyo)
    let ja = Localizer(language: .ja, timeZone: tokyo)

    @Test func aLocalDateAndTimeIsReadInTheKiosksTimeZone() {
        #expect(BookingViews.localTime("2026-12-01T09:30", tokyo) == WireTime.parse("2026-12-01T00:30:00Z"))
        #expect(BookingViews.localTime("2026-12-01 09:30:15", tokyo) == WireTime.parse("2026-12-01T00:30:15Z"))
        #expect(BookingViews.localTime("2026-12-01T00:00", london) == WireTime.parse("2026-12-01T00:00:00Z"))
        for bad in ["2026-02-30T09:00", "2026-12-01", "2026-12-01T24:00", "2026-12-01T9:30", "01.12.2026 09:30", "",
                    // Skipped when British Summer Time began.
                    "2026-03-29T01:30"] {
            #expect(BookingViews.localTime(bad, london) == nil, "\(bad)")
        }
        #expect(BookingViews.localField(WireTime.parse("2026-12-01T15:05:00Z")!, tokyo) == "2026-12-02T00:05")
    }

    @Test func aWeekIsSevenKioskDaysAndADaylightSavingDayIsShorter() throws {
        let first = BookingViews.day(of: try #require(WireTime.parse("2026-11-30T15:00:00Z")), tokyo)
        #expect(BookingViews.text(first) == "2026-12-01")
        let days = try #require(BookingViews.days(from: first, tokyo))
        #expect(days.map { BookingViews.text($0.day) } == (1...7).map { "2026-12-0\($0)" })
        #expect(days[0].start == WireTime.parse("2026-11-30T15:00:00Z") && days[6].end == WireTime.parse("2026-12-07T15:00:00Z"))
        let march = BookingViews.day(of: try #require(WireTime.parse("2026-03-28T12:00:00Z")), london)
        let spring = try #require(BookingViews.days(from: march, london))
        #expect(spring.map { $0.end.timeIntervalSince($0.start) / 3600 } == [24, 23, 24, 24, 24, 24, 24])
        #expect(BookingViews.shift(first, by: -7, tokyo).map(BookingViews.text) == "2026-11-24")
        #expect(BookingViews.shift(first, by: 7, tokyo).map(BookingViews.text) == "2026-12-08")
    }

    @Test func theStripShowsEachDaysPartOfABookingWithTheBookersName() throws {
        let first = BookingViews.day(of: try #require(WireTime.parse("2026-11-30T15:00:00Z")), tokyo)
        let days = try #require(BookingViews.days(from: first, tokyo))
        // Tokyo: 2 Dec 22:00 to 3 Dec 02:00, and 5 Dec 10:00 to 12:00 (taken up).
        let html = BookingViews.weekStrip([slot(2, "2026-12-05T01:00:00Z", "2026-12-05T03:00:00Z", user: "Ada", state: "fulfilled"),
                                           slot(1, "2026-12-02T13:00:00Z", "2026-12-02T17:00:00Z")], days: days, en)
        func column(_ day: String) -> String {
            let start = html.range(of: "<td data-day=\"\(day)\">")!.upperBound
            return String(html[start...]).components(separatedBy: "</td>")[0]
        }
        #expect(html.contains("<th data-day=\"2026-12-01\">Tue 1 Dec</th>"))
        #expect(column("2026-12-02").contains("22:00–24:00") && column("2026-12-02").contains("Grace &lt;Hopper&gt;"))
        #expect(column("2026-12-03").contains("00:00–02:00"))
        #expect(column("2026-12-05").contains("10:00–12:00") && column("2026-12-05").contains("Ada</a> (Lent under it)"))
        for free in ["2026-12-01", "2026-12-04", "2026-12-06", "2026-12-07"] {
            #expect(column(free) == "<span class=\"empty\">Free</span>", "\(free)")
        }
        #expect(!html.contains("Grace <Hopper>"))
        let links = BookingViews.weekLinks(first, today: first, path: "/devices/D-0001", en)
        #expect(links.contains("href=\"/devices/D-0001?week=2026-11-24\"") && links.contains("href=\"/devices/D-0001?week=2026-12-08\""))
        #expect(!links.contains("week-this"))
        #expect(BookingViews.weekLinks(first, today: BookingViews.shift(first, by: 3, tokyo)!, path: "/x", en).contains("id=\"week-this\""))
        #expect(BookingViews.weekStrip([], days: days, ja).contains("12月1日(火)"))
    }

    @Test func onlyAnAdminGetsACancelButtonAndOnlyForABookingStillBooked() {
        let bookings = [slot(1, "2026-12-02T13:00:00Z", "2026-12-02T17:00:00Z"),
                        slot(2, "2026-12-05T01:00:00Z", "2026-12-05T03:00:00Z", state: "fulfilled")]
        let admin = Viewer(user: "root-admin", csrf: "tok")
        let html = BookingViews.upcoming(bookings, userId: "U-0002", en, viewer: admin)
        #expect(html.contains("action=\"/users/U-0002/bookings/1/cancel\""))
        #expect(html.contains("name=\"csrf\" value=\"tok\""))
        #expect(!html.contains("/bookings/2/cancel"))
        #expect(html.contains("2 Dec 2026 at 22:00") && html.contains("Lent under it"))
        #expect(!BookingViews.upcoming(bookings, userId: "U-0002", en, viewer: .anonymous).contains("<form"))
    }

    @Test func theFormKeepsWhatWasTyped() {
        let values = Query("device=D-0001&user=U-0002&starts=2026-12-01T09%3A00&ends=2026-12-01T%3Cb")
        let html = BookingViews.form(ja, viewer: Viewer(user: "root-admin", csrf: "tok"), users: [("U-0002", "Grace")],
                                     values: values, error: "予約があります")
        #expect(html.contains("id=\"booking-device\" value=\"D-0001\""))
        #expect(html.contains("id=\"booking-starts\" value=\"2026-12-01T09:00\""))
        #expect(html.contains("id=\"booking-ends\" value=\"2026-12-01T&lt;b\""))
        #expect(html.contains("<option value=\"U-0002\">Grace</option>"))
        #expect(html.contains("<p class=\"error\" id=\"error\">予約があります</p>"))
        #expect(html.contains("Asia/Tokyo"))
    }
}
