#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import RoomBridgeDaemon

// A SIGHUP (reload) that arrives while the daemon is still starting must not take the default
// action (exit): ignored until the reload service traps it (it reads the configuration anyway).
signal(SIGHUP, SIG_IGN)

// The composition root lives in RoomBridgeDaemon; this file only hands over the process.
let status = await Daemon.run(arguments: Array(CommandLine.arguments.dropFirst()),
                              environment: ProcessInfo.processInfo.environment)
exit(status)
