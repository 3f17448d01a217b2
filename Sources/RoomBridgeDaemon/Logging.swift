#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization
import VarlinkNIO

/// The daemon's log level, shared by every logger so it can change at run time.
public final class LogLevelBox: Sendable {
    private let value: Mutex<Logger.Level>
    public init(_ level: Logger.Level) { value = Mutex(level) }
    public var level: Logger.Level {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// A log handler for stderr that journald reads well.
///
/// When stderr is connected to the journal (`$JOURNAL_STREAM` names stderr's device and inode),
/// each line starts with a `<N>` syslog priority prefix (see `sd-daemon(3)`) and carries no
/// timestamp (the journal adds its own); otherwise lines carry an ISO 8601 time and the level.
public struct JournalAwareLogHandler: LogHandler {
    public var logLevel: Logger.Level {
        get { levels.level }
        set { levels.level = newValue }
    }
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let journal: Bool
    private let levels: LogLevelBox

    public init(label: String, levels: LogLevelBox, journal: Bool) {
        self.label = label
        self.levels = levels
        self.journal = journal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var line = ""
        if journal {
            line = "<\(Self.priority(event.level))>"
        } else {
            line = Self.timestamp() + " " + event.level.rawValue.uppercased() + " "
        }
        // A value a client supplied cannot start a line of its own (LogText).
        line += LogText.escaped(event.message.description)
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\(LogText.escaped($0.value.description))" }.joined(separator: " ")
        }
        line += "\n"
        // One write(2) per line keeps lines from concurrent loggers whole.
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buf in
            var offset = 0
            while offset < buf.count {
                let n = write(2, buf.baseAddress! + offset, buf.count - offset)
                if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
                offset += n
            }
        }
    }

    /// syslog priority for a level (emerg 0 … debug 7).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return utcTimestamp(seconds: Int(now.tv_sec), milliseconds: Int(now.tv_nsec) / 1_000_000)
    }

    /// ISO 8601 UTC time with milliseconds (`2026-11-24T06:48:01.465Z`), from libc's `gmtime_r`.
    ///
    /// Deliberately not `Date.formatted(.iso8601)`: that style builds a Gregorian `Calendar` in the
    /// current time zone, and in a process that links full Foundation (GRDB does) looking up the
    /// current zone loads ICU's zone tables, about 3 MiB of resident pages for the first log line.
    static func utcTimestamp(seconds: Int, milliseconds: Int) -> String {
        var time = time_t(seconds)
        var t = tm()
        gmtime_r(&time, &t)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(t.tm_year + 1900, 4))-\(pad(t.tm_mon + 1, 2))-\(pad(t.tm_mday, 2))"
            + "T\(pad(t.tm_hour, 2)):\(pad(t.tm_min, 2)):\(pad(t.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }

    /// True when `$JOURNAL_STREAM` matches stderr (fd 2).
    public static func stderrIsJournal(environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}
