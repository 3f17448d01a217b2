#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import RoomBridgeDaemon

// The composition root lives in RoomBridgeDaemon; this file only hands over the process.
let status = await Daemon.run(arguments: Array(CommandLine.arguments.dropFirst()),
                              environment: ProcessInfo.processInfo.environment)
exit(status)
