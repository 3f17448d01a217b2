import Foundation
import Testing
import TestSupport
import JSON
import Lending
@testable import WebFront
import RoomBridgeCore

private let tokyo = TimeZone(identifier: "Asia/Tokyo")!
private let at = WireTime.parse("2026-11-30T23:05:00Z")!  // 1 Dec 2026, 08:05 in Tokyo

private func stocktake(_ id: Int64 = 3, _ scope: StocktakeScope = .all, closed: Bool = true) -> Stocktake {
    Stocktake(id: id, scope: scope, startedAt: at, startedBy: "web:root-admin", closedAt: closed ? at.addingTimeInterval(3600) : nil,
              closedBy: closed ? "web:root-admin" : nil, counted: 1, unexpected: 1)
}

private let report = StocktakeReport(stocktake: stocktake(), entries: [
    StocktakeEntry(list: .found, deviceId: "D-0001", model: "Pixel <7>", serialNumber: "SN-1", uid: "04A1", tappedAt: at, location: "front"),
    StocktakeEntry(list: .missing, deviceId: "D-0002", model: "Pixel 6", serialNumber: "SN-2"),
    StocktakeEntry(list: .lent, deviceId: "D-0003", model: "Pixel 8", serialNumber: "SN-3", userId: "U-0002", userName: "Grace Hopper"),
    StocktakeEntry(list: .unexpected, uid: "04112233445566", tappedAt: at, location: "front"),
])

private let status = StocktakeStatus(id: 3, scope: "all", scopeValue: nil, startedAt: at, counted: 4, unexpected: 0)

private func tap(_ kind: LendingOutcome.Kind, reason: String? = nil) -> WatchedEvent {
    WatchedEvent(Event(seq: 12, at: Date(timeIntervalSince1970: 0), payload: .lending(LendingOutcome(kind: kind, deviceId: "D-0001", model: "Pixel 7", reason: reason, message: "m", at: at))))
}

@Suite struct StocktakeViewTests {
    let en = Localizer(language: .en, timeZone: tokyo)
    let ja = Localizer(language: .ja, timeZone: tokyo)
    let admin = Viewer(user: "root-admin", csrf: "tok")

    @Test func theStartFormNamesItsScope() {
        #expect(StocktakeViews.scope(from: Query("scope=all")) == .success(.all))
        #expect(StocktakeViews.scope(from: Query("")) == .success(.all))
        #expect(StocktakeViews.scope(from: Query("scope=group&group=android-phone&location=x")) == .success(.group("android-phone")))
        #expect(StocktakeViews.scope(from: Query("scope=location&location=+front+")) == .success(.location("front")))
        #expect(StocktakeViews.scope(from: Query("scope=group&group=")) == .failure(.init(key: "stocktake.needGroup")))
        #expect(StocktakeViews.scope(from: Query("scope=location&location=++")) == .failure(.init(key: "stocktake.needLocation")))
        #expect(StocktakeViews.scope(from: Query("scope=shelf")) == .failure(.init(key: "stocktake.needScope")))
    }

    @Test func aScopeIsSaidWithTheGroupsName() {
        let groups = ["android-phone": "Android phone"]
        #expect(StocktakeViews.scope(.all, groups: groups, en) == "All devices")
        #expect(StocktakeViews.scope(.group("android-phone"), groups: groups, en) == "Group Android phone")
        #expect(StocktakeViews.scope(.group("gone"), groups: groups, en) == "Group gone")
        #expect(StocktakeViews.scope(.location("front"), groups: groups, ja) == "場所 front")
    }

    @Test func theReportHasFourListsInTheKioskZoneAndEscapesData() {
        let body = StocktakeViews.report(en, viewer: .anonymous, report: report, groups: [])
        #expect(body.contains("<dd id=\"fact-started\">1 Dec 2026 at 08:05 by web:root-admin</dd>"), "\(body)")
        #expect(body.contains("<dd id=\"fact-zone\">Asia/Tokyo</dd>"))
        for (list, heading) in [("found", "Found (1)"), ("missing", "Missing (1)"), ("lent", "Lent (1)"), ("unexpected", "Unexpected (1)")] {
            #expect(body.contains("<section id=\"section-\(list)\"><h2>\(heading)</h2><table id=\"\(list)\">"), "\(list)")
        }
        #expect(body.contains("<td>Pixel &lt;7&gt;</td>") && !body.contains("Pixel <7>"))
        #expect(body.contains("<td>Grace Hopper (U-0002)</td>"))
        #expect(body.contains("<tr data-uid=\"04112233445566\"><td>04112233445566</td>"))
        #expect(body.contains("href=\"/stocktakes/3.csv\"") && body.contains("href=\"/stocktakes/3.csv?bom=1\""))
        // The downloads and the hint are for the screen only.
        #expect(body.contains("<p class=\"no-print\" id=\"downloads\">"))
    }

    @Test func anEmptyListSaysSoAndAnOpenStocktakeHasNoListsYet() {
        let empty = StocktakeViews.report(ja, viewer: .anonymous, report: StocktakeReport(stocktake: stocktake(), entries: []), groups: [])
        #expect(empty.contains("<p class=\"empty\" id=\"missing-empty\">所在不明の端末はありません。</p>"))
        #expect(empty.contains("<h2>想定外（0）</h2>"))
        let open = StocktakeReport(stocktake: stocktake(closed: false), entries: [])
        let anonymous = StocktakeViews.report(en, viewer: .anonymous, report: open, groups: [])
        #expect(anonymous.contains("id=\"still-open\"") && !anonymous.contains("<section") && !anonymous.contains("close-stocktake"))
        #expect(!anonymous.contains(".csv"))
        let signedIn = StocktakeViews.report(en, viewer: admin, report: open, groups: [])
        #expect(signedIn.contains("action=\"/stocktakes/3/close\"") && signedIn.contains("value=\"tok\""))
    }

    @Test func theListOffersTheCloseButtonOrTheStartFormOnlyToAnAdmin() {
        let groups = [DeviceGroup(id: "android-phone", name: "Android phone")]
        let open = StocktakeViews.list(en, viewer: admin, stocktakes: [stocktake(4, .group("android-phone"), closed: false), stocktake()],
                                       groups: groups)
        #expect(open.contains("Stocktake 4 (Group Android phone) is open: 1 counted so far."))
        #expect(open.contains("id=\"close-stocktake\"") && !open.contains("id=\"start-form\""))
        #expect(open.range(of: "data-stocktake=\"4\"")!.lowerBound < open.range(of: "data-stocktake=\"3\"")!.lowerBound)
        let closed = StocktakeViews.list(en, viewer: admin, stocktakes: [stocktake()], groups: groups,
                                         values: Query("scope=location&location=front"))
        #expect(closed.contains("id=\"start-form\"") && closed.contains("id=\"scope-location\" checked") && closed.contains("value=\"front\""))
        let anonymous = StocktakeViews.list(en, viewer: .anonymous, stocktakes: [], groups: groups)
        #expect(!anonymous.contains("<form") && anonymous.contains("No stocktake is open.") && anonymous.contains("No stocktake yet."))
    }

    @Test func theKioskBannerCountsInTheReadersLanguage() {
        #expect(KioskView.stocktake(status, en) == "Stocktake: tap each device to count it (4 counted)")
        #expect(KioskView.stocktake(status, ja) == "棚卸し中: 端末を1台ずつタップしてください（4 台確認済み）")
    }

    @Test func stocktakeEventsAndCountedTapsCarryTheBanner() throws {
        let started = WatchedEvent(Event(seq: 10, at: Date(timeIntervalSince1970: 0), payload: .stocktake(StocktakeNotice(change: .started, status: status, message: "m"))))
        #expect(KioskPage.sse(.event(started, OutcomeFacts()), en)
                == "id: 10\nevent: stocktake\ndata: {\"text\":\"Stocktake: tap each device to count it (4 counted)\"}\n\n")
        let closed = WatchedEvent(Event(seq: 11, at: Date(timeIntervalSince1970: 0), payload: .stocktake(StocktakeNotice(change: .closed, status: status, message: "m"))))
        #expect(KioskPage.sse(.event(closed, OutcomeFacts()), en) == "id: 11\nevent: stocktake\ndata: {}\n\n")
        var five = status
        five.counted = 5
        let counted = KioskPage.sse(.event(tap(.counted), OutcomeFacts(stocktake: five)), en)
        #expect(counted.hasPrefix("id: 12\nevent: outcome\ndata: {") && counted.contains("Counted Pixel 7 (D-0001)"))
        #expect(counted.hasSuffix("id: 12\nevent: stocktake\ndata: {\"text\":\"Stocktake: tap each device to count it (5 counted)\"}\n\n"))
        // Any other outcome leaves the banner alone.
        #expect(!KioskPage.sse(.event(tap(.lent), OutcomeFacts()), en).contains("event: stocktake"))
    }

    @Test func theHubFollowsTheCount() {
        let started = WatchedEvent(Event(seq: 10, at: Date(timeIntervalSince1970: 0), payload: .stocktake(StocktakeNotice(change: .started, status: status, message: ""))))
        #expect(EventHub.stocktake(after: started, OutcomeFacts(), nil) == status)
        let closed = WatchedEvent(Event(seq: 11, at: Date(timeIntervalSince1970: 0), payload: .stocktake(StocktakeNotice(change: .closed, status: status, message: ""))))
        #expect(EventHub.stocktake(after: closed, OutcomeFacts(), status) == nil)
        // The daemon's count when it could be read, else counted on here.
        var known = status
        known.counted = 9
        #expect(EventHub.stocktake(after: tap(.counted), OutcomeFacts(stocktake: known), status)?.counted == 9)
        #expect(EventHub.stocktake(after: tap(.counted), OutcomeFacts(), status)?.counted == 5)
        #expect(EventHub.stocktake(after: tap(.counted, reason: "again"), OutcomeFacts(), status)?.counted == 4)
        #expect(EventHub.stocktake(after: tap(.unexpected), OutcomeFacts(), status)?.unexpected == 1)
        #expect(EventHub.stocktake(after: tap(.lent), OutcomeFacts(), status) == status)
    }
}
