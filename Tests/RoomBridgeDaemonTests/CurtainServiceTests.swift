import CurtainProtocol
import RoomBridgeCore
import RoomBridgeInterfaces
import Synchronization
import Testing
import TestSupport
@testable import RoomBridgeDaemon

@Suite struct CurtainServiceTests {
    @Test func clientErrorsMapToInterfaceReasons() {
        #expect(CurtainController.map(.manualOperationActive).reason == .manualOperationActive)
        #expect(CurtainController.map(.notConnected).reason == .notConnected)
        #expect(CurtainController.map(.invalidCommand(.positionOutOfRange(120))).reason == .invalidParameter)
        #expect(CurtainController.map(.invalidCommand(.positionOutOfRange(120))).message.contains("0 (closed) to 100"))
        #expect(CurtainController.map(.rejectedByDevice(.outOfRange)).reason == .rejectedByDevice)
        #expect(CurtainController.map(.busy("x")).reason == .bluetoothFailed)
        #expect(CurtainController.map(.bluetoothServiceUnavailable).message.contains("systemctl start bluetooth"))
    }

    @Test func withoutAClientCommandsFailAtOnceWithTheReason() async {
        let state = SystemState(curtain: CurtainState(connection: .disconnected, lastError: "cannot connect to the D-Bus system bus"))
        let controller = CurtainController(state: state)
        do {
            try await controller.perform(.open)
            Issue.record("OPEN accepted without a client")
        } catch {
            #expect(error.reason == .notConnected)
            #expect(error.message.contains("D-Bus system bus"))
        }
        // Reconnect is what the service already does between bus connections.
        await #expect(throws: Never.self) { try await controller.perform(.reconnect) }
    }

    @Test func abandoningOnCancelReturnsWhenCancelledAndPassesResults() async throws {
        #expect(try await abandoningOnCancel { 42 } == 42)
        await #expect(throws: CurtainError.self) {
            try await abandoningOnCancel { () async throws -> Int in throw CurtainError.notConnected }
        }
        // An operation that ignores cancellation (like libdbus connecting) does not hold the caller.
        let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let waiter = Task {
            try await abandoningOnCancel { () async -> Int in
                await withCheckedContinuation { c in release.withLock { $0 = c } }
                return 1
            }
        }
        try await eventually("the operation is running") { release.withLock { $0 != nil } }
        waiter.cancel()
        let result = await waiter.result
        #expect(throws: CancellationError.self) { try result.get() }
        release.withLock { $0?.resume() }
    }

    @Test func backoffDelaysAreFormattedForPeople() {
        #expect(CurtainService.format(.seconds(30)) == "30 s")
        #expect(CurtainService.format(.milliseconds(500)) == "0.5 s")
    }
}
