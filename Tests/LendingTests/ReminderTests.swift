import Foundation
import JSON
import Lending
import Testing

@Suite("Reminder schedule and events")
struct ReminderTests {
    let tokyo = TimeZone(identifier: "Asia/Tokyo")!

    func date(_ iso: String) -> Date { try! Date(iso, strategy: .iso8601) }

    @Test func timesOfDayParse() {
        #expect(ReminderSchedule.secondsOfDay("09:00") == 9 * 3600)
        #expect(ReminderSchedule.secondsOfDay("23:59:30") == 23 * 3600 + 59 * 60 + 30)
        for bad in ["9:00", "24:00", "12:60", "", "09", "09:00:60", "０９:００", "09:00:00:00"] {
            #expect(ReminderSchedule.secondsOfDay(bad) == nil, "\(bad)")
        }
    }

    @Test func theDayAndTheTimesAreTheKiosks() {
        let s = ReminderSchedule(digestAt: 9 * 3600, dueNoticeAt: 8 * 3600, timeZone: tokyo)
        // 2026-11-24T23:30Z is 08:30 on the 25th in Tokyo.
        let now = date("2026-11-24T23:30:00Z")
        #expect(s.day(of: now).key == "2026-11-25")
        #expect(s.day(of: now).start == date("2026-11-24T15:00:00Z"))
        #expect(s.due(at: now) == [.due])
        #expect(s.nextTime(after: now) == date("2026-11-25T00:00:00Z"))
        #expect(s.due(at: date("2026-11-25T00:00:00Z")) == [.digest, .due])
        // After the last time of the day: the first of the next.
        #expect(s.nextTime(after: date("2026-11-25T01:00:00Z")) == date("2026-11-25T23:00:00Z"))
        #expect(ReminderSchedule(timeZone: tokyo).nextTime(after: now) == nil)
    }

    @Test func eventIdsFollowWhatTheReminderIsAbout() {
        #expect(ReminderEvent.stableId("digest", "2026-11-25") == ReminderEvent.stableId("digest", "2026-11-25"))
        #expect(ReminderEvent.stableId("digest", "2026-11-25") != ReminderEvent.stableId("digest", "2026-11-26"))
        #expect(ReminderEvent.stableId("digest", "1") != ReminderEvent.stableId("due", "1"))
        let text = ReminderEvent.stableId("due", "7@1780086400000").uuidString
        #expect(Array(text)[14] == "8")
    }

    @Test func aNoticeForEachRentalDueThatDayAndADigest() throws {
        let s = ReminderSchedule(digestAt: 9 * 3600, dueNoticeAt: 9 * 3600, timeZone: tokyo)
        let now = date("2026-11-25T00:00:00Z")  // 09:00 in Tokyo
        let day = s.day(of: now)
        func rental(_ id: Int64, due: String?, returned: Bool = false) -> Rental {
            Rental(id: id, deviceId: "D-\(id)", model: "Pixel", osVersion: "15", serialNumber: "SN\(id)", userId: "U-1",
                   userName: "山田太郎", rentedAt: date("2026-11-20T00:00:00Z"), dueAt: due.map(date),
                   returnedAt: returned ? date("2026-11-24T00:00:00Z") : nil)
        }
        let rentals = [rental(1, due: "2026-11-25T08:00:00Z"), rental(2, due: "2026-11-25T16:00:00Z"),
                       rental(3, due: "2026-11-24T08:00:00Z"), rental(4, due: nil), rental(5, due: "2026-11-25T08:00:00Z", returned: true)]
        let routes = [OutboxRoute(target: "hook"), OutboxRoute(target: "lends", kinds: [.lend])]
        let notices = ReminderEvent.dueNotices(day: day, rentals: rentals, at: now, routes: routes)
        #expect(notices.map(\.deviceId) == ["D-1"])
        #expect(notices.map(\.target) == ["hook"])
        #expect(OutboxEvent.summary(notices[0].payload) == "D-1 (Pixel) is due back today from 山田太郎, due 2026-11-25T08:00:00Z")

        let digest = ReminderEvent.digest(day: day, active: Array(rentals.prefix(4)), at: now, timeZone: tokyo, routes: routes)
        #expect(digest.map(\.target) == ["hook"])
        let doc = try JSONValue(parsing: digest[0].payload)
        #expect(doc["day"]?.stringValue == "2026-11-25")
        #expect(doc["timeZone"]?.stringValue == "Asia/Tokyo")
        #expect(doc["lent"]?.intValue == 4)
        #expect(doc["overdueCount"]?.intValue == 1)
        #expect(doc["dueTodayCount"]?.intValue == 1)
        #expect(OutboxEvent.summary(digest[0].payload) == "Lending on 2026-11-25: 4 lent, 1 overdue (D-3), 1 more due today")
        #expect(digest[0].eventId == ReminderEvent.stableId("digest", "2026-11-25"))
    }
}
