import Glibc
import RoomBridgeCLI
import RoomBridgeDaemon
import WebFront

// The package's one program: roombridged, roombridgectl and roombridge-web in one executable,
// installed once and linked under the three names (as busybox and systemd's tools are). It
// runs as the name it was started by; `roombridge NAME ARGS…` runs NAME too. One copy of the
// Swift runtime, Foundation and ICU, SwiftNIO and BoringSSL instead of three (docs/benchmarks.md,
// "Package size").
let arguments = CommandLine.arguments
let invokedAs = arguments.first.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? ""

enum Program: String, CaseIterable {
    case roombridged, roombridgectl, roombridgeWeb = "roombridge-web"
}

func start(_ program: Program, arguments: [String]) async -> Never {
    switch program {
    case .roombridged:
        await Daemon.main(arguments: arguments)
    case .roombridgectl:
        await RoomBridgeCtl.main(arguments)
        exit(0)
    case .roombridgeWeb:
        await RoomBridgeWeb.main(arguments)
        exit(0)
    }
}

if let program = Program(rawValue: invokedAs) {
    await start(program, arguments: Array(arguments.dropFirst()))
} else if arguments.count > 1, let program = Program(rawValue: arguments[1]) {
    await start(program, arguments: Array(arguments.dropFirst(2)))
} else {
    let names = Program.allCases.map(\.rawValue).joined(separator: ", ")
    let usage = "roombridge: run as one of \(names) (a link to this program of that name), "
        + "or as roombridge NAME [ARGUMENTS…]\n"
    _ = usage.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
    exit(64)  // EX_USAGE
}
