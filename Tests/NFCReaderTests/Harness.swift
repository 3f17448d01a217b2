import Foundation
import Logging
import NDEF
import NFCReader
import PN532Simulator
import Synchronization
import Testing

/// Parent suite: every test that opens ptys, spawns libnfc tools or counts descriptors runs
/// one at a time (the leak check counts process-wide fds and threads).
@Suite("NFC hardware boundary", .serialized)
struct NFCHardwareTests {}

/// A simulator on a pty in a private temporary directory.
final class SimHarness: @unchecked Sendable {
    let dir: String
    let sim: PN532Simulator
    var device: String { dir + "/pn532" }
    var connstring: String { "pn532_uart:" + device }

    init(realisticTiming: Bool = false, control: Bool = false) throws {
        setenv("LIBNFC_LOG_LEVEL", "0", 1)
        let template = NSTemporaryDirectory() + "/rb-nfc-XXXXXX"
        var buf = Array(template.utf8CString)
        guard mkdtemp(&buf) != nil else { throw SimulatorError.system("mkdtemp failed") }
        dir = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        sim = PN532Simulator(options: .init(linkPath: dir + "/pn532",
                                            controlSocketPath: control ? dir + "/ctl" : nil,
                                            realisticTiming: realisticTiming))
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

/// Collects the events of a stream so tests can wait for them.
final class EventLog: Sendable {
    private let events = Mutex<[ReaderEvent]>([])

    init(_ stream: AsyncStream<ReaderEvent>) {
        Task.detached { [self] in
            for await e in stream { self.events.withLock { $0.append(e) } }
        }
    }

    var all: [ReaderEvent] { events.withLock { $0 } }

    /// Waits until `count` events match, or the timeout; returns the matching events.
    @discardableResult
    func wait(for count: Int = 1, timeout: Double = 10, _ match: (ReaderEvent) -> Bool) async -> [ReaderEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let m = all.filter(match)
            if m.count >= count || Date() > deadline { return m }
            try? await Task.sleep(for: .milliseconds(5))
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

func processCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
