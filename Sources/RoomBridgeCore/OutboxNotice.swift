#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An outbox target has been failing for longer than `outbox.failing_alert` (`failing`), or
/// accepts deliveries again after that (`failing` false): an `outbox` event.
public struct OutboxNotice: Sendable, Codable, Equatable {
    public var target: String
    public var failing: Bool
    /// When the target started failing.
    public var since: Date
    /// Why its last attempt failed (while failing).
    public var lastError: String?
    /// One sentence for a person.
    public var message: String

    public init(target: String, failing: Bool, since: Date, lastError: String?, message: String) {
        self.target = target
        self.failing = failing
        self.since = since
        self.lastError = lastError
        self.message = message
    }
}
