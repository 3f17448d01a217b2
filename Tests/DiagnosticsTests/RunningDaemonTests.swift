import Foundation
import RoomBridgeCore
import Testing
@testable import Diagnostics

/// doctor while roombridged runs: the daemon's own view, never host checks.
@Suite struct RunningDaemonTests {
    let setup = DaemonSetup(configPath: "/etc/roombridge/roombridged.toml", databasePath: "/tmp/run/roombridge.sqlite",
                            socketPath: "/tmp/run/roombridge.sock", nfcEnabled: true, nfcReaders: ["front=pn532_uart:/dev/nfc/pn532"],
                            curtainEnabled: true, curtainAddress: nil)

    func daemon(reader: ReaderConnection?, curtain: CurtainState, setup: DaemonSetup?) async -> RunningDaemon {
        let state = SystemState(curtain: curtain)
        if let reader {
            await state.updateReader(ReaderStatus(name: "front", connstring: "pn532_uart:/dev/nfc/pn532", state: reader,
                                                  lastError: reader == .disconnected ? "cannot open /dev/nfc/pn532" : nil, since: Date()))
        }
        return RunningDaemon(socketPath: "/tmp/run/roombridge.sock", version: RoomBridgeVersion.string,
                             state: await state.snapshot(), setup: setup)
    }

    @Test func aHealthyDaemonGivesOnlyOkFindingsFromItsOwnFiles() async {
        let d = await daemon(reader: .connected, curtain: CurtainState(connection: .connected, name: "Curtain-Living", position: 40),
                             setup: setup)
        let f = d.findings
        #expect(f.allSatisfy { $0.status == .ok }, "\(f)")
        #expect(Set(f.map(\.area)) == ["config", "socket", "reader", "bluetooth", "database"])
        #expect(f.first { $0.area == "config" }?.detail.contains("/etc/roombridge/roombridged.toml") == true)
        #expect(f.first { $0.area == "database" }?.detail.contains("/tmp/run/roombridge.sqlite") == true)
        #expect(f.first { $0.area == "bluetooth" }?.detail.contains("Curtain-Living") == true)
    }

    @Test func whatTheDaemonCannotReachFailsWithAFix() async {
        let d = await daemon(reader: .disconnected, curtain: CurtainState(connection: .searching), setup: setup)
        let reader = d.findings.first { $0.area == "reader" }
        let curtain = d.findings.first { $0.area == "bluetooth" }
        #expect(reader?.status == .failed && reader?.detail.contains("cannot open /dev/nfc/pn532") == true)
        #expect(curtain?.status == .failed && curtain?.fix != nil)
    }

    @Test func whatTheDaemonWasToldNotToUseIsSkipped() async {
        var off = setup
        off.nfcEnabled = false
        off.curtainEnabled = false
        let d = await daemon(reader: nil, curtain: CurtainState(connection: .disabled), setup: off)
        #expect(d.findings.filter { $0.area == "reader" || $0.area == "bluetooth" }.allSatisfy { $0.status == .skipped })
    }

    @Test func anOlderDaemonWithoutGetConfigurationStillGetsItsStateChecked() async {
        let d = await daemon(reader: .connected, curtain: CurtainState(connection: .connected), setup: nil)
        #expect(!d.findings.contains { $0.area == "config" })
        #expect(d.findings.first { $0.area == "database" }?.status == .skipped)
        #expect(d.findings.first { $0.area == "reader" }?.status == .ok)
    }
}
