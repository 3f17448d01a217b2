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

/// A booking was made or cancelled: a `booking` event.
public struct BookingNotice: Sendable, Codable, Equatable {
    public enum Change: String, Sendable, Codable, CaseIterable {
        case booked, cancelled
    }
    public var change: Change
    public var bookingId: Int64
    public var deviceId: String
    public var model: String
    public var userId: String
    public var userName: String
    public var startsAt: Date
    public var endsAt: Date
    /// Who made or cancelled it (a user ID, `unix:NAME`, or `web:NAME via unix:USER`).
    public var by: String?
    /// One sentence for a person.
    public var message: String

    public init(change: Change, bookingId: Int64, deviceId: String, model: String, userId: String, userName: String,
                startsAt: Date, endsAt: Date, by: String?, message: String) {
        self.change = change
        self.bookingId = bookingId
        self.deviceId = deviceId
        self.model = model
        self.userId = userId
        self.userName = userName
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.by = by
        self.message = message
    }
}
