import RoomBridgeCore
import Testing

/// A battery falling through 20, 10 and 5 %: told once per threshold, the lowest when a reading skips several, and
/// again only after it was back above 25 %.
@Suite struct BatteryWatchTests {
    @Test func oncePerThresholdGoingDown() {
        var watch = BatteryWatch()
        #expect([87, 60, 21, nil].map { watch.observe($0) } == [nil, nil, nil, nil])
        #expect(watch.observe(20) == 20)
        #expect([19, 15, 20, 22, 11].map { watch.observe($0) } == [nil, nil, nil, nil, nil], "no second notice around 20 %")
        #expect(watch.observe(10) == 10)
        #expect(watch.observe(3) == 5)
        #expect(watch.observe(1) == nil)
    }

    @Test func aSkipTellsTheLowestAndAChangedBatteryStartsOver() {
        var watch = BatteryWatch()
        #expect(watch.observe(4) == 5, "from nothing straight to 4 %: the lowest threshold only")
        #expect(watch.observe(9) == nil)
        #expect(watch.observe(25) == nil, "25 % is not clearly above 20 %")
        #expect(watch.observe(18) == nil)
        #expect(watch.observe(26) == nil)
        #expect(watch.observe(18) == 20, "a changed battery is told again")
    }

    @Test func theNoticeSaysWhichCurtain() {
        #expect(BatteryNotice(curtain: "left", battery: 12, threshold: 20).sentence == "the left curtain's battery is at 12 %")
    }
}
