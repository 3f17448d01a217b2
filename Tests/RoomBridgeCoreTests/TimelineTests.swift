import Foundation
import Synchronization
import Testing
@testable import RoomBridgeCore

/// Today's time axis (``SystemState/timeline()``): curtain positions as they change and presence stays, in the
/// kiosk's day (Tokyo here), across the daemon's start and a midnight.
@Suite struct TimelineTests {
    static let zone = TimeZone(identifier: "Asia/Tokyo")!

    /// An instant of a Tokyo day, `day` of November 2026 at `hour`:`minute`.
    static func tokyo(_ day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: 2026, month: 11, day: day, hour: hour, minute: minute))!
    }

    static func entered(_ region: String, name: String? = nil) -> PresenceChangeEvent {
        PresenceChangeEvent(kind: .entered, region: region, userName: name)
    }

    @Test func curtainPositionsAndStaysFromTheDaemonsStart() async {
        let clock = Mutex(Self.tokyo(27, 9))
        let state = SystemState(timeZone: "Asia/Tokyo", now: { clock.withLock { $0 } })
        func at(_ hour: Int, _ minute: Int) { clock.withLock { $0 = Self.tokyo(27, hour, minute) } }
        await state.declareCurtains(["east", "west"])
        at(9, 1)
        await state.updateCurtain("east") { $0.connection = .connected; $0.position = 0 }
        await state.updateCurtain("east") { $0.motion = .opening }  // no new position: no new point
        at(9, 2)
        await state.updateCurtain("east") { $0.position = 50 }
        at(9, 3)
        await state.updateCurtain("east") { $0.position = 100; $0.motion = .idle }
        at(10, 0)
        await state.updatePresence(PresenceState(status: .scanning), change: Self.entered("alice", name: "Aiko Tanaka"))
        await state.updatePresence(PresenceState(status: .scanning), change: Self.entered("alice"))  // already in
        at(11, 0)
        await state.updatePresence(PresenceState(status: .scanning), change: PresenceChangeEvent(kind: .exited, region: "alice"))
        at(12, 0)
        await state.updatePresence(PresenceState(status: .scanning), change: Self.entered("alice", name: "Aiko Tanaka"))
        await state.updatePresence(PresenceState(status: .scanning), change: Self.entered("kit"))
        at(13, 0)
        // Scanning stopped: nobody can tell who is still there, so every open stay ends.
        await state.updatePresence(PresenceState(status: .unavailable), change: PresenceChangeEvent(kind: .status, status: .unavailable))
        at(14, 0)
        let t = await state.timeline()
        #expect(t.from == Self.tokyo(27, 9), "the daemon started after midnight: the axis starts then")
        #expect(t.until == Self.tokyo(27, 14) && t.timeZone == "Asia/Tokyo")
        #expect(t.curtains.map(\.id) == ["east", "west"])
        #expect(t.curtains[0].points == [.init(at: Self.tokyo(27, 9, 1), position: 0), .init(at: Self.tokyo(27, 9, 2), position: 50),
                                         .init(at: Self.tokyo(27, 9, 3), position: 100)])
        #expect(t.curtains[1].points.isEmpty, "west never reported a position")
        #expect(t.presence.map(\.region) == ["alice", "kit"])
        #expect(t.presence[0].label == "Aiko Tanaka" && t.presence[1].label == "kit")
        #expect(t.presence[0].stays == [.init(from: Self.tokyo(27, 10), until: Self.tokyo(27, 11)),
                                        .init(from: Self.tokyo(27, 12), until: Self.tokyo(27, 13))])
        #expect(t.presence[1].stays == [.init(from: Self.tokyo(27, 12), until: Self.tokyo(27, 13))])
    }

    /// At the kiosk's midnight yesterday goes: today starts with the position the curtain had then, and a stay
    /// still open then starts at midnight; a stay that ended before it is gone.
    @Test func midnightStartsTheNextDayWithWhatStillHolds() async {
        let clock = Mutex(Self.tokyo(26, 20))
        let state = SystemState(timeZone: "Asia/Tokyo", now: { clock.withLock { $0 } })
        await state.declareCurtains(["east"])
        await state.updateCurtain("east") { $0.connection = .connected; $0.position = 100 }
        clock.withLock { $0 = Self.tokyo(26, 22) }
        await state.updateCurtain("east") { $0.position = 0 }
        await state.updatePresence(PresenceState(status: .scanning), change: Self.entered("kit"))
        await state.updatePresence(PresenceState(status: .scanning), change: PresenceChangeEvent(kind: .exited, region: "kit"))
        await state.updatePresence(PresenceState(status: .scanning), change: Self.entered("alice"))
        clock.withLock { $0 = Self.tokyo(27, 8) }
        await state.updatePresence(PresenceState(status: .scanning), change: PresenceChangeEvent(kind: .exited, region: "alice"))
        clock.withLock { $0 = Self.tokyo(27, 9) }
        let t = await state.timeline()
        let midnight = Self.tokyo(27, 0)
        #expect(t.from == midnight)
        #expect(t.curtains[0].points == [.init(at: midnight, position: 0)], "the position at midnight, and no move since")
        #expect(t.presence.map(\.region) == ["alice"], "kit left yesterday")
        #expect(t.presence[0].stays == [.init(from: midnight, until: Self.tokyo(27, 8))])
        // A whole quiet day later, only the positions at that midnight remain.
        clock.withLock { $0 = Self.tokyo(28, 12) }
        let next = await state.timeline()
        #expect(next.from == Self.tokyo(28, 0) && next.curtains[0].points == [.init(at: Self.tokyo(28, 0), position: 0)])
        #expect(next.presence.isEmpty)
    }
}
