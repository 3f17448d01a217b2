import Foundation
import Lending
import NDEF
import RoomBridgeCore
import Testing

let t0 = Date(timeIntervalSince1970: 1_800_000_000)
let alice = User(id: "U-1", name: "Alice", registeredAt: t0)
let bob = User(id: "U-2", name: "Bob", registeredAt: t0)
let aliceBadge = Badge(identifier: "04A1B2C3", kind: .iso14443a, userId: "U-1", registeredAt: t0)
let bobBadge = Badge(identifier: "0123456789ABCDEF", kind: .felica, userId: "U-2", registeredAt: t0)

func device(_ id: String = "D-1", status: DeviceStatus = .normal) -> Device {
    Device(id: id, groupId: "iphone", model: "iPhone 15", serialNumber: "SN-\(id)", osVersion: "18.1",
           status: status, connectorType: "USB-C", registeredAt: t0)
}

/// A tap at the reader `front`, with a device record naming `deviceOnTag` if given.
func tap(_ uid: TagUID, deviceOnTag: String? = nil) -> Tap {
    Tap(reader: "front", uid: uid, tagType: "NTAG215", device: deviceOnTag.map { DeviceTagRecord(deviceId: $0) }, at: t0)
}

func rental(_ deviceId: String = "D-1", to user: User = bob) -> Rental {
    Rental(id: 7, deviceId: deviceId, model: "iPhone 15", osVersion: "18.1", serialNumber: "SN-\(deviceId)",
           userId: user.id, userName: user.name, rentedAt: t0.addingTimeInterval(-3600))
}

struct RuleRow: CustomTestStringConvertible, Sendable {
    var name: String
    var identity: TapIdentity
    /// Session armed by this user at t0 (30 s), if any.
    var armedBy: User?
    /// Seconds after t0 at which the tap happens.
    var at: TimeInterval
    var expectedKind: String
    var expectedOperation: StoreOperation?
    /// Who is armed after the tap.
    var armedAfter: UserID?
    var testDescription: String { name }
}

let policy = LendingPolicy(armDuration: 30, defaultLoanPeriod: 7 * 86400)
func now(_ s: TimeInterval) -> Date { t0.addingTimeInterval(s) }

let ruleRows: [RuleRow] = [
    RuleRow(name: "badge with nobody armed arms its user", identity: .badge(aliceBadge, alice), armedBy: nil, at: 0,
            expectedKind: "armed", expectedOperation: nil, armedAfter: "U-1"),
    RuleRow(name: "another badge replaces the session", identity: .badge(bobBadge, bob), armedBy: alice, at: 10,
            expectedKind: "armed", expectedOperation: nil, armedAfter: "U-2"),
    RuleRow(name: "badge after expiry arms again", identity: .badge(aliceBadge, alice), armedBy: alice, at: 45,
            expectedKind: "armed", expectedOperation: nil, armedAfter: "U-1"),
    RuleRow(name: "available device while armed is lent to the armed user",
            identity: .device(DeviceRecord(device: device())), armedBy: alice, at: 10, expectedKind: "lent",
            expectedOperation: .lend(LendRequest(deviceId: "D-1", userId: "U-1", at: now(10),
                                                 dueAt: now(10 + 7 * 86400), location: "desk", lentBy: .user("U-1"))),
            armedAfter: "U-1"),
    RuleRow(name: "available device with nobody armed needs a badge",
            identity: .device(DeviceRecord(device: device())), armedBy: nil, at: 0, expectedKind: "badgeRequired",
            expectedOperation: nil, armedAfter: nil),
    RuleRow(name: "available device exactly at expiry needs a badge",
            identity: .device(DeviceRecord(device: device())), armedBy: alice, at: 30, expectedKind: "badgeRequired",
            expectedOperation: nil, armedAfter: nil),
    RuleRow(name: "available device one moment before expiry is lent",
            identity: .device(DeviceRecord(device: device())), armedBy: alice, at: 29.999, expectedKind: "lent",
            expectedOperation: .lend(LendRequest(deviceId: "D-1", userId: "U-1", at: now(29.999),
                                                 dueAt: now(29.999 + 7 * 86400), location: "desk", lentBy: .user("U-1"))),
            armedAfter: "U-1"),
    RuleRow(name: "lent device with someone armed is returned by that user",
            identity: .device(DeviceRecord(device: device(), activeRental: rental())), armedBy: alice, at: 5,
            expectedKind: "returned",
            expectedOperation: .returnDevice(ReturnRequest(deviceId: "D-1", at: now(5), returnedBy: .user("U-1"), location: "desk")),
            armedAfter: "U-1"),
    RuleRow(name: "lent device with nobody armed is returned anonymously",
            identity: .device(DeviceRecord(device: device(), activeRental: rental())), armedBy: nil, at: 5,
            expectedKind: "returned",
            expectedOperation: .returnDevice(ReturnRequest(deviceId: "D-1", at: now(5), returnedBy: nil, location: "desk")),
            armedAfter: nil),
    RuleRow(name: "lent broken device can still be returned",
            identity: .device(DeviceRecord(device: device(status: .broken), activeRental: rental())), armedBy: nil,
            at: 5, expectedKind: "returned",
            expectedOperation: .returnDevice(ReturnRequest(deviceId: "D-1", at: now(5), returnedBy: nil, location: "desk")),
            armedAfter: nil),
    RuleRow(name: "broken device is refused even when armed",
            identity: .device(DeviceRecord(device: device(status: .broken))), armedBy: alice, at: 1,
            expectedKind: "refused", expectedOperation: nil, armedAfter: "U-1"),
    RuleRow(name: "disposed device is refused",
            identity: .device(DeviceRecord(device: device(status: .disposed))), armedBy: nil, at: 1,
            expectedKind: "refused", expectedOperation: nil, armedAfter: nil),
    RuleRow(name: "unknown tag is reported and keeps the session", identity: .unknownTag(uid: "04FFFFFF"),
            armedBy: alice, at: 1, expectedKind: "unknownTag", expectedOperation: nil, armedAfter: "U-1"),
    RuleRow(name: "tag naming an unknown device is reported", identity: .unknownDevice("D-404", uid: "04EEEEEE"),
            armedBy: nil, at: 1, expectedKind: "unknownDevice", expectedOperation: nil, armedAfter: nil),
    RuleRow(name: "device record on an unregistered tag lends nothing, even when armed",
            identity: .unregisteredTag(DeviceRecord(device: device()), uid: "04EEEEEE", boundTo: nil),
            armedBy: alice, at: 1, expectedKind: "unregisteredTag", expectedOperation: nil, armedAfter: "U-1"),
    RuleRow(name: "device record on an unregistered tag returns nothing",
            identity: .unregisteredTag(DeviceRecord(device: device(), activeRental: rental()), uid: "04EEEEEE", boundTo: nil),
            armedBy: nil, at: 1, expectedKind: "unregisteredTag", expectedOperation: nil, armedAfter: nil),
]

@Suite("Lending rules")
struct LendingRulesTests {
    @Test(arguments: ruleRows)
    func rule(_ row: RuleRow) {
        let session = row.armedBy.map { LendingRules.arm($0, now: t0, policy: policy) }
        let decision = LendingRules.decide(row.identity, session: session, now: now(row.at), policy: policy, location: "desk")
        #expect(decision.outcome.kind == row.expectedKind)
        #expect(decision.operation == row.expectedOperation)
        #expect(decision.session?.userId == row.armedAfter)
        #expect(!decision.outcome.message.isEmpty)
    }

    /// A double tap: lent at t0+10, the same device again 0.3 s later is reported, not returned.
    @Test func aRepeatTapWithinTheWindowChangesNothing() {
        let session = LendingRules.arm(alice, now: t0, policy: policy)
        let lentRecord = DeviceRecord(device: device(), activeRental: rental(to: alice))
        let lent = RecentChange(deviceId: "D-1", kind: .lent, userName: "Alice", at: now(10))
        let again = LendingRules.decide(.device(lentRecord), session: session, now: now(10.3), policy: policy,
                                        location: nil, recent: lent)
        #expect(again.outcome == .repeated(deviceId: "D-1", model: "iPhone 15", change: .lent, userName: "Alice"))
        #expect(again.operation == nil && again.session == session)
        #expect(again.outcome.kind == "alreadyLent")
        #expect(again.outcome.message.contains("already lent to Alice"))
        // At the end of the window the tap is a return again.
        let later = LendingRules.decide(.device(lentRecord), session: nil, now: now(15), policy: policy,
                                        location: nil, recent: lent)
        #expect(later.outcome.kind == "returned")
        // Another device is not affected.
        let other = LendingRules.decide(.device(DeviceRecord(device: device("D-2"))), session: session, now: now(10.3),
                                        policy: policy, location: nil, recent: lent)
        #expect(other.outcome.kind == "lent")
    }

    @Test func aRepeatTapAfterAReturnIsAlreadyReturned() {
        let returned = RecentChange(deviceId: "D-1", kind: .returned, userName: "Bob", at: now(1))
        let session = LendingRules.arm(alice, now: t0, policy: policy)
        let again = LendingRules.decide(.device(DeviceRecord(device: device())), session: session, now: now(1.3),
                                        policy: policy, location: nil, recent: returned)
        #expect(again.outcome.kind == "alreadyReturned" && again.operation == nil)
        #expect(again.outcome.message.contains("already returned"))
        let published = again.outcome.published(uid: nil, reader: "front", at: now(1.3))
        #expect(published.kind == .refused && published.refusal == .alreadyReturned && published.reason == "alreadyReturned")
        // Window 0: off.
        var off = policy
        off.repeatWindow = 0
        #expect(LendingRules.decide(.device(DeviceRecord(device: device())), session: session, now: now(1),
                                    policy: off, location: nil, recent: returned).outcome.kind == "lent")
    }

    @Test func lendingKeepsTheSessionWithoutExtendingIt() {
        let session = LendingRules.arm(alice, now: t0, policy: policy)
        let decision = LendingRules.decide(.device(DeviceRecord(device: device())), session: session, now: now(20),
                                           policy: policy, location: nil)
        #expect(decision.session == session)
        #expect(decision.session?.remaining(at: now(20)) == 10)
    }

    @Test func replacingNamesThePreviousUser() {
        let session = LendingRules.arm(alice, now: t0, policy: policy)
        let decision = LendingRules.decide(.badge(bobBadge, bob), session: session, now: now(5), policy: policy, location: nil)
        guard case .armed(let new, let replacing) = decision.outcome else {
            Issue.record("expected armed, got \(decision.outcome)")
            return
        }
        #expect(replacing?.userId == "U-1")
        #expect(new.userId == bob.id && new.userName == bob.name)
        #expect(new.expiresAt == now(35))
        #expect(new.remaining(at: now(5)) == 30)
        #expect(new.remaining(at: now(40)) == 0)
        #expect(decision.outcome.message.contains("Switched from \(alice.name): Hello \(bob.name)"))
    }

    @Test func refusalSaysWhy() {
        let decision = LendingRules.decide(.device(DeviceRecord(device: device(status: .broken))), session: nil,
                                           now: t0, policy: policy, location: nil)
        #expect(decision.outcome == .refused(deviceId: "D-1", model: "iPhone 15", status: .broken))
        #expect(decision.outcome.message.contains("broken"))
    }

    @Test func openEndedLoansHaveNoDueDate() {
        let policy = LendingPolicy(armDuration: 10, defaultLoanPeriod: nil)
        let session = LendingRules.arm(alice, now: t0, policy: policy)
        let decision = LendingRules.decide(.device(DeviceRecord(device: device())), session: session, now: now(1),
                                           policy: policy, location: nil)
        guard case .lend(let request)? = decision.operation else {
            Issue.record("expected a lend, got \(String(describing: decision.operation))")
            return
        }
        #expect(request.dueAt == nil)
    }

    @Test func everyOutcomeHasAMessage() {
        let session = LendingRules.arm(alice, now: t0, policy: policy)
        let outcomes: [TapOutcome] = [
            .armed(session, replacing: nil), .armed(session, replacing: session), .disarmed(nil), .disarmed("U-1"),
            .lent(deviceId: "D-1", model: "M", userId: "U-1", userName: "Alice", dueAt: t0),
            .returned(deviceId: "D-1", model: "M", borrowerId: "U-2", borrowerName: "Bob", returnedBy: nil),
            .badgeRequired(deviceId: "D-1", model: "M"), .refused(deviceId: "D-1", model: "M", status: .disposed),
            .unknownDevice(deviceId: "D-9", uid: "04"), .unknownTag(uid: "04"), .failed(reason: "x"),
            .unregisteredTag(deviceId: "D-1", model: "M", uid: "04", boundTo: nil),
            .repeated(deviceId: "D-1", model: "M", change: .lent, userName: "Alice"),
            .repeated(deviceId: "D-1", model: "M", change: .returned, userName: "Alice"),
        ]
        for outcome in outcomes {
            #expect(outcome.message.count > 10, "\(outcome.kind)")
        }
        #expect(Set(outcomes.map(\.kind)).count == 12)
    }
}

@Suite("Identification order (device-tag.md)")
struct IdentificationTests {
    let record = DeviceRecord(device: device("D-1"))
    let other = DeviceRecord(device: device("D-2"))

    @Test func deviceRecordOnItsRegisteredTag() {
        let tap = tap("04:11:22:33", deviceOnTag: "D-1")
        #expect(tap.uid.hex == "04112233", "the UID is canonical from the edge on")
        #expect(TapIdentification.identify(tap, deviceOnTag: record, uidBinding: .device(record)) == .device(record))
    }

    /// Anyone can write a device record on a tag: only the UID bound at registration proves it.
    @Test func deviceRecordOnAnUnboundUIDIsAnUnregisteredTag() {
        let tap = tap("04112233445566", deviceOnTag: "D-1")
        #expect(TapIdentification.identify(tap, deviceOnTag: record, uidBinding: nil) ==
            .unregisteredTag(record, uid: "04112233445566", boundTo: nil))
    }

    @Test func deviceRecordOnAUIDBoundElsewhereIsAnUnregisteredTag() {
        let tap = tap("04A1B2C3", deviceOnTag: "D-1")
        #expect(TapIdentification.identify(tap, deviceOnTag: record, uidBinding: .device(other)) ==
            .unregisteredTag(record, uid: "04A1B2C3", boundTo: "device D-2"))
        #expect(TapIdentification.identify(tap, deviceOnTag: record, uidBinding: .badge(aliceBadge, alice)) ==
            .unregisteredTag(record, uid: "04A1B2C3", boundTo: "a badge of U-1"))
    }

    @Test func unregisteredTagMessageSaysRefusedAndHowToRegister() {
        let outcome = LendingRules.decide(.unregisteredTag(record, uid: "04112233445566", boundTo: nil), session: nil,
                                          now: t0, policy: policy, location: nil).outcome
        #expect(outcome.message.contains("D-1"))
        #expect(outcome.message.contains("Refused"))
        #expect(outcome.message.contains("roombridgectl tags bind 04112233445566 --device D-1"))
        let published = outcome.published(uid: "04112233445566", reader: "front", at: t0)
        #expect(published.kind == .refused && published.refusal == .unregisteredTag && published.deviceId == "D-1")
    }

    /// Every refusal reaches the wire as its own typed name (reason repeats it for older clients), and only refusals
    /// carry one: a client tells a repeat, a limit and an unregistered tag apart without reading the sentence.
    @Test func everyRefusalIsPublishedByItsOwnName() {
        let refusals: [(TapOutcome, LendingOutcome.Refusal)] = [
            (.refused(deviceId: "D-1", model: "M", status: .broken), .deviceBroken),
            (.refused(deviceId: "D-1", model: "M", status: .disposed), .deviceDisposed),
            (.repeated(deviceId: "D-1", model: "M", change: .lent, userName: "Alice"), .alreadyLent),
            (.repeated(deviceId: "D-1", model: "M", change: .returned, userName: "Alice"), .alreadyReturned),
            (.limitReached(deviceId: "D-1", model: "M", userId: "U-1", userName: "Alice", limit: 1, deviceIds: ["D-2"]), .limitReached),
            (.unregisteredTag(deviceId: "D-1", model: "M", uid: "04112233445566", boundTo: nil), .unregisteredTag),
            (.booked(deviceId: "D-1", model: "M", bookerId: "U-2", bookerName: "Ben", startsAt: t0), .booked),
            (.stocktakeRunning, .stocktake),
        ]
        #expect(Set(refusals.map(\.1)) == Set(LendingOutcome.Refusal.allCases))
        for (outcome, refusal) in refusals {
            let published = outcome.published(uid: nil, reader: "front", at: t0)
            #expect(published.kind == .refused && published.refusal == refusal && published.reason == refusal.rawValue, "\(outcome)")
        }
        let others: [TapOutcome] = [.badgeRequired(deviceId: "D-1", model: "M"), .unknownTag(uid: "04112233445566"),
                                    .unknownDevice(deviceId: "D-9", uid: "04112233445566"), .failed(reason: "disk full"),
                                    .disarmed("U-1"), .lent(deviceId: "D-1", model: "M", userId: "U-1", userName: "Alice", dueAt: nil)]
        for outcome in others {
            #expect(outcome.published(uid: nil, reader: "front", at: t0).refusal == nil, "\(outcome)")
        }
    }

    /// A lend's outcome carries the device's model and the rental's due date, so a client shows "Pixel 7 lent,
    /// due Tue 1 Dec" without asking the inventory; every outcome about a known device names its model.
    @Test func aPublishedOutcomeCarriesTheModelAndTheDueDate() {
        let due = t0.addingTimeInterval(86_400)
        let lent = TapOutcome.lent(deviceId: "D-1", model: "Pixel 7", userId: "U-1", userName: "Alice", dueAt: due)
            .published(uid: nil, reader: "front", at: t0)
        #expect(lent.model == "Pixel 7" && lent.dueAt == due)
        let open = TapOutcome.lent(deviceId: "D-1", model: "Pixel 7", userId: "U-1", userName: "Alice", dueAt: nil)
            .published(uid: nil, reader: "front", at: t0)
        #expect(open.model == "Pixel 7" && open.dueAt == nil)
        for outcome: TapOutcome in [.returned(deviceId: "D-1", model: "Pixel 7", borrowerId: "U-1", borrowerName: "Alice", returnedBy: nil),
                                    .badgeRequired(deviceId: "D-1", model: "Pixel 7"),
                                    .refused(deviceId: "D-1", model: "Pixel 7", status: .broken),
                                    .repeated(deviceId: "D-1", model: "Pixel 7", change: .lent, userName: "Alice"),
                                    .limitReached(deviceId: "D-1", model: "Pixel 7", userId: "U-1", userName: "Alice", limit: 1, deviceIds: []),
                                    .unregisteredTag(deviceId: "D-1", model: "Pixel 7", uid: "04112233445566", boundTo: nil)] {
            let published = outcome.published(uid: nil, reader: "front", at: t0)
            #expect(published.model == "Pixel 7" && published.dueAt == nil, "\(outcome)")
        }
    }

    @Test func uidBindingToADevice() {
        let tap = tap("04112233445566")
        #expect(TapIdentification.identify(tap, deviceOnTag: nil, uidBinding: .device(other)) == .device(other))
    }

    @Test func uidBindingToABadge() {
        let tap = tap("04A1B2C3")
        #expect(TapIdentification.identify(tap, deviceOnTag: nil, uidBinding: .badge(aliceBadge, alice)) == .badge(aliceBadge, alice))
    }

    @Test func unknownDeviceOnTagFallsBackToTheUID() {
        let tap = tap("04112233445566", deviceOnTag: "D-404")
        #expect(TapIdentification.identify(tap, deviceOnTag: nil, uidBinding: .device(other)) == .device(other))
        #expect(TapIdentification.identify(tap, deviceOnTag: nil, uidBinding: nil) == .unknownDevice("D-404", uid: "04112233445566"))
    }

    @Test func recordNamingAnotherDeviceThanTheLookedUpOneIsIgnored() {
        let tap = tap("04112233445566", deviceOnTag: "D-2")
        #expect(TapIdentification.identify(tap, deviceOnTag: record, uidBinding: nil) == .unknownDevice("D-2", uid: "04112233445566"))
    }

    @Test func nothingKnownIsAnUnknownTag() {
        #expect(TapIdentification.identify(tap("04AABBCC"), deviceOnTag: nil, uidBinding: nil) == .unknownTag(uid: "04AABBCC"))
    }
}

@Suite("Card identifiers")
struct CardIdentifierTests {
    @Test(arguments: [
        ("04:a1:b2:c3", BadgeKind.iso14443a, "04A1B2C3"),
        ("04 11 22 33 44 55 66", .iso14443a, "04112233445566"),
        ("04112233445566778899", .iso14443a, "04112233445566778899"),
        ("01-23-45-67-89-ab-cd-ef", .felica, "0123456789ABCDEF"),
    ])
    func accepted(_ text: String, _ kind: BadgeKind, _ expected: String) throws {
        #expect(try CardIdentifier.normalize(text, kind: kind) == expected)
    }

    @Test(arguments: [
        ("04A1B2", BadgeKind.iso14443a), ("0123456789ABCDEF", .iso14443a), ("04A1B2C3", .felica), ("zz", .felica), ("", .iso14443a),
        ("4A1B2C3", .iso14443a),
    ])
    func refused(_ text: String, _ kind: BadgeKind) {
        #expect(throws: LendingError.self) { try CardIdentifier.normalize(text, kind: kind) }
    }
}

@Suite("Errors say what to do")
struct ErrorMessageTests {
    @Test func noSuchUserPointsAtTheCLI() {
        #expect(LendingError.noSuchUser("U-17").description == "no user U-17; see roombridgectl users list")
        let error: any Error = LendingError.noSuchUser("U-17")
        #expect(error.localizedDescription == "no user U-17; see roombridgectl users list")
    }

    @Test func alreadyLentNamesTheBorrower() {
        let text = LendingError.alreadyLent("D-1", userId: "U-2", userName: "Bob", since: t0).description
        #expect(text.contains("Bob (U-2)"))
        #expect(text.contains("return it first"))
    }
}

/// A booking from a rental's due date on is allowed, also when the start came over the wire and the
/// due date back from a store: the two can differ in the last bit of a `Double` within the same
/// millisecond (a CI run refused such a booking).
@Test func aBookingFromTheDueDateIsAllowedWhateverTheLastBitOfTheTimes() throws {
    let due = StoreConventions.date(millis: 1_795_000_928_556)
    var lent = rental()
    lent.dueAt = due
    for nudge in [-3e-7, 0, 3e-7] {  // about one ulp of a Double at this magnitude
        let start = due.addingTimeInterval(nudge)
        try BookingRules.checkRental(lent, for: BookingRequest(deviceId: "D-1", userId: "U-2", startsAt: start,
                                                               endsAt: start.addingTimeInterval(3600), at: t0))
        let next = Booking(id: 1, deviceId: "D-1", model: "iPhone 15", userId: "U-2", userName: "Grace", startsAt: due,
                           endsAt: due.addingTimeInterval(3600), state: .booked, bookedAt: t0)
        try BookingRules.checkRenewal(deviceId: "D-1", dueAt: start, borrower: "U-1", next: next)
    }
    // A whole millisecond before is still refused.
    #expect(throws: LendingError.self) {
        try BookingRules.checkRental(lent, for: BookingRequest(deviceId: "D-1", userId: "U-2", startsAt: due.addingTimeInterval(-0.001),
                                                               endsAt: due.addingTimeInterval(3600), at: t0))
    }
}
