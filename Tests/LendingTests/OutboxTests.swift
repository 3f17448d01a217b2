import Foundation
import JSON
import Lending
import RoomBridgeCore
import Testing
import Retry

@Suite("Outbox rules")
struct OutboxTests {
    let rental = Rental(id: 7, deviceId: "D-1", model: "Pixel 8", osVersion: "15", serialNumber: "SN1", userId: "U-1",
                        userName: "Alice", rentedAt: Date(timeIntervalSince1970: 1_780_000_000),
                        dueAt: Date(timeIntervalSince1970: 1_780_086_400))

    @Test func backoffDoublesUpToTheCapWithJitterInTheUpperHalf() {
        let b = Backoff.outbox(base: .seconds(2), cap: .seconds(60))
        #expect(b.delay(attempt: 1, jitter: 1) == .seconds(2))
        #expect(b.delay(attempt: 2, jitter: 1) == .seconds(4))
        #expect(b.delay(attempt: 4, jitter: 1) == .seconds(16))
        #expect(b.delay(attempt: 10, jitter: 1) == .seconds(60))
        #expect(b.delay(attempt: 1000, jitter: 1) == .seconds(60))
        #expect(b.delay(attempt: 3, jitter: 0) == .seconds(4))
        #expect(b.delay(attempt: 3, jitter: 0.5) == .seconds(6))
        let now = Date(timeIntervalSince1970: 100)
        #expect(b.nextAttempt(afterAttempts: 2, now: now, jitter: 1) == Date(timeIntervalSince1970: 104))
    }

    @Test func routesFilterByKindAndShareOneEventID() throws {
        let rows = OutboxEvent.inserts(.return, rental: rental, at: rental.rentedAt,
                                       routes: [OutboxRoute(target: "a"), OutboxRoute(target: "b", kinds: [.lend]),
                                                OutboxRoute(target: "c", kinds: [.return, .overdue])])
        #expect(rows.map(\.target) == ["a", "c"])
        #expect(Set(rows.map(\.eventId)).count == 1)
        #expect(OutboxEvent.inserts(.renew, rental: rental, at: rental.rentedAt, routes: []).isEmpty)
        let doc = try JSONValue(parsing: rows[0].payload)
        #expect(doc["kind"]?.stringValue == "return")
        #expect(doc["deviceId"]?.stringValue == "D-1")
        #expect(doc["rental"]?["dueAt"]?.stringValue == "2026-05-29T20:26:40Z")
    }

    @Test func aLowBatteryIsANoticeWithoutADeviceForTheTargetsThatTakeIt() throws {
        let at = Date(timeIntervalSince1970: 1_780_000_000)
        let routes = [OutboxRoute(target: "chat"), OutboxRoute(target: "desk", kinds: [.lend])]
        let entries = OutboxEvent.battery(BatteryNotice(curtain: "left", battery: 12, threshold: 20), at: at, routes: routes)
        #expect(entries.map(\.target) == ["chat"])
        let entry = try #require(entries.first)
        #expect(entry.kind == .battery && entry.deviceId == "")
        let body = try JSONValue(parsing: entry.payload)
        #expect(body["curtain"] == .string("left") && body["battery"] == .int(12) && body["threshold"] == .int(20))
        #expect(body["kind"] == .string("battery") && body["id"] == .string(entry.eventId.uuidString.lowercased()))
        #expect(OutboxEvent.summary(entry.payload) == "the left curtain's battery is at 12 %")
    }

    @Test func chatTextSaysWhatHappenedInEnglish() {
        let body = OutboxEvent.payload(kind: .lend, eventId: UUID(), rental: rental, at: rental.rentedAt)
        #expect(OutboxEvent.summary(body) == "D-1 (Pixel 8) lent to Alice, due 2026-05-29T20:26:40Z")
        var returned = rental
        returned.returnNote = "cracked screen"
        returned.returnedBy = "unix:bob"
        let back = OutboxEvent.payload(kind: .return, eventId: UUID(), rental: returned, at: rental.rentedAt)
        #expect(OutboxEvent.summary(back) == "D-1 (Pixel 8) returned by unix:bob (note: cracked screen)")
    }
}
