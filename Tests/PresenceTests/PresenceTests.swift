#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Presence

private let airLocate = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
private let other = UUID(uuidString: "74278BDA-B644-4520-8F0C-720EAF059935")!

private func frame(_ uuid: UUID = airLocate, major: UInt16 = 1, minor: UInt16 = 2, tx: Int8 = -59) -> IBeaconFrame {
    IBeaconFrame(beacon: BeaconID(uuid: uuid, major: major, minor: minor), txPower: tx)
}

@Suite("iBeacon frame as BlueZ reports it in ManufacturerData[0x004C]")
struct IBeaconFrameTests {
    @Test("decodes 02 15, UUID, big-endian major and minor, signed txPower")
    func decodes() throws {
        let bytes: [UInt8] = [0x02, 0x15,
                              0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                              0x01, 0x02, 0x03, 0x04, 0xC5]
        let f = try #require(IBeaconFrame(manufacturerData: bytes))
        #expect(f.beacon.uuid == airLocate)
        #expect(f.beacon.major == 0x0102)
        #expect(f.beacon.minor == 0x0304)
        #expect(f.txPower == -59)
        #expect(f.manufacturerData == bytes)
    }

    @Test("other Apple frames and truncated data are not beacons")
    func rejects() {
        #expect(IBeaconFrame(manufacturerData: [0x10, 0x05, 0x01, 0x18, 0x44, 0x00, 0x00]) == nil)  // Nearby Info
        #expect(IBeaconFrame(manufacturerData: Array(frame().manufacturerData.dropLast())) == nil)
        var wrongLength = frame().manufacturerData
        wrongLength[1] = 0x14
        #expect(IBeaconFrame(manufacturerData: wrongLength) == nil)
    }
}

@Suite("RSSI smoothing and distance")
struct SmoothingTests {
    @Test("trims count/10 + 1 samples from each end, as AltBeacon's running average does")
    func trims() {
        var f = RSSIFilter()
        for (i, r) in [-50, -90, -60].enumerated() { f.add(r, at: .seconds(i)) }
        #expect(f.smoothed == -60)
        var g = RSSIFilter()
        for (i, r) in [-40, -41, -60, -60, -60, -60, -60, -60, -99, -100].enumerated() { g.add(r, at: .milliseconds(i)) }
        #expect(g.smoothed == -60)
        var h = RSSIFilter()
        h.add(-70, at: .zero)
        h.add(-72, at: .zero)
        #expect(h.smoothed == -71)
    }

    @Test("samples older than the window stop counting")
    func expires() {
        var f = RSSIFilter(window: .seconds(5))
        f.add(-90, at: .seconds(0))
        f.add(-50, at: .seconds(6))
        #expect(f.count == 1)
        #expect(f.smoothed == -50)
    }

    @Test("curve-fitted distance: a·ratio^b + c at and beyond 1 m, ratio^10 closer")
    func distance() throws {
        let m = DistanceModel()
        #expect(abs(try #require(m.distance(rssi: -59, txPower: -59)) - (0.42093 + 0.54992)) < 1e-9)
        #expect(abs(try #require(m.distance(rssi: -50, txPower: -59)) - pow(50.0 / 59.0, 10)) < 1e-9)
        #expect(try #require(m.distance(rssi: -80, txPower: -59)) > 3)
        #expect(m.distance(rssi: 0, txPower: -59) == nil)
    }

    @Test("proximity changes only past the boundary by the margin")
    func hysteresis() {
        let c = ProximityClassifier()
        #expect(c.plain(0.4) == .immediate && c.plain(1) == .near && c.plain(5) == .far && c.plain(nil) == .unknown)
        #expect(c.classify(3.2, current: .near) == .near)
        #expect(c.classify(3.5, current: .near) == .far)
        #expect(c.classify(2.8, current: .far) == .far)
        #expect(c.classify(2.5, current: .far) == .near)
        #expect(c.classify(0.2, current: .far) == .immediate)
        #expect(c.classify(0.55, current: .immediate) == .immediate)
        #expect(c.classify(0.6, current: .immediate) == .near)
        #expect(c.classify(0.45, current: .near) == .near)
        #expect(c.classify(0.4, current: .near) == .immediate)
        #expect(c.classify(nil, current: .near) == .unknown)
    }
}

@Suite("Region monitoring and ranging")
struct TrackerTests {
    /// The RSSI at which the model puts a -59 dBm beacon at `metres` (inverse of the far branch).
    func rssi(at metres: Double) -> Int {
        let m = DistanceModel()
        if metres < 1 { return Int((-59 * pow(metres, 0.1)).rounded()) }
        return Int((-59 * pow((metres - m.c) / m.a, 1 / m.b)).rounded())
    }

    @Test("a beacon walks in, comes close, moves away and leaves after the exit delay")
    func walk() throws {
        let region = Region(name: "desk", uuid: airLocate, userId: "alice")
        var t = PresenceTracker(regions: [region], settings: PresenceSettings(rssiWindow: .seconds(2)))
        var now = Duration.zero
        func see(_ metres: Double, times: Int = 5) -> [PresenceChange] {
            var all: [PresenceChange] = []
            for _ in 0..<times { now += .milliseconds(500); all += t.observe(frame(), rssi: rssi(at: metres), at: now) }
            return all
        }
        let enter = see(6, times: 1)
        guard case .entered(let s)? = enter.first else { Issue.record("no enter: \(enter)"); return }
        #expect(s.proximity == .far && s.region == "desk")
        #expect(see(1.5).contains { if case .proximityChanged(let s, .far) = $0 { s.proximity == .near } else { false } })
        #expect(see(0.2).contains { if case .proximityChanged(let s, .near) = $0 { s.proximity == .immediate } else { false } })
        #expect(see(8).contains { if case .proximityChanged(let s, _) = $0 { s.proximity == .far } else { false } })
        #expect(t.tick(now: now + .seconds(29)).isEmpty)
        let exit = t.tick(now: now + .seconds(30))
        guard case .exited(let gone)? = exit.first else { Issue.record("no exit: \(exit)"); return }
        #expect(gone.beacon.minor == 2)
        #expect(t.current.first?.sightings.isEmpty == true)
        #expect(t.nextDeadline == nil)
    }

    @Test("two regions, a beacon in both, and unknown UUIDs ignored")
    func regions() {
        let all = Region(name: "office", uuid: airLocate)
        let kit = Region(name: "pixel", uuid: airLocate, major: 7, minor: 42, deviceId: "D-0042")
        var t = PresenceTracker(regions: [all, kit])
        #expect(t.observe(frame(other), rssi: -60, at: .zero).isEmpty)
        let a = t.observe(frame(major: 1, minor: 1), rssi: -60, at: .zero)
        #expect(a.count == 1)
        let b = t.observe(frame(major: 7, minor: 42), rssi: -60, at: .seconds(1))
        #expect(b.count == 2)
        let current = Dictionary(uniqueKeysWithValues: t.current.map { ($0.region.name, $0.sightings.count) })
        #expect(current == ["office": 2, "pixel": 1])
        #expect(t.nextDeadline == .seconds(30))
    }

    @Test("a beacon seen again after exiting enters again")
    func reenters() {
        var t = PresenceTracker(regions: [Region(name: "desk", uuid: airLocate)],
                                settings: PresenceSettings(exitAfter: .seconds(10)))
        _ = t.observe(frame(), rssi: -60, at: .zero)
        #expect(t.tick(now: .seconds(10)).count == 1)
        let again = t.observe(frame(), rssi: -60, at: .seconds(11))
        #expect({ if case .entered = again.first { true } else { false } }())
    }
}
