// roombridge-bench's second peer for the daemon's idle memory: the same waiting program, but
// importing full Foundation, which links libFoundation, FoundationInternationalization and ICU
// (as any dependency importing Foundation, such as GRDB, makes the daemon do).
import Foundation

let text = "ready \(Date().timeIntervalSince1970 > 0) \(ProcessInfo.processInfo.environment.count)\n"
_ = text.withCString { write(1, $0, strlen($0)) }
while true { pause() }
