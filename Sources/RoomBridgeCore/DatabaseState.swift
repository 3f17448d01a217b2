#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The database the daemon records lending in, and whether it answers. A PostgreSQL server can
/// go away while the daemon runs on: then every tap and change is refused (nothing is recorded)
/// until it answers again.
public struct DatabaseState: Sendable, Codable, Equatable {
    public enum Backend: String, Sendable, Codable {
        case sqlite, postgresql
    }

    public var backend: Backend
    /// Set while the database server does not answer: since when.
    public var offlineSince: Date?
    /// What failed, while offline.
    public var offlineReason: String?

    public init(backend: Backend = .sqlite, offlineSince: Date? = nil, offlineReason: String? = nil) {
        self.backend = backend
        self.offlineSince = offlineSince
        self.offlineReason = offlineReason
    }

    /// `offline since 2026-11-24T12:41:03Z`, or nil while the database answers.
    public var offlineSummary: String? {
        offlineSince.map { "offline since \($0.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0)!)))" }
    }
}
