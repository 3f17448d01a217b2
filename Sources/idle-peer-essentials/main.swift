// roombridge-bench's peer for the daemon's idle memory: a Swift program that uses
// FoundationEssentials as the daemon's own modules do (a Date, the environment), says "ready"
// and waits to be terminated. Its resident set is the floor for a Swift service on Linux.
import FoundationEssentials
import Glibc

let line = "ready \(Date().timeIntervalSince1970 > 0) \(ProcessInfo.processInfo.environment.count)\n"
_ = line.withCString { write(1, $0, strlen($0)) }
while true { pause() }
