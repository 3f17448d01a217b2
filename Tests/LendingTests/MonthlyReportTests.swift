import Foundation
import Lending
import Testing

/// The monthly lending report as a pure function of the rentals out in the month.
@Suite("Monthly lending report")
struct MonthlyReportTests {
    let tokyo = TimeZone(identifier: "Asia/Tokyo")!

    func rental(_ id: Int64, _ device: String, _ user: String, lent: Date, due: Date? = nil, back: Date? = nil) -> Rental {
        Rental(id: id, deviceId: device, model: "Model \(device)", osVersion: "1", serialNumber: "SN", userId: user,
               userName: "Name \(user)", rentedAt: lent, dueAt: due, returnedAt: back)
    }

    @Test func theMonthIsTheKiosksAndTheCountsFollowIt() throws {
        let (from, until) = try #require(MonthlyLendingReport.bounds(of: "2026-11", in: tokyo))
        // 2026-11-01 00:00 in Tokyo is 2026-10-31 15:00 UTC.
        #expect(from == Date(timeIntervalSince1970: 1_793_458_800) && until.timeIntervalSince(from) == 30 * 86400)
        #expect(MonthlyLendingReport.bounds(of: "2026-13", in: tokyo) == nil)
        #expect(MonthlyLendingReport.bounds(of: "November", in: tokyo) == nil)
        let day: TimeInterval = 86400
        let rentals = [
            // Lent before the month, returned in it: a return, and Ada had it.
            rental(1, "D-1", "U-1", lent: from.addingTimeInterval(-5 * day), back: from.addingTimeInterval(2 * day)),
            // Lent twice in the month.
            rental(2, "D-2", "U-2", lent: from.addingTimeInterval(day), due: from.addingTimeInterval(3 * day),
                   back: from.addingTimeInterval(4 * day)),  // back late: overdue in the month
            rental(3, "D-2", "U-1", lent: from.addingTimeInterval(10 * day), due: from.addingTimeInterval(12 * day),
                   back: from.addingTimeInterval(11 * day)),  // back in time
            // Lent in the month, still out, due after the report's time: not overdue yet.
            rental(4, "D-3", "U-3", lent: from.addingTimeInterval(20 * day), due: from.addingTimeInterval(29 * day)),
        ]
        let report = MonthlyLendingReport.make(month: "2026-11", timeZone: tokyo, from: from, until: until, rentals: rentals,
                                               now: from.addingTimeInterval(25 * day))
        #expect((report.lends, report.returns, report.overdue) == (3, 3, 1))
        #expect(report.topDevices.map(\.deviceId) == ["D-2", "D-3"] && report.topDevices.first?.lends == 2)
        #expect(report.borrowers.map(\.userId) == ["U-1", "U-2", "U-3"])
        #expect(report.borrowers[0].rentals.map(\.deviceId) == ["D-1", "D-2"])
        // Seen after the month has ended, D-3 is overdue too only if its due date fell in the month.
        let later = MonthlyLendingReport.make(month: "2026-11", timeZone: tokyo, from: from, until: until, rentals: rentals,
                                              now: until.addingTimeInterval(day))
        #expect(later.overdue == 2)
    }
}
