import Testing
import CurtainProtocol
@testable import BlueZClient

@Suite struct ErrorClassTests {
    @Test(arguments: [
        ("org.bluez.Error.Failed", "le-connection-abort-by-local", BlueZErrorClass.transient),
        ("org.bluez.Error.Failed", "br-connection-canceled", .transient),
        ("org.bluez.Error.InProgress", "In Progress", .transient),
        ("org.bluez.Error.InProgress", "Operation already in progress", .transient),
        ("org.bluez.Error.Failed", "Operation already in progress", .transient),
        ("org.bluez.Error.Failed", "Not connected", .transient),
        ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .transient),
        ("org.bluez.Error.NotReady", "Resource Not Ready", .adapterNotReady),
        ("org.bluez.Error.Failed", "le-connection-adapter-not-powered", .adapterNotReady),
        ("org.freedesktop.DBus.Error.UnknownObject", "Method \"Connect\" … doesn't exist", .deviceMissing),
        ("org.bluez.Error.DoesNotExist", "Does Not Exist", .deviceMissing),
        ("org.bluez.Error.NotPermitted", "Write not permitted", .permanent),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x13", .permanent),
    ])
    func classifies(name: String, message: String, expected: BlueZErrorClass) {
        #expect(BlueZErrorClass(name: name, message: message) == expected)
    }
}

@Suite struct SnapshotTests {
    @Test func adoptsFramesFromTheDevice() {
        var snap = CurtainSnapshot()
        for e in CurtainSnapshot.events(fromStatusValue: [0x81, 1, 20, 100, 1]) { snap.apply(e) }
        #expect(snap.status == CurtainStatus(motion: .opening, position: 20, target: 100, manual: true))
        for e in CurtainSnapshot.events(fromStatusValue: [0x82, 1, 7, 0, 0, 0]) { snap.apply(e) }
        #expect(snap.schedule?.openEnabled == true && snap.schedule?.openTime.description == "07:00")
        #expect(snap.schedule?.closeEnabled == false)
        let changed = snap.apply(.schedule(snap.schedule!))
        #expect(!changed)
    }

    @Test func errorFramesAndMalformedFrames() {
        #expect(CurtainSnapshot.events(fromStatusValue: [0x83, 4, 3]) == [.deviceError(opcode: 4, code: .outOfRange)])
        let bad = CurtainSnapshot.events(fromStatusValue: [0x81, 9])
        guard case .error(let e)? = bad.first else { Issue.record("expected an error event"); return }
        #expect(e.description.contains("malformed"))
        var snap = CurtainSnapshot()
        snap.apply(bad[0])
        #expect(snap.status == nil)
        #expect(snap.lastError == e)
    }

    @Test func connectionAndAdapter() {
        var snap = CurtainSnapshot()
        let a = snap.apply(.adapter(.poweredOff(path: "/org/bluez/hci0")))
        let b = snap.apply(.connection(.searching, detail: nil))
        let c = snap.apply(.connection(.searching, detail: "again"))
        #expect(a && b && !c)
        #expect(snap.connection == .searching)
        #expect(BluetoothAdapterState.poweredOff(path: "/org/bluez/hci0").description.contains("power it on"))
    }
}

import RoomBridgeCore

@Suite struct SystemStateMappingTests {
    @Test func appliesEvents() throws {
        var state = RoomBridgeCore.CurtainState()
        state.apply(.connection(.searching, detail: nil))
        #expect(state.connection == .searching)
        state.apply(.device(address: "C4:7C:8D:6A:3E:21", name: "Curtain-Living"))
        state.apply(.status(CurtainProtocol.CurtainStatus(motion: .closing, position: 70, target: 0, manual: true)))
        #expect(state.motion == .closing && state.position == 70 && state.target == 0 && state.manual && !state.scheduled)
        #expect(state.manualOperationActive)
        let s = CurtainSchedule(openTime: try CurtainTime(hour: 6, minute: 30), openEnabled: true,
                                closeTime: try CurtainTime(hour: 22, minute: 5), closeEnabled: false)
        state.apply(.schedule(s))
        #expect(state.openSchedule?.time.description == "06:30" && state.openSchedule?.enabled == true)
        #expect(state.closeSchedule?.time.description == "22:05" && state.closeSchedule?.enabled == false)
        state.apply(.adapter(.poweredOff(path: "/org/bluez/hci0")))
        #expect(state.lastError?.contains("powered off") == true)
        state.apply(.error(.manualOperationActive))
        #expect(state.lastError?.contains("manual operation in progress") == true)
        state.apply(.connection(.connected, detail: nil))
        #expect(state.connection == .connected && state.address == "C4:7C:8D:6A:3E:21")
    }
}

@Suite struct NotifyRecoveryTests {
    @Test func escalatesFromTheConfiguredMethodToStartNotifyToANewLink() {
        let acquire = (1...4).map { CurtainClient.NotifyRecovery.after(faults: $0, configured: .acquireNotify) }
        #expect(acquire == [.subscribeAgain(.acquireNotify), .subscribeAgain(.startNotify), .reconnect, .reconnect])
        let start = (1...3).map { CurtainClient.NotifyRecovery.after(faults: $0, configured: .startNotify) }
        #expect(start == [.subscribeAgain(.startNotify), .reconnect, .reconnect])
        // Before any fault: the configured method.
        #expect(CurtainClient.NotifyRecovery.after(faults: 0, configured: .acquireNotify) == .subscribeAgain(.acquireNotify))
    }
}
