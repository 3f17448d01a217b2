import Foundation
import RoomBridgeConfig
import RoomBridgeCore
import Varlink
import VarlinkNIO

/// One diagnostic result: what was checked, how it went, and — when it did not go well — the
/// one-line fix.
public struct Finding: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable {
        case ok, warning, failed, skipped
    }
    /// `config`, `socket`, `reader`, `bluetooth` or `database`.
    public var area: String
    public var check: String
    public var status: Status
    public var detail: String
    /// What to do about it (absent when ok).
    public var fix: String?

    public init(_ area: String, _ check: String, _ status: Status, _ detail: String, fix: String? = nil) {
        self.area = area
        self.check = check
        self.status = status
        self.detail = detail
        self.fix = fix
    }
}

/// A source of findings. Adapters contribute probes (libnfc, BlueZ, the store) through
/// ``Doctor/init(configPath:socketPath:probes:)`` so this module needs none of their C libraries.
public protocol DoctorProbe: Sendable {
    func run(config: DaemonConfig?, host: HostFacts) async -> [Finding]
}

/// `roombridgectl doctor`: checks every problem an admin can hit, each with a fix.
public struct Doctor: Sendable {
    public let configPath: String
    public let socketPath: String?
    public let probes: [any DoctorProbe]
    public let host: HostFacts

    /// - Parameters:
    ///   - socketPath: overrides the socket path from the configuration.
    ///   - probes: checks contributed by the adapters, run after the built-in ones.
    public init(configPath: String, socketPath: String?, probes: [any DoctorProbe] = [], host: HostFacts = HostFacts()) {
        self.configPath = configPath
        self.socketPath = socketPath
        self.probes = probes
        self.host = host
    }

    /// Asks the running daemon when it answers (its configuration, database, readers and curtain);
    /// checks this host (configuration file, tty, kernel, D-Bus policy, the probes) only when it
    /// does not.
    public func run() async -> [Finding] {
        var findings: [Finding] = []
        var configFindings: [Finding] = []
        let config = checkConfig(&configFindings)
        let path = socketPath ?? config?[.socketPath] ?? "/run/roombridge/roombridge.sock"
        switch await RunningDaemon.ask(path) {
        case .success(let daemon):
            findings = daemon.findings
            // The file on disk matters at the next start even while the daemon runs with another copy.
            findings += configFindings.filter { $0.status == .failed }
        case .failure(let failure):
            findings = configFindings + [failure.finding]
            if let config {
                findings += ReaderChecks(host: host).run(config: config)
            }
            findings += BluetoothChecks(host: host).run(config: config)
            for probe in probes {
                findings += await probe.run(config: config, host: host)
            }
        }
        // Group by area in a fixed order; within an area keep the order the checks ran in.
        let order = ["config", "socket", "reader", "bluetooth", "database"]
        return findings.enumerated().sorted {
            let a = order.firstIndex(of: $0.element.area) ?? order.count
            let b = order.firstIndex(of: $1.element.area) ?? order.count
            return a != b ? a < b : $0.offset < $1.offset
        }.map(\.element)
    }

    private func checkConfig(_ findings: inout [Finding]) -> DaemonConfig? {
        do {
            var commandLine = DaemonCommandLine()
            commandLine.configPath = configPath
            let config = try commandLine.load()
            let exists = FileManager.default.fileExists(atPath: configPath)
            findings.append(Finding("config", "configuration parses", .ok,
                                    exists ? configPath : "\(configPath) absent: defaults in use"))
            return config
        } catch {
            findings.append(Finding("config", "configuration parses", .failed, error.message,
                                    fix: "edit \(configPath) at the line named; roombridged --help lists every key"))
            return nil
        }
    }
}

/// What the doctor needs to know about this machine; injectable for tests.
public struct HostFacts: Sendable {
    /// Root of the file system (`/` normally; a test tree in tests).
    public var root: String
    /// The service user whose access is checked.
    public var serviceUser: String

    public init(root: String = "/", serviceUser: String = "roombridge") {
        self.root = root
        self.serviceUser = serviceUser
    }

    public func path(_ p: String) -> String {
        root == "/" ? p : (root as NSString).appendingPathComponent(p)
    }

    public func exists(_ p: String) -> Bool { FileManager.default.fileExists(atPath: path(p)) }

    public func read(_ p: String) -> String? { try? String(contentsOfFile: path(p), encoding: .utf8) }

    public func list(_ p: String) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: path(p))) ?? [] }
}
