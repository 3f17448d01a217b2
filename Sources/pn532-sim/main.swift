// pn532-sim: a PN532 (HSU/UART) on a pseudo-terminal for libnfc's pn532_uart driver,
// with a control socket to place, tap and remove simulated tags.
import ArgumentParser
import Foundation
import PN532Simulator

@main
struct PN532Sim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pn532-sim",
        abstract: "Simulated PN532 NFC reader on a pty, for libnfc's pn532_uart driver.",
        subcommands: [Run.self, Ctl.self],
        defaultSubcommand: Run.self)
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the simulator until SIGINT/SIGTERM.")

    @Option(help: "Stable device path (symlink to the current /dev/pts/N).")
    var link: String = temporaryPath("pn532-sim.tty")
    @Option(help: "Control socket path.")
    var control: String = temporaryPath("pn532-sim.sock")
    @Option(help: "Tag placed at start (e.g. ntag213, ntag215:blank, isoa:01020304, felica, JSON, @file.json).")
    var tag: String?
    @Flag(help: "Add UART byte times and RF exchange times.")
    var realisticTiming = false
    @Flag(help: "Log traffic (debug).")
    var verbose = false

    func run() throws {
        let verbose = self.verbose
        let sim = PN532Simulator(options: .init(
            linkPath: link, controlSocketPath: control, realisticTiming: realisticTiming,
            log: { line in
                if verbose || !(line.contains(" << ") || line.contains(" >> ")) {
                    FileHandle.standardError.write(Data((line + "\n").utf8))
                }
            }))
        try sim.start()
        if let tag { sim.place(try TagSpec.parse(tag).makeCard()) }
        FileHandle.standardOutput.write(Data("pn532-sim ready: device=\(link) pty=\(sim.ptyPath) control=\(control)\n".utf8))
        signal(SIGINT, SIG_IGN); signal(SIGTERM, SIG_IGN)
        let sigs = [SIGINT, SIGTERM].map { sig in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { sim.stop(); Foundation.exit(0) }
            s.resume()
            return s
        }
        withExtendedLifetime(sigs) { dispatchMain() }
    }
}

struct Ctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a control command: place <spec> | tap <ms> <spec> | remove | list | dump | unplug | replug | path | status.")

    @Option(help: "Control socket path.")
    var control: String = temporaryPath("pn532-sim.sock")
    @Argument(parsing: .captureForPassthrough, help: "Command and arguments.")
    var command: [String] = []

    func run() throws {
        // The command is passed through untouched, so ArgumentParser does not see --help in it.
        if let first = command.first, ["-h", "--help", "help"].contains(first) {
            print(Self.helpMessage())
            return
        }
        guard !command.isEmpty else {
            throw ValidationError("give a command, e.g. place ntag215 (see pn532-sim ctl --help)")
        }
        let answer = try ControlClient.send(command.joined(separator: " "), socketPath: control)
        print(answer)
        if answer.hasPrefix("error") { throw ExitCode(1) }
    }
}

/// A path in the temporary directory (`$TMPDIR`, else /tmp), for the simulator's defaults.
func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent(name).path
}
