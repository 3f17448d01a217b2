import Foundation
import RoomBridgeCore
import Varlink
import VarlinkNIO

/// A roombridged that answered on its socket: its version, state and (when it reports it) what it
/// was started with. When it runs, doctor asks it rather than the host: it holds the reader, it
/// has its database open, and only it knows which configuration file it read.
public struct RunningDaemon: Sendable {
    public var socketPath: String
    public var version: String
    public var state: StateSnapshot
    /// nil when the daemon predates `io.roombridge.State.GetConfiguration`.
    public var setup: DaemonSetup?

    public init(socketPath: String, version: String, state: StateSnapshot, setup: DaemonSetup?) {
        self.socketPath = socketPath
        self.version = version
        self.state = state
        self.setup = setup
    }

    /// Asks the daemon on `path`; the socket finding that says why not when it does not answer.
    static func ask(_ path: String) async -> Result<RunningDaemon, SocketFailure> {
        let client: VarlinkClient
        do {
            client = try await VarlinkClient.connect(path: path)
        } catch {
            return .failure(SocketFailure(finding: socketFinding(path, error)))
        }
        defer { Task { await client.close() } }
        do {
            let info = try await client.call("org.varlink.service.GetInfo")
            let state = try JSONValueDecoder().decode(StateSnapshot.self,
                                                      from: try await client.call("io.roombridge.State.GetState")["state"] ?? .null)
            var setup: DaemonSetup?
            do {
                let reply = try await client.call("io.roombridge.State.GetConfiguration")
                setup = try JSONValueDecoder().decode(DaemonSetup.self, from: reply["configuration"] ?? .null)
            } catch let error as VarlinkError where error.name == VarlinkError.methodNotFoundName {
                setup = nil
            }
            return .success(RunningDaemon(socketPath: path, version: info["version"]?.stringValue ?? "?", state: state, setup: setup))
        } catch {
            return .failure(SocketFailure(finding: Finding("socket", "roombridged answers", .failed, "\(path): \(error)",
                                                           fix: "see journalctl -u roombridged")))
        }
    }

    private static func socketFinding(_ path: String, _ error: any Error) -> Finding {
        if let kind = nonSocketKind(path) {
            return Finding("socket", "roombridged answers", .failed, "\(path) is not a socket (it is \(kind))",
                           fix: "give roombridged's socket with --socket (socket.path in the configuration, default /run/roombridge/roombridge.sock)")
        }
        switch error as? VarlinkClientError {
        case .permissionDenied:
            return Finding("socket", "roombridged answers", .failed, "\(path): permission denied",
                           fix: "join the socket's group: sudo usermod -aG roombridge $USER, then log in again")
        case .socketNotFound:
            return Finding("socket", "roombridged answers", .failed, "no socket at \(path): roombridged is not running",
                           fix: "start it: sudo systemctl start roombridged; see journalctl -u roombridged (the checks below look at this host instead)")
        case .connectionRefused:
            return Finding("socket", "roombridged answers", .failed, "nothing is listening on \(path): roombridged is not running",
                           fix: "start it: sudo systemctl start roombridged; see journalctl -u roombridged (the checks below look at this host instead)")
        default:
            return Finding("socket", "roombridged answers", .failed, "\(path): \(error)", fix: "see journalctl -u roombridged")
        }
    }

    /// What the running daemon reports, as findings: its configuration, socket, readers, curtain
    /// and database. No host check: the daemon's view is the one that counts while it runs.
    public var findings: [Finding] {
        var out: [Finding] = []
        if let setup {
            out.append(Finding("config", "roombridged's configuration", .ok,
                               setup.configPath.map { "roombridged read \($0)" } ?? "roombridged read no file: defaults and command-line flags"))
        }
        if version == RoomBridgeVersion.string {
            out.append(Finding("socket", "roombridged answers", .ok, "\(socketPath), version \(version)"))
        } else {
            out.append(Finding("socket", "roombridged answers", .warning,
                               "\(socketPath): roombridged \(version), roombridgectl \(RoomBridgeVersion.string)",
                               fix: "restart the daemon after an upgrade: sudo systemctl restart roombridged"))
        }
        out += readerFindings + curtainFindings
        if let setup {
            out.append(Finding("database", "roombridged's database", .ok, "\(setup.databasePath): open, schema current (roombridged migrates it at start)"))
        } else {
            out.append(Finding("database", "roombridged's database", .skipped, "this roombridged does not report its database (older version)"))
        }
        return out
    }

    private var readerFindings: [Finding] {
        if setup?.nfcEnabled == false {
            return [Finding("reader", "NFC readers", .skipped, "nfc.enabled is false in roombridged's configuration")]
        }
        if state.readers.isEmpty {
            return [Finding("reader", "NFC readers", .warning, "roombridged has no NFC reader",
                            fix: "name the reader in nfc.readers, e.g. readers = [\"front=pn532_uart:/dev/nfc/pn532\"] in [nfc], then restart roombridged")]
        }
        return state.readers.map { r in
            r.state == .connected
                ? Finding("reader", "reader \(r.name)", .ok, "connected to \(r.connstring ?? "?") (through roombridged)")
                : Finding("reader", "reader \(r.name)", .failed, "roombridged cannot open it: \(r.lastError ?? "unknown error")",
                          fix: "check the cable and the connstring in nfc.readers; journalctl -u roombridged; with roombridged stopped, roombridgectl doctor checks the tty, its permissions and ModemManager")
        }
    }

    private var curtainFindings: [Finding] {
        guard state.curtains.count > 1 else { return curtainFindings(state.curtain, title: "curtain") }
        return state.curtains.flatMap { curtainFindings($0, title: "curtain \($0.id ?? "?")") }
    }

    private func curtainFindings(_ c: CurtainState, title: String) -> [Finding] {
        let name = c.name ?? c.address ?? (state.curtains.count > 1 ? nil : setup?.curtainAddress)
        switch c.connection {
        case .disabled:
            return [Finding("bluetooth", title, .skipped, "curtain.enabled is false in roombridged's configuration")]
        case .connected, .standby:
            return [Finding("bluetooth", title, .ok, "\(c.summary)" + (name.map { " [\($0)]" } ?? "") + " (through roombridged)")]
        case .searching, .connecting, .disconnected:
            return [Finding("bluetooth", title, .failed, "roombridged: \(c.summary)" + (name.map { " [\($0)]" } ?? ""),
                            fix: "is bluetoothd running and the curtain powered and in range? journalctl -u roombridged; with roombridged stopped, roombridgectl doctor checks Bluetooth on this host")]
        }
    }
}

/// Why the daemon did not answer, as the socket finding to report.
struct SocketFailure: Error {
    let finding: Finding
}

/// What is at `path` when it exists and is not a socket ("a regular file", …), else nil: connecting
/// to a file fails like a socket nobody listens on, which would be the wrong advice.
public func nonSocketKind(_ path: String) -> String? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    switch st.st_mode & S_IFMT {
    case S_IFSOCK: return nil
    case S_IFREG: return "a regular file"
    case S_IFDIR: return "a directory"
    case S_IFCHR: return "a character device"
    case S_IFIFO: return "a FIFO"
    default: return "something else"
    }
}
