import Testing
import CurtainProtocol
@testable import BlueZSimulator

private func statuses(_ frames: [CurtainMotorModel.TimedFrame]) -> [CurtainStatus] {
    frames.compactMap { if case .status(let s) = $0.frame { s } else { nil } }
}

@Suite struct MotorModelTests {
    @Test func openRisesToHundredWithPeriodicStatus() {
        var m = CurtainMotorModel(position: 0, speed: 10, statusInterval: 0.5)
        guard case .accepted(let start) = m.write([0x01], withResponse: true) else { Issue.record("refused"); return }
        #expect(statuses(start) == [CurtainStatus(motion: .opening, position: 0, target: 100)])
        let frames = m.advance(by: 20)
        let s = statuses(frames)
        // 10 s of travel at 0.5 s interval: 19 periodic frames (0.5 … 9.5) + one on arrival at 10 s.
        #expect(s.count == 20)
        #expect(s.map(\.position) == s.map(\.position).sorted())
        #expect(s.last == CurtainStatus(motion: .idle, position: 100, target: 100))
        #expect(frames.last?.time == 10)
        #expect(s.dropLast().allSatisfy { $0.motion == .opening })
        #expect(m.status == CurtainStatus(motion: .idle, position: 100, target: 100))
    }

    @Test func stopMidway() {
        var m = CurtainMotorModel(position: 0, speed: 10)
        _ = m.apply(.open)
        _ = m.advance(by: 3)
        let f = m.apply(.stop)
        #expect(statuses(f) == [CurtainStatus(motion: .idle, position: 30, target: 30)])
        #expect(m.advance(by: 10).isEmpty)
        #expect(m.position == 30)
    }

    @Test func moveToAndDirectionChange() {
        var m = CurtainMotorModel(position: 80, speed: 20)
        #expect(statuses(m.apply(.moveTo(40))) == [CurtainStatus(motion: .closing, position: 80, target: 40)])
        _ = m.advance(by: 1)
        #expect(m.position == 60)
        #expect(statuses(m.apply(.open)) == [CurtainStatus(motion: .opening, position: 60, target: 100)])
        _ = m.advance(by: 100)
        #expect(m.status == CurtainStatus(motion: .idle, position: 100, target: 100))
        _ = m.apply(.moveTo(40))
        _ = m.advance(by: 100)
        #expect(m.status == CurtainStatus(motion: .idle, position: 40, target: 40))
    }

    @Test func moveToCurrentPositionReportsIdle() {
        var m = CurtainMotorModel(position: 50)
        #expect(statuses(m.apply(.moveTo(50))) == [CurtainStatus(motion: .idle, position: 50, target: 50)])
        #expect(m.advance(by: 5).isEmpty)
    }

    @Test func wallSwitchSetsManualAndBLEClearsIt() {
        var m = CurtainMotorModel(position: 0, speed: 10)
        #expect(statuses(m.press(.open)) == [CurtainStatus(motion: .opening, position: 0, target: 100, manual: true)])
        #expect(m.status.isManualMotionActive)
        _ = m.advance(by: 2)
        // Pressing the same button again stops; MANUAL stays set while idle.
        #expect(statuses(m.press(.open)) == [CurtainStatus(motion: .idle, position: 20, target: 20, manual: true)])
        #expect(!m.status.isManualMotionActive)
        _ = m.press(.close)
        #expect(m.status == CurtainStatus(motion: .closing, position: 20, target: 0, manual: true))
        _ = m.press(.stop)
        #expect(m.status.motion == .idle && m.status.manual)
        _ = m.apply(.moveTo(60))
        #expect(m.status == CurtainStatus(motion: .opening, position: 20, target: 60))
    }

    @Test func wallSwitchWorksAndArrivesWithoutClient() {
        var m = CurtainMotorModel(position: 100, speed: 50)
        _ = m.press(.close)
        let s = statuses(m.advance(by: 10))
        #expect(s.last == CurtainStatus(motion: .idle, position: 0, target: 0, manual: true))
    }

    @Test func scheduleFiresAtTimeOfDay() throws {
        let sched = CurtainSchedule(openTime: try CurtainTime(hour: 7, minute: 0), openEnabled: true,
                                    closeTime: try CurtainTime(hour: 21, minute: 30), closeEnabled: true)
        var m = CurtainMotorModel(position: 0, schedule: sched, speed: 10, now: 6 * 3600 + 59 * 60)
        #expect(m.advance(by: 59).isEmpty)
        let f = m.advance(by: 1)
        #expect(statuses(f).first == CurtainStatus(motion: .opening, position: 0, target: 100, scheduled: true))
        #expect(f.first?.time == 25_200.0)
        _ = m.advance(by: 60)
        #expect(m.status == CurtainStatus(motion: .idle, position: 100, target: 100, scheduled: true))
        // Fast-forward across the evening close and the next morning's open.
        let day = statuses(m.advance(to: 86_400 + 7 * 3600 + 5))
        #expect(day.contains(CurtainStatus(motion: .idle, position: 0, target: 0, scheduled: true)))
        #expect(m.status.motion == .opening && m.status.scheduled)
    }

    @Test func disabledScheduleDoesNotFire() throws {
        let sched = CurtainSchedule(openTime: try CurtainTime(hour: 7, minute: 0), openEnabled: false,
                                    closeTime: try CurtainTime(hour: 8, minute: 0), closeEnabled: false)
        var m = CurtainMotorModel(position: 50, schedule: sched)
        #expect(m.advance(by: 3 * 86_400).isEmpty)
    }

    @Test func scheduleDoesNotFireWhenStartingExactlyAtItsTime() throws {
        let sched = CurtainSchedule(openTime: try CurtainTime(hour: 7, minute: 0), openEnabled: true,
                                    closeTime: .midnight, closeEnabled: false)
        var m = CurtainMotorModel(position: 0, schedule: sched, now: 7 * 3600)
        #expect(m.advance(by: 3600).isEmpty)
    }

    @Test func syncAndSubscribeSendStatusThenSchedule() {
        var m = CurtainMotorModel(position: 10)
        for frames in [m.apply(.sync), m.subscribeFrames()] {
            #expect(frames.map(\.frame) == [.status(m.status), .schedule(m.schedule)])
        }
    }

    @Test func setScheduleNotifiesSchedule() throws {
        var m = CurtainMotorModel()
        let s = CurtainSchedule(openTime: try CurtainTime(hour: 6, minute: 15), openEnabled: true,
                                closeTime: .midnight, closeEnabled: false)
        guard case .accepted(let f) = m.write([0x05, 0x01, 6, 15, 0, 0], withResponse: true) else {
            Issue.record("refused"); return
        }
        #expect(f.map(\.frame) == [.schedule(s)])
        #expect(m.schedule == s)
        #expect(m.setScheduleLocally(.disabled).map(\.frame) == [.schedule(.disabled)])
    }

    @Test(arguments: [
        ([0x04, 101] as [UInt8], UInt8(0x13), CurtainFrame.error(opcode: 4, code: .outOfRange)),
        ([0x04], 0x0D, .error(opcode: 4, code: .badLength)),
        ([0x01, 0x01], 0x0D, .error(opcode: 1, code: .badLength)),
        ([0x09], 0x80, .error(opcode: 9, code: .unknownOpcode)),
        ([], 0x0D, .error(opcode: 0, code: .badLength)),
        ([0x05, 0, 24, 0, 0, 0], 0x13, .error(opcode: 5, code: .outOfRange)),
    ])
    func badWrites(bytes: [UInt8], att: UInt8, frame: CurtainFrame) {
        var m = CurtainMotorModel(position: 20)
        #expect(m.write(bytes, withResponse: true) == .attError(att))
        #expect(m.write(bytes, withResponse: false) == .errorFrame(.init(time: 0, frame: frame)))
        #expect(m.status == CurtainStatus(motion: .idle, position: 20, target: 20))
    }

    @Test func advancingBackwardsDoesNothing() {
        var m = CurtainMotorModel(position: 0, now: 100)
        _ = m.apply(.open)
        #expect(m.advance(to: 50).isEmpty)
        #expect(m.now == 100)
    }
}
