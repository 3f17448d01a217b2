import Foundation
import Logging
import NDEF
import NFCReader
import PN532Simulator
import Synchronization
import Testing
import TestSupport

/// Parent suite: every test that opens ptys, spawns libnfc tools or counts descriptors runs
/// one at a time (the leak check counts process-wide fds and threads).
@Suite("NFC hardware boundary", .serialized)
struct NFCHardwareTests {}

/// A simulator on a pty in a private temporary directory.
final class SimHarness: Sendable {
    let dir: String
    let sim: PN532Simulator
    /// The commands the host (libnfc) sent, as the simulator received them.
    let host = HostCommands()
    var device: String { dir + "/pn532" }
    var connstring: String { "pn532_uart:" + device }

    init(realisticTiming: Bool = false, control: Bool = false) throws {
        setenv("LIBNFC_LOG_LEVEL", "0", 1)
        let template = NSTemporaryDirectory() + "/rb-nfc-XXXXXX"
        var buf = Array(template.utf8CString)
        guard mkdtemp(&buf) != nil else { throw SimulatorError.system("mkdtemp failed") }
        dir = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let host = host
        sim = PN532Simulator(options: .init(linkPath: dir + "/pn532",
                                            controlSocketPath: control ? dir + "/ctl" : nil,
                                            realisticTiming: realisticTiming,
                                            log: { host.record(logLine: $0) }))
        try sim.start()
    }

    deinit {
        sim.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Runs a libnfc tool against the simulator; returns (exit status, stdout).
    func runTool(_ args: [String], stdin: String = "") throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/" + args[0])
        p.arguments = Array(args.dropFirst())
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        var env = ProcessInfo.processInfo.environment
        env["LIBNFC_DEVICE"] = connstring
        env["LIBNFC_AUTO_SCAN"] = "false"
        env["LIBNFC_LOG_LEVEL"] = "0"
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        let input = Pipe()
        p.standardInput = input
        try p.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try? input.fileHandleForWriting.close()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// The PN532 command codes the host sent (`0x60` InAutoPoll, `0x40` InDataExchange, …), decoded
/// from the simulator's traffic log: how a test knows what the reader is doing, without waiting
/// for a moment.
final class HostCommands: Sendable {
    private let state = Mutex<(parser: PN532FrameParser, commands: [[UInt8]])>((PN532FrameParser(), []))

    /// Feeds one simulator log line; "pn532-sim: << <hex>" lines are bytes from the host.
    func record(logLine: String) {
        guard let range = logLine.range(of: "<< ") else { return }
        let text = Array(logLine[range.upperBound...].utf8)
        var bytes: [UInt8] = []
        var i = 0
        while i + 1 < text.count, let b = UInt8(String(decoding: text[i ... i + 1], as: UTF8.self), radix: 16) {
            bytes.append(b)
            i += 2
        }
        state.withLock { s in
            for case .command(let c) in s.parser.feed(bytes) where !c.isEmpty { s.commands.append(c) }
        }
    }

    /// All commands so far (code first, then the parameters), oldest first.
    var commands: [[UInt8]] { state.withLock { $0.commands } }
    /// All command codes so far, oldest first.
    var codes: [UInt8] { state.withLock { $0.commands.map { $0[0] } } }
    var count: Int { state.withLock { $0.commands.count } }
}

/// Collects the events of a stream so tests can wait for them.
final class EventLog: Sendable {
    private let events = Mutex<[ReaderEvent]>([])

    init(_ stream: AsyncStream<ReaderEvent>) {
        Task.detached { [self] in
            for await e in stream { self.events.withLock { $0.append(e) } }
        }
    }

    var all: [ReaderEvent] { events.withLock { $0 } }

    /// Waits until `count` events match and returns the matching events; throws (naming
    /// `what`) if they have not arrived within `timeout`.
    @discardableResult
    func wait(for count: Int = 1, _ what: String = "reader events", timeout: Duration = .seconds(20),
              _ match: (ReaderEvent) -> Bool) async throws -> [ReaderEvent] {
        try await eventually("\(count) \(what)", timeout: timeout) { () -> [ReaderEvent]? in
            let m = all.filter(match)
            return m.count >= count ? m : nil
        }
    }
}

extension ReaderEvent {
    var arrival: TagArrival? { if case .tagArrived(let a) = self { a } else { nil } }
    var isArrival: Bool { arrival != nil }
    var isRemoval: Bool { if case .tagRemoved = self { true } else { false } }
    var isConnected: Bool { if case .connected = self { true } else { false } }
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
}

/// The device record message used across tests.
func deviceMessage(_ id: String = "D-0001") throws -> [UInt8] {
    try DeviceTagRecord(deviceId: id, model: "Pixel 7", serial: "SN123").message().encoded()
}

func card(_ spec: TagSpec) throws -> SimulatedCard { try spec.makeCard() }

func openFDCount() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }
func threadCount() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1 }

let quietLogger: Logger = {
    var l = Logger(label: "test.nfc")
    l.logLevel = .error
    return l
}()
