import BlueZSimulator
import CurtainProtocol
import Testing
import TestSupport
@testable import BlueZClient

/// The on-demand connection policy (profile `switchbot`) against bluez-sim's SwitchBot Curtain, once with a curtain
/// that keeps advertising while connected and once with one that stops: the link is released after the hold, motion
/// is heard while connected (polls) and released (advertisements), a pull is manual and refuses remote commands, the
/// daemon's own move is never manual, and a command after the release connects again.
@Suite(.serialized) struct OnDemandClientTests {
    static func client(hold: Duration) -> CurtainClientConfiguration {
        var c = Rig.fastClient()
        c.profile = CurtainProfile.switchbot.with(hold: hold)
        c.pollInterval = .milliseconds(50)
        return c
    }

    static func switchBot(advertising: Bool) -> (inout BlueZSimulator.Configuration) -> Void {
        { config in
            config.device = .switchbot(.init())
            config.deviceName = "WoCurtain"
            config.advertisesWhileConnected = advertising
            config.disconnectDelay = .milliseconds(50)
        }
    }

    @Test(arguments: [true, false])
    func releasedAfterTheHoldThenAPullIsManualThenACommandConnects(advertising: Bool) async throws {
        try await Rig.with(Self.switchBot(advertising: advertising), client: Self.client(hold: .milliseconds(300))) { rig in
            // Connected at start for the first state, then released.
            try await rig.waitLog("connected, then released") { events in
                events.contains(.connection(.connected, detail: nil))
                    && events.last { if case .connection = $0 { true } else { false } } != .connection(.connected, detail: nil)
            }
            try await rig.wait("released") { $0.connection == .standby && $0.status != nil }
            #expect(await !rig.sim.isConnected)

            _ = try await rig.sim.handle(.press(.open))  // touch-and-go
            await rig.sim.advanceClock(by: 1)
            try await rig.wait("the pull heard as manual") { $0.status?.manual == true && $0.status?.motion == .opening }
            await #expect(throws: CurtainError.manualOperationActive) { try await rig.client.close() }
            #expect(await !rig.sim.isConnected, "a refused command connected")
            #expect(await rig.sim.deviceStatus.target == 100)

            try await rig.run(until: "the pull ends") { $0.status?.motion == .idle && $0.status?.position == 100 }
            try await rig.client.move(to: 40)
            #expect(await rig.sim.deviceStatus.target == 40)
            try await rig.run(until: "moved to 40") { $0.status?.motion == .idle && $0.status?.position == 40 }
            try await rig.wait("released again") { $0.connection == .standby }
            #expect(await !rig.sim.isConnected)
        }
    }

    /// The curtain does not advertise while connected: a pull during the hold is heard from the `57 02` polls.
    @Test func aPullWhileConnectedIsHeardByPolling() async throws {
        try await Rig.with(Self.switchBot(advertising: false), client: Self.client(hold: .seconds(30))) { rig in
            try await rig.wait("connected") { $0.connection == .connected && $0.status != nil }
            _ = try await rig.sim.handle(.press(.open))
            await rig.sim.advanceClock(by: 1)
            try await rig.wait("the pull heard as manual") { $0.status?.manual == true && $0.status?.motion == .opening }
            #expect(await rig.sim.isConnected)
            await #expect(throws: CurtainError.manualOperationActive) { try await rig.client.move(to: 10) }
        }
    }

    /// The daemon's own move outlasts the hold: released in the middle of it, and never taken for a manual one.
    @Test(arguments: [true, false])
    func ownMoveOutlastingTheHoldIsNeverManual(advertising: Bool) async throws {
        try await Rig.with(Self.switchBot(advertising: advertising), client: Self.client(hold: .milliseconds(300))) { rig in
            try await rig.wait("released") { $0.connection == .standby && $0.status != nil }
            await rig.log.clear()
            try await rig.client.open()
            await rig.sim.advanceClock(by: 1)
            try await rig.wait("released mid-move") { $0.connection == .standby }
            #expect(await rig.sim.deviceStatus.motion == .opening)
            try await rig.run(until: "opened") { $0.status?.motion == .idle && $0.status?.position == 100 }
            let statuses = await rig.log.statuses
            #expect(statuses.contains { $0.motion == .opening })
            #expect(!statuses.contains { $0.manual }, "\(statuses)")
        }
    }
}
