import Foundation
import Testing
import TestSupport
import JSON
@testable import WebFront
import struct RoomBridgeCore.LendingOutcome
import RoomBridgeCore
import Presence

private let tokyo = TimeZone(identifier: "Asia/Tokyo")!

private func outcome(_ kind: LendingOutcome.Kind, device: String? = "D-0042", user: String? = "Alice",
                     refusal: LendingOutcome.Refusal? = nil) -> LendingOutcome {
    LendingOutcome(kind: kind, refusal: refusal, deviceId: device, userId: "U-1", userName: user, uid: "04112233445566",
                   message: "daemon text", at: Date(timeIntervalSince1970: 1_795_150_800))
}

@Suite struct CatalogueTests {
    @Test func everyLanguageHasEveryKey() {
        let english = Set(MessagesEN.catalogue.keys)
        for language in Language.allCases {
            let keys = Set(language.catalogue.keys)
            #expect(keys == english, "\(language): missing \(english.subtracting(keys).sorted()), extra \(keys.subtracting(english).sorted())")
        }
    }

    @Test func japaneseKeepsEveryPlaceholder() {
        let placeholder = /\{[a-z]+\}/
        for (key, english) in MessagesEN.catalogue {
            let ja = MessagesJA.catalogue[key] ?? ""
            #expect(Set(english.matches(of: placeholder).map { String($0.output) }) == Set(ja.matches(of: placeholder).map { String($0.output) }),
                    "placeholders of \(key)")
        }
    }

    @Test func acceptLanguagePicksTheBestLanguageWeHave() {
        #expect(Language.preferred(acceptLanguage: nil) == .en)
        #expect(Language.preferred(acceptLanguage: "ja-JP,ja;q=0.9,en;q=0.8") == .ja)
        #expect(Language.preferred(acceptLanguage: "fr-FR, en;q=0.5, ja;q=0.7") == .ja)
        #expect(Language.preferred(acceptLanguage: "en-US,en;q=0.9,ja;q=0.1") == .en)
        #expect(Language.preferred(acceptLanguage: "de, ja;q=0") == .en)
    }
}

@Suite struct KioskViewTests {
    let en = Localizer(language: .en, timeZone: tokyo)
    let ja = Localizer(language: .ja, timeZone: tokyo)

    @Test func lentShowsModelUserAndDueDayInTheKiosksTimeZone() {
        // 2026-12-01T16:00Z is already Wednesday 2 December in Tokyo.
        let facts = OutcomeFacts(model: "Pixel 7", dueAt: WireTime.parse("2026-12-01T16:00:00Z"))
        let m = KioskView.message(for: outcome(.lent), facts: facts, en)
        #expect(m.tone == .success)
        #expect(m.headline == "Lent Pixel 7 (D-0042) to Alice — due Wed 2 Dec")
        let j = KioskView.message(for: outcome(.lent), facts: facts, ja)
        #expect(j.headline.contains("Pixel 7（D-0042）を Alice さんに貸し出しました"))
        #expect(j.headline.contains("12月2日"))
    }

    @Test func refusalsAreRedAndSayWhy() {
        #expect(KioskView.message(for: outcome(.unknownTag, device: nil), facts: .init(), en).headline == "Unknown tag — ask an admin")
        #expect(KioskView.message(for: outcome(.unknownDevice), facts: .init(), en).headline == "Not registered")
        let broken = KioskView.message(for: outcome(.refused, refusal: .deviceBroken), facts: .init(), ja)
        #expect(broken.tone == .refusal && broken.headline == "D-0042 は故障中のため貸し出せません")
        #expect(KioskView.message(for: outcome(.failed), facts: .init(), en).tone == .refusal)
    }

    @Test func theDesksRefusalsSayWhatHappened() {
        let again = KioskView.message(for: outcome(.refused, refusal: .alreadyLent), facts: .init(), en)
        #expect(again.tone == .info && again.headline == "D-0042 is already lent to Alice — nothing changed")
        #expect(KioskView.message(for: outcome(.refused, refusal: .alreadyReturned), facts: .init(), ja).headline
                == "D-0042 はすでに返却済みです — 変更はありません")
        #expect(KioskView.message(for: outcome(.refused, refusal: .limitReached), facts: .init(), en).headline
                == "Alice has as many devices as allowed — return one first")
        let unregistered = KioskView.message(for: outcome(.refused, refusal: .unregisteredTag), facts: .init(), en)
        #expect(unregistered.headline == "Tag not registered" && unregistered.detail?.contains("D-0042") == true)
    }

    @Test func armedCountsDownToTheSessionsEnd() {
        let m = KioskView.message(for: outcome(.armed), facts: OutcomeFacts(sessionExpiresAt: "2026-11-24T05:00:25Z"), en)
        #expect(m.headline == "Badge accepted: Alice, now tap a device ({seconds} s)")
        #expect(m.countdownUntil == "2026-11-24T05:00:25Z")
    }

    /// The kiosk after a quiet minute (issue 32): the session's end could not be read, so the
    /// page has nothing to count down to and must not be handed `{seconds}`.
    @Test func armedWithoutTheSessionsEndSaysItWithoutACountdown() {
        let m = KioskView.message(for: outcome(.armed), facts: OutcomeFacts(), en)
        #expect(m.headline == "Badge accepted: Alice, now tap a device")
        #expect(m.countdownUntil == nil)
        #expect(KioskView.message(for: outcome(.armed), facts: OutcomeFacts(), ja).headline == "社員証を確認しました: Alice さん、端末をタッチしてください")
    }

    /// No outcome, with or without its facts, in either language, leaves a placeholder on the
    /// screen: the only one allowed is `{seconds}`, and only with a time for the page to count to.
    @Test func noMessageCarriesAPlaceholder() {
        let kinds = LendingOutcome.Kind.allCases
        let refusals: [LendingOutcome.Refusal?] = [nil] + LendingOutcome.Refusal.allCases
        let facts = [OutcomeFacts(), OutcomeFacts(model: "Pixel 7", dueAt: WireTime.parse("2026-12-01T16:00:00Z"), sessionExpiresAt: "2026-11-24T05:00:25Z")]
        let placeholder = /\{[a-zA-Z]+\}/
        for l in [en, ja] {
            for kind in kinds {
                for refusal in refusals {
                    for f in facts {
                        for o in [outcome(kind, refusal: refusal), outcome(kind, device: nil, user: nil, refusal: refusal)] {
                            let m = KioskView.message(for: o, facts: f, l)
                            let left = Set((m.headline + (m.detail ?? "")).matches(of: placeholder).map { String($0.output) })
                            #expect(left.isEmpty || (left == ["{seconds}"] && m.countdownUntil != nil), "\(kind) \(refusal?.rawValue ?? "-"): \(m.headline)")
                        }
                    }
                }
            }
        }
    }

    @Test func curtainCornerOnlyWhenOneIsConfigured() {
        #expect(KioskView.curtain(CurtainState(connection: .disabled, motion: .idle), en) == nil)
        #expect(KioskView.curtain(CurtainState(connection: .connected, motion: .idle, position: 100), en) == "Curtain: open")
        #expect(KioskView.curtain(CurtainState(connection: .connected, motion: .idle, position: 40), ja) == "カーテン: 40% 開")
        let manual = KioskView.curtain(CurtainState(connection: .connected, motion: .closing, manual: true), en)
        #expect(manual == "Curtain: closing — someone is at the wall switch")
    }
}

@Suite struct CurtainViewTests {
    let en = Localizer(language: .en, timeZone: tokyo)
    let ja = Localizer(language: .ja, timeZone: tokyo)

    @Test func noPanelWithoutACurtain() {
        #expect(CurtainView.live(CurtainState(connection: .disabled, motion: .idle), en) == nil)
    }

    @Test func movingShowsPositionMotionAndTarget() throws {
        let live = try #require(CurtainView.live(CurtainState(connection: .connected, motion: .opening, position: 40, target: 100), en))
        #expect(live.positionText == "40% open — opening (to 100%)")
        #expect(live.status == "Connected")
        #expect(live.usable && !live.lockedOut)
    }

    /// The wall switch: a manual motion locks the motion buttons until it stops.
    @Test func wallSwitchLocksTheButtonsUntilTheMotionStops() throws {
        let moving = try #require(CurtainView.live(CurtainState(connection: .connected, motion: .opening, position: 10, manual: true), ja))
        #expect(moving.lockedOut && !moving.usable)
        let stopped = try #require(CurtainView.live(CurtainState(connection: .connected, motion: .idle, position: 60, manual: true), ja))
        #expect(!stopped.lockedOut && stopped.usable)
        #expect(stopped.positionText == "60% 開")
    }

    @Test func notConnectedIsNotUsableAndSaysSo() throws {
        let live = try #require(CurtainView.live(CurtainState(connection: .searching, motion: .idle, lastError: "no adapter"), en))
        #expect(!live.usable && live.status == "Searching for the curtain")
        #expect(live.lastError == "Last error: no adapter")
    }

    @Test func curtainEventsCarryThePanelState() {
        let event = WatchedEvent(Event(seq: 9, at: Date(timeIntervalSince1970: 0), payload: .curtain(CurtainState(connection: .connected, motion: .closing, position: 70, target: 0))))
        let text = KioskPage.sse(.event(event, OutcomeFacts()), en)
        #expect(text.hasPrefix("id: 9\nevent: curtain\ndata: "))
        #expect(text.contains("\"positionText\":\"70% open — closing (to 0%)\""))
        #expect(text.contains("\"text\":\"Curtain: closing\""))
    }
}

@Suite struct PresenceCornerTests {
    let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    func heard(rssi: Double) -> PresentBeacon {
        PresentBeacon(uuid: uuid.uuidString, major: 1, minor: 2, proximity: "near", distance: 1.2, rssi: rssi,
                      lastSeen: Date(timeIntervalSince1970: 1_800_000_000 + rssi))
    }
    func region(_ name: String, userId: String? = nil, userName: String? = nil) -> PresenceRegionState {
        PresenceRegionState(region: Region(name: name, uuid: uuid, userId: userId), userName: userName)
    }

    @Test func entersAndExitsFollowTheRegions() {
        let en = Localizer(language: .en, timeZone: tokyo)
        let ja = Localizer(language: .ja, timeZone: tokyo)
        let empty = PresenceState(status: .scanning, regions: [
            region("alice", userId: "U-0001", userName: "Aiko Tanaka"), region("kit"),
        ])
        #expect(KioskView.presence(empty, en) == nil)
        let here = empty.applying(PresenceChangeEvent(kind: .entered, region: "alice", beacon: heard(rssi: -60)))
            .applying(PresenceChangeEvent(kind: .entered, region: "kit", deviceModel: "Pixel 8", beacon: heard(rssi: -61)))
        // The person by name (as the daemon resolved it), the device by the model its entry carried.
        #expect(KioskView.presence(here, en) == "Here: Aiko Tanaka, Pixel 8")
        #expect(KioskView.presence(here, ja) == "在室: Aiko Tanaka、Pixel 8")
        // The exit carries the beacon as last heard (another RSSI, another time): the same beacon all the same.
        let left = here.applying(PresenceChangeEvent(kind: .exited, region: "alice", beacon: heard(rssi: -80)))
        #expect(KioskView.presence(left, en) == "Here: Pixel 8")
        let unnamed = PresenceState(status: .scanning, regions: [region("kit")])
            .applying(PresenceChangeEvent(kind: .entered, region: "kit", beacon: heard(rssi: -60)))
        #expect(KioskView.presence(unnamed, en) == "Here: kit")
        let stopped = left.applying(PresenceChangeEvent(kind: .status, status: .unavailable))
        #expect(KioskView.presence(stopped, en) == nil)
    }
}

@Suite struct SSEFrameTests {
    /// The kiosk reads a refusal by its typed `refusal`, not by `reason` (kept only for older clients).
    @Test func aRefusalFromTheWireIsShownByItsTypedName() throws {
        let wire = #"{"seq": 9, "at": "2026-11-24T05:00:00.000Z", "kind": "lending", "lending": {"kind": "refused", "#
            + #""refusal": "limitReached", "reason": "deviceBroken", "deviceId": "D-2", "userName": "Alice", "#
            + #""message": "Refused", "at": "2026-11-24T05:00:00.000Z"}}"#
        let event = WatchedEvent(try JSONValueDecoder().decode(Event.self, from: JSONValue(parsing: wire)))
        #expect(event.lending?.refusal == .limitReached)
        let m = KioskView.message(for: try #require(event.lending), facts: OutcomeFacts(), Localizer(language: .en, timeZone: tokyo))
        #expect(m.tone == .refusal && m.headline == "Alice has as many devices as allowed — return one first")
    }

    @Test func sseFramesCarryTheEventSeqAsTheirID() {
        let event = WatchedEvent(Event(seq: 7, at: Date(timeIntervalSince1970: 0), payload: .lending(outcome(.returned))))
        let text = KioskPage.sse(.event(event, OutcomeFacts()), Localizer(language: .en, timeZone: tokyo))
        #expect(text.hasPrefix("id: 7\nevent: outcome\ndata: {"))
        #expect(text.contains("\"headline\":\"Returned — thank you\""))
        #expect(text.hasSuffix("\n\n"))
        let other = WatchedEvent(Event(seq: 8, at: Date(timeIntervalSince1970: 0), payload: .tagRemoved(TagRemoval(reader: "front", uid: "04", presentMillis: 0, at: Date(timeIntervalSince1970: 0)))))
        #expect(KioskPage.sse(.event(other, OutcomeFacts()), Localizer(language: .en, timeZone: tokyo)) == "id: 8\n\n")
    }
}

@Suite struct QueryTests {
    @Test func formValuesAreDecodedAndEmptyMeansAbsent() {
        let q = Query("text=Pixel+7&group=&status=broken&x=%E3%81%82")
        #expect(q["text"] == "Pixel 7")
        #expect(q["group"] == nil)
        #expect(q["x"] == "あ")
        #expect(q.bool("status") == nil)
    }

    /// Issue 32: the web stored 23:59:00 for "due that day", the CLI 23:59:59. Both use KioskDay now.
    @Test func aDueDayEndsAtItsLastSecondInTheKiosksTimeZone() throws {
        let l = Localizer(language: .en, timeZone: tokyo)
        #expect(try DeskForms.endOfDay("2026-12-03", l) == WireTime.parse("2026-12-03T14:59:59Z"))
        #expect(throws: PageError.badDate("24.11.2026")) { try DeskForms.endOfDay("24.11.2026", l) }
    }

    @Test func htmlIsEscaped() {
        #expect(HTML.escape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
        #expect(HTML.urlComponent("D 1/é") == "D%201%2F%C3%A9")
    }
}

@Suite struct AccountTests {
    @Test func aHashedLineVerifiesOnlyItsOwnPassword() async throws {
        let line = try #require(await PasswordHash.line(name: "alice", password: "correct horse"))
        let accounts = try Accounts(text: "# admins\n\n" + line + "\n")
        #expect(await accounts.verify(name: "alice", password: "correct horse"))
        #expect(await !accounts.verify(name: "alice", password: "correct horsE"))
        #expect(await !accounts.verify(name: "bob", password: "correct horse"))
        // A fresh salt each time: the same password never gives the same line.
        #expect(await PasswordHash.line(name: "alice", password: "correct horse") != line)
    }

    @Test func aLineWithAUserIsASelfServiceAccountOfThatUser() async throws {
        let admin = try #require(await PasswordHash.line(name: "alice", password: "correct horse"))
        let own = try #require(await PasswordHash.line(name: "grace", password: "battery staple", userId: "U-0002"))
        #expect(own.hasSuffix(":user=U-0002"))
        let accounts = try Accounts(text: admin + "\n" + own + "\n")
        #expect(accounts.userId(of: "alice") == nil)
        #expect(accounts.userId(of: "grace") == "U-0002")
        #expect(await accounts.verify(name: "grace", password: "battery staple"))
        // An eighth field that is not `user=ID` is refused, not read as an admin.
        #expect(throws: Accounts.ParseError.badLine(1)) { try Accounts(text: admin + ":admin\n") }
        #expect(throws: Accounts.ParseError.badLine(1)) { try Accounts(text: admin + ":user=\n") }
    }

    @Test func aMalformedLineIsRefusedWithItsNumber() {
        #expect(throws: Accounts.ParseError.badLine(2)) { try Accounts(text: "# ok\nalice:plain:secret\n") }
        #expect(throws: Accounts.ParseError.badLine(1)) { try Accounts(text: "alice:scrypt:30:8:1:AAAA:AAAA\n") }
    }

    @Test func failedSignInsAreLimitedPerName() async {
        let sessions = Sessions()
        for _ in 0..<Sessions.maxFailures {
            #expect(await sessions.beginAttempt("alice", known: true) == .admitted)
            await sessions.endAttempt("alice", known: true, succeeded: false)
        }
        #expect(await sessions.beginAttempt("alice", known: true) == .tooManyForName)
        #expect(await sessions.beginAttempt("bob", known: true) == .admitted)
    }

    /// Issue 33: 60 simultaneous sign-ins for one name were all checked. Attempts count from
    /// the moment they start, so at most maxFailures are ever under way or failed.
    @Test func simultaneousSignInsCountAsTheyStart() async {
        let sessions = Sessions()
        var admitted = 0
        var outcomes: [Sessions.Admission] = []
        for _ in 0..<60 {
            let a = await sessions.beginAttempt("admin", known: true)
            outcomes.append(a)
            if a == .admitted { admitted += 1 }
        }
        // Two checks at once for known names; the rest are refused at once, none waits.
        #expect(admitted == Sessions.maxChecksKnown)
        #expect(outcomes.filter { $0 == .busy }.count == 60 - Sessions.maxChecksKnown)
        // Finishing them frees their places; failures accumulate to the per-name limit.
        for _ in 0..<admitted { await sessions.endAttempt("admin", known: true, succeeded: false) }
        for _ in 0..<(Sessions.maxFailures - admitted) {
            #expect(await sessions.beginAttempt("admin", known: true) == .admitted)
            await sessions.endAttempt("admin", known: true, succeeded: false)
        }
        #expect(await sessions.beginAttempt("admin", known: true) == .tooManyForName)
    }

    /// Attempts for names nobody has fill their own places, never a known admin's; one source
    /// holds at most one of them.
    @Test func unknownNamesDoNotStarveAKnownAdmin() async {
        let sessions = Sessions()
        var busy = 0
        for n in 0..<100 where await sessions.beginAttempt("eve\(n)", known: false, source: "10.0.0.\(n % 4)") == .busy { busy += 1 }
        #expect(busy == 100 - Sessions.maxChecksUnknown)
        #expect(await sessions.beginAttempt("admin", known: true, source: "10.0.0.0") == .admitted)
        let one = Sessions()
        #expect(await one.beginAttempt("eve", known: false, source: "10.0.0.9") == .admitted)
        #expect(await one.beginAttempt("mallory", known: false, source: "10.0.0.9") == .busy)
        #expect(await one.beginAttempt("mallory", known: false, source: "10.0.0.8") == .admitted)
        await one.endAttempt("eve", known: false, source: "10.0.0.9", succeeded: false)
        #expect(await one.beginAttempt("trent", known: false, source: "10.0.0.9") == .admitted)
    }

    @Test func signInGoesOnlyToAPathOfThisSite() {
        for good in ["/devices", "/devices/D-0001?x=1", "/users/U%201"] {
            #expect(AdminRoutes.sameOriginPath(good) == good)
        }
        for bad in ["//evil.example/x", "/\\127.0.0.1:8080/phish", "/\t/evil", "/%5C127.0.0.1/phish", "/%5c/x", "/%09/evil",
                    "/%2F/evil", "https://evil.example/", "evil", "/ok\nSet-Cookie: x", "/\u{0085}x", ""] {
            #expect(AdminRoutes.sameOriginPath(bad) == nil, "\(bad)")
        }
    }

    @Test func sessionsAreFoundByTheirTokenOnly() async {
        let sessions = Sessions()
        let (id, session) = await sessions.start(user: "alice")
        #expect(await sessions.session(id)?.user == "alice")
        #expect(await sessions.session(id)?.csrf == session.csrf)
        #expect(session.csrf != id && id.count >= 43)
        #expect(await sessions.session("guess") == nil)
        await sessions.end(id)
        #expect(await sessions.session(id) == nil)
    }
}

/// Several curtains: the state the hub keeps, the kiosk corner naming each, and one panel per curtain whose
/// forms name it.
@Suite struct SeveralCurtainsTests {
    let en = Localizer(language: .en, timeZone: tokyo)
    static let left = CurtainState(id: "left", connection: .connected, name: "WoCurtain", motion: .idle, position: 0)
    static let right = CurtainState(id: "right", connection: .connected, name: "WoCurtain", motion: .idle, position: 100)
    static let pair = StateSnapshot(seq: 3, startedAt: Date(timeIntervalSince1970: 0), curtain: left, curtains: [left, right])

    @Test func eventsReplaceAddAndRemoveCurtainsByID() {
        var moving = Self.right
        moving.motion = .closing
        let s = Self.pair.applying(moving)
        #expect(s.allCurtains == [Self.left, moving])
        let added = s.applying(CurtainState(id: "door", connection: .searching, motion: .idle))
        #expect(added.allCurtains.map(\.id) == ["door", "left", "right"])
        #expect(added.curtain.id == "door")  // the single field follows the first by name, as the daemon's
        let removed = added.applying(CurtainState(id: "door", connection: .disabled, motion: .idle))
        #expect(removed.allCurtains.map(\.id) == ["left", "right"])
        // A daemon that knows one curtain: its events replace it.
        let single = StateSnapshot(seq: 1, startedAt: Date(timeIntervalSince1970: 0), curtain: CurtainState(connection: .searching, motion: .idle))
        #expect(single.applying(Self.left).allCurtains == [Self.left])
        #expect(StateSnapshot(seq: 1, startedAt: Date(timeIntervalSince1970: 0), curtain: CurtainState(connection: .disabled, motion: .idle)).allCurtains.isEmpty)
    }

    @Test func theKioskCornerNamesEachCurtain() {
        var moving = Self.right
        moving.motion = .closing
        #expect(KioskView.curtains([Self.left, moving], en) == "Curtains: left closed, right closing")
        #expect(KioskView.curtains([Self.left], en) == "Curtain: closed")
        #expect(KioskView.curtains([], en) == nil)
        // A curtain event's corner text sums up every curtain; its panel state names the one that changed.
        let event = WatchedEvent(Event(seq: 4, at: Date(timeIntervalSince1970: 0), payload: .curtain(moving)))
        let text = KioskPage.sse(.event(event, OutcomeFacts(curtains: [Self.left, moving])), en)
        #expect(text.contains("\"text\":\"Curtains: left closed, right closing\""))
        #expect(text.contains("\"id\":\"right\""))
    }

    @Test func eachPanelNamesItsCurtainInEveryForm() {
        let admin = Viewer(user: "admin", csrf: "t")
        let html = CurtainPage.panel(key: "curtain-right", Self.right, en, viewer: admin, named: true)
        #expect(html.contains("id=\"curtain-right\" data-curtain=\"right\""))
        #expect(html.contains("<h2>right <small>WoCurtain</small></h2>"))
        #expect(html.contains("id=\"curtain-right-open\""))
        let forms = html.components(separatedBy: "<form ").count - 1
        #expect(forms == 6)  // reconnect, open, close, stop, move, schedule
        #expect(html.components(separatedBy: "<input type=\"hidden\" name=\"curtain\" value=\"right\">").count - 1 == forms)
        // One curtain keeps its heading: the device's name.
        #expect(CurtainPage.panel(key: "curtain", Self.left, en, viewer: admin).contains("<h2>WoCurtain</h2>"))
    }
}

@Suite struct StaticAssetTests {
    @Test func theNameCarriesTheBytesSoANewReleaseIsFetchedAnew() {
        let a = StaticAsset(name: "kiosk.js", contentType: "text/javascript", body: "let a = 1;")
        let b = StaticAsset(name: "kiosk.js", contentType: "text/javascript", body: "let a = 2;")
        #expect(a.path.hasPrefix("/static/kiosk.") && a.path.hasSuffix(".js"))
        #expect(a.path.count == "/static/kiosk..js".count + 16)
        #expect(a.path != b.path)
        #expect(a.path == StaticAsset(name: "kiosk.js", contentType: "text/javascript", body: "let a = 1;").path)
        #expect(a.plainPath == "/static/kiosk.js")
    }

    @Test func everyPageRefersToTheVersionedNames() {
        let l = Localizer(language: .en, timeZone: tokyo)
        let kiosk = KioskPage.render(l, idleSeconds: 8)
        #expect(kiosk.contains("href=\"\(Assets.site.path)\"") && kiosk.contains("src=\"\(Assets.kiosk.path)\""))
        #expect(!kiosk.contains("/static/site.css") && !kiosk.contains("/static/kiosk.js"))
    }
}

/// The HTTP API's document is made from its routes and the contract: every route names a Varlink method the
/// contract has, and the document has exactly the routes (issue 29 §1).
@Suite struct APIDocumentTests {
    @Test func everyRouteIsAMethodOfTheContractAndAnOperationOfTheDocument() throws {
        for route in APIRoute.all {
            #expect(ContractDescriptions.method(route.method) != nil, "\(route.method) is not in InterfaceIDL")
            for name in route.pathParameters {
                #expect(ContractDescriptions.method(route.method)?.method.input.contains { $0.name == route.field(of: name) } == true,
                        "\(route.path): {\(name)} fills no input of \(route.method)")
            }
        }
        guard case .object(let doc) = APIDocument.make(), case .object(let paths)? = doc["paths"] else {
            Issue.record("the document has no paths")
            return
        }
        var operations: Set<String> = []
        for (path, item) in paths {
            for verb in (item.objectValue ?? [:]).keys { operations.insert("\(verb) \(path)") }
        }
        #expect(operations == Set(APIRoute.all.map { "\($0.verb.rawValue) /api/v1\($0.path)" } + ["get /api/v1/events"]))
    }

    @Test func aQueryParameterIsReadAsItsFieldsType() throws {
        let l = Localizer(language: .en, timeZone: tokyo)
        #expect(try APIRoutes.queryValue("20", .optional(.int), name: "limit", l) == .int(20))
        #expect(try APIRoutes.queryValue("true", .optional(.bool), name: "isLent", l) == .bool(true))
        #expect(try APIRoutes.queryValue("broken", .optional(.enum(["normal", "broken"])), name: "status", l) == .string("broken"))
        #expect(throws: APIProblem.self) { try APIRoutes.queryValue("many", .int, name: "limit", l) }
        #expect(throws: APIProblem.self) { try APIRoutes.queryValue("yes", .bool, name: "isLent", l) }
        #expect(throws: APIProblem.self) { try APIRoutes.queryValue("lost", .enum(["normal", "broken"]), name: "status", l) }
    }

    /// A token bucket: the burst at once, then one per 1/perSecond seconds, each token on its own.
    @Test func theRateLimitLetsTheBurstThroughThenWaits() {
        let limit = APIRateLimit(burst: 2, perSecond: 1)
        let t0 = ContinuousClock.now
        #expect(limit.take("a", now: t0) == nil)
        #expect(limit.take("a", now: t0) == nil)
        #expect(limit.take("a", now: t0) == 1)
        #expect(limit.take("b", now: t0) == nil)
        #expect(limit.take("a", now: t0 + .milliseconds(1100)) == nil)
    }

    @Test func aTokenIsFoundByItsHashAndTheFileKeepsNoToken() throws {
        let made = APITokens.make(name: "desk-bot", scope: .write)
        #expect(!made.line.contains(made.token))
        let tokens = try APITokens(text: "# tokens\n\n" + made.line + "\n")
        #expect(tokens.token(bearer: made.token) == APITokens.Token(name: "desk-bot", scope: .write))
        #expect(tokens.token(bearer: made.token + "x") == nil)
        #expect(throws: APITokens.ParseError.badLine(1)) { try APITokens(text: "desk-bot:admin:sha256:00") }
    }
}
