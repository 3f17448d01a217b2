#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An armed lend session: a badge tap (or a client) named the person who borrows
/// the devices tapped next, until it expires.
public struct LendingArm: Sendable, Codable, Hashable {
    public var userId: String
    public var userName: String
    /// Which reader's badge tap armed it, or nil when a client armed it.
    public var reader: String?
    public var armedAt: Date
    public var expiresAt: Date

    public init(userId: String, userName: String, reader: String? = nil, armedAt: Date, expiresAt: Date) {
        self.userId = userId
        self.userName = userName
        self.reader = reader
        self.armedAt = armedAt
        self.expiresAt = expiresAt
    }
}

/// What happened as a result of a tap or a lending request — the feedback a person at the reader sees.
public struct LendingOutcome: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// A badge tap (or a client) armed a lend session.
        case armed
        /// The lend session ended (timeout or disarm).
        case disarmed
        /// A device was lent to the armed user.
        case lent
        /// A lent device was returned.
        case returned
        /// An available device was tapped while nobody was armed: tap a badge first.
        case badgeRequired
        /// The request was refused; `refusal` says why.
        case refused
        /// The tag is not bound to anything; an administrator can bind `uid`.
        case unknownTag
        /// The tag names a device that is not in the inventory.
        case unknownDevice
        /// The store refused or failed; nothing was recorded (`reason` says why).
        case failed
        /// During a stocktake: the device was counted as found (`reason` is `again` when it was before).
        case counted
        /// During a stocktake: a tag that is not in the inventory (`uid`) was recorded as unexpected.
        case unexpected
    }
    /// Why a `refused` outcome changed nothing, as a name a client can switch on.
    public enum Refusal: String, Sendable, Codable, CaseIterable {
        /// The device's status is broken: it cannot be lent.
        case deviceBroken
        /// The device's status is disposed: it cannot be lent.
        case deviceDisposed
        /// A repeat tap within the repeat window after a lend: nothing changed.
        case alreadyLent
        /// A repeat tap within the repeat window after a return: nothing changed.
        case alreadyReturned
        /// The armed user already has as many devices as one person may borrow.
        case limitReached
        /// A device record on a tag whose UID is not bound to that device.
        case unregisteredTag
        /// The device is booked for someone else (`bookedFor`) from `bookedFrom`, which has come or is near.
        case booked
        /// A stocktake is running: badges arm nobody and taps lend nothing until it is closed.
        case stocktake
    }
    public var kind: Kind
    /// Set with `kind == .refused`, and only then.
    public var refusal: Refusal?
    public var deviceId: String?
    /// The device's model, where the outcome names a device the inventory has.
    public var model: String?
    /// For `lent`: the rental's due date (nil: open-ended).
    public var dueAt: Date?
    public var userId: String?
    public var userName: String?
    /// For `lent`: the due date was clipped to a booking that starts then. For a `booked` refusal: when the booking starts.
    public var bookedFrom: Date?
    /// For a `booked` refusal: the booker's name (`userId` is the booker's ID).
    public var bookedFor: String?
    public var uid: TagUID?
    public var reader: String?
    /// Why `failed`; for `refused`, `refusal`'s name (kept for clients older than `refusal`, until the next release).
    public var reason: String?
    /// One sentence for the person at the reader.
    public var message: String
    public var at: Date
    /// Set when another kiosk sharing the database did it: that kiosk's lending location, or
    /// "another kiosk" when it has none. Nil for what happened here.
    public var origin: String?

    public init(kind: Kind, refusal: Refusal? = nil, deviceId: String? = nil, model: String? = nil, dueAt: Date? = nil,
                userId: String? = nil, userName: String? = nil, uid: TagUID? = nil, reader: String? = nil, reason: String? = nil,
                message: String, at: Date, origin: String? = nil) {
        self.origin = origin
        self.model = model
        self.dueAt = dueAt
        self.kind = kind
        self.refusal = refusal
        self.deviceId = deviceId
        self.userId = userId
        self.userName = userName
        self.uid = uid
        self.reader = reader
        self.reason = reason
        self.message = message
        self.at = at
    }
}

/// The open stocktake as the state shows it: the kiosk says it is counting, and how far it got.
public struct StocktakeStatus: Sendable, Codable, Equatable {
    public var id: Int64
    /// `all`, `group` or `location`, and the group's ID or the location's name.
    public var scope: String
    public var scopeValue: String?
    public var startedAt: Date
    /// Devices of the inventory counted so far, and tags tapped that are not in it.
    public var counted: Int
    public var unexpected: Int

    public init(id: Int64, scope: String, scopeValue: String?, startedAt: Date, counted: Int, unexpected: Int) {
        self.id = id
        self.scope = scope
        self.scopeValue = scopeValue
        self.startedAt = startedAt
        self.counted = counted
        self.unexpected = unexpected
    }
}

/// A stocktake started or was closed: a `stocktake` event.
public struct StocktakeNotice: Sendable, Codable, Equatable {
    public enum Change: String, Sendable, Codable, CaseIterable {
        case started, closed
    }
    public var change: Change
    public var status: StocktakeStatus
    /// One sentence for a person.
    public var message: String

    public init(change: Change, status: StocktakeStatus, message: String) {
        self.change = change
        self.status = status
        self.message = message
    }
}

/// A rental that passed its due time: announced once (per due date) as an `overdue` event.
public struct OverdueNotice: Sendable, Codable, Equatable {
    public var rentalId: Int64
    public var deviceId: String
    public var model: String
    public var userId: String
    public var userName: String
    public var dueAt: Date
    /// One sentence for a person: what is overdue, with whom, since when.
    public var message: String

    public init(rentalId: Int64, deviceId: String, model: String, userId: String, userName: String, dueAt: Date,
                message: String) {
        self.rentalId = rentalId
        self.deviceId = deviceId
        self.model = model
        self.userId = userId
        self.userName = userName
        self.dueAt = dueAt
        self.message = message
    }
}
