#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RoomBridgeCore

/// Tunable lending rules (from the daemon's configuration).
public struct LendingPolicy: Sendable, Hashable {
    /// How long a badge tap keeps the reader armed for its user (default 30 s).
    public var armDuration: TimeInterval
    /// Default loan period; nil for open-ended loans (no due date, never overdue).
    public var defaultLoanPeriod: TimeInterval?

    /// After a device is lent or returned, a tap of the same device within this many seconds
    /// is a repeat (a double tap, a tag lifted and placed again) and changes nothing
    /// (default 5 s; 0 turns it off).
    public var repeatWindow: TimeInterval

    /// The most devices one user may have lent at a time; nil: no limit (the default).
    public var maxActivePerUser: Int?

    /// How long before a booking's start the device is kept for its booker (default an hour).
    public var bookingGuard: TimeInterval

    public init(armDuration: TimeInterval = 30, defaultLoanPeriod: TimeInterval? = nil, repeatWindow: TimeInterval = 5,
                maxActivePerUser: Int? = nil, bookingGuard: TimeInterval = BookingRules.defaultGuard) {
        self.maxActivePerUser = maxActivePerUser
        self.bookingGuard = bookingGuard
        self.armDuration = armDuration
        self.defaultLoanPeriod = defaultLoanPeriod
        self.repeatWindow = repeatWindow
    }

    /// Due date of a loan that starts at `rentedAt`.
    public func dueDate(for rentedAt: Date) -> Date? {
        defaultLoanPeriod.map { rentedAt.addingTimeInterval($0) }
    }
}

extension LendingArm {
    /// True until `expiresAt` (exclusive).
    public func isActive(at now: Date) -> Bool { now < expiresAt }

    /// Seconds left at `now` (0 once expired).
    public func remaining(at now: Date) -> TimeInterval { max(0, expiresAt.timeIntervalSince(now)) }
}

/// The last lend or return of a device, remembered for ``LendingPolicy/repeatWindow``.
public struct RecentChange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case lent, returned
    }
    public var deviceId: DeviceID
    public var kind: Kind
    /// The borrower's name.
    public var userName: String
    public var at: Date

    public init(deviceId: DeviceID, kind: Kind, userName: String, at: Date) {
        self.deviceId = deviceId
        self.kind = kind
        self.userName = userName
        self.at = at
    }

    /// True when a tap of the same device at `now` repeats this change.
    public func isRepeated(by deviceId: DeviceID, at now: Date, policy: LendingPolicy) -> Bool {
        deviceId == self.deviceId && now >= at && now.timeIntervalSince(at) < policy.repeatWindow
    }
}

/// What a tap identified, after the lookups of ``TapIdentification``.
public enum TapIdentity: Sendable, Hashable {
    /// A device in the inventory, with its active rental.
    case device(DeviceRecord)
    /// A user's badge.
    case badge(Badge, User)
    /// The tag names a device ID that is not in the inventory.
    case unknownDevice(DeviceID, uid: TagUID)
    /// The tag carries the record of a device in the inventory, but its UID is not bound to
    /// that device (`boundTo` says what it is bound to instead, if anything): a tag nobody
    /// registered, so it lends and returns nothing.
    case unregisteredTag(DeviceRecord, uid: TagUID, boundTo: String?)
    /// Nothing known: an administrator can bind the UID.
    case unknownTag(uid: TagUID)
}

/// The identification order of device-tag.md, with registration as the proof of a tag:
/// (1) a device record on the tag names a device, and the UID must be bound to that device
/// (a record anyone can write; the binding is made at registration); a record naming a device
/// that is not in the inventory falls back to the UID; (2) the UID's binding to a device or to
/// a badge; (3) unknown.
public enum TapIdentification {
    /// - Parameters:
    ///   - deviceOnTag: the inventory record of the device named by the tap's device record
    ///     (nil if absent or unknown).
    ///   - uidBinding: what the tap's UID is bound to (nil if nothing).
    public static func identify(_ tap: Tap, deviceOnTag: DeviceRecord?, uidBinding: UIDBinding?) -> TapIdentity {
        let uid = tap.uid
        if let named = tap.device?.deviceId, let deviceOnTag, deviceOnTag.device.id == named {
            switch uidBinding {
            case .device(let bound) where bound.device.id == named:
                return .device(bound)
            case .device(let other):
                return .unregisteredTag(deviceOnTag, uid: uid, boundTo: "device \(other.device.id)")
            case .badge(_, let user):
                return .unregisteredTag(deviceOnTag, uid: uid, boundTo: "a badge of \(user.id)")
            case nil:
                return .unregisteredTag(deviceOnTag, uid: uid, boundTo: nil)
            }
        }
        switch uidBinding {
        case .device(let record):
            return .device(record)
        case .badge(let badge, let user):
            return .badge(badge, user)
        case nil:
            if let id = tap.device?.deviceId { return .unknownDevice(id, uid: uid) }
            return .unknownTag(uid: uid)
        }
    }
}

/// The store operation a decision asks for.
public enum StoreOperation: Sendable, Hashable {
    case lend(LendRequest)
    case returnDevice(ReturnRequest)
}

/// What happened at the reader; ``message`` is for the person standing there.
public enum TapOutcome: Sendable, Hashable {
    /// A badge (or client) armed the reader; `replacing` is the session it took over, if any.
    case armed(LendingArm, replacing: LendingArm?)
    /// The armed session was cleared from a client.
    case disarmed(UserID?)
    /// `bookedFrom`: the due date was clipped to the start of the next person's booking.
    case lent(deviceId: DeviceID, model: String, userId: UserID, userName: String, dueAt: Date?, bookedFrom: Date? = nil)
    case returned(deviceId: DeviceID, model: String, borrowerId: UserID, borrowerName: String, returnedBy: UserID?)
    /// An available device was tapped with nobody armed: nothing recorded.
    case badgeRequired(deviceId: DeviceID, model: String)
    /// The device cannot be lent in its state (broken, disposed).
    case refused(deviceId: DeviceID, model: String, status: DeviceStatus)
    /// The tag names a device that is not in the inventory.
    case unknownDevice(deviceId: DeviceID, uid: TagUID)
    /// Unknown UID: an administrator can bind it to a device or a badge.
    case unknownTag(uid: TagUID)
    /// The device was tapped again within the repeat window after it was lent or returned
    /// (`change`); nothing changed.
    case repeated(deviceId: DeviceID, model: String, change: RecentChange.Kind, userName: String)
    /// A device record on a UID that is not bound to that device: refused, nothing recorded.
    case unregisteredTag(deviceId: DeviceID, model: String, uid: TagUID, boundTo: String?)
    /// The armed user already has as many devices as ``LendingPolicy/maxActivePerUser`` allows:
    /// refused, nothing recorded.
    case limitReached(deviceId: DeviceID, model: String, userId: UserID, userName: String, limit: Int, deviceIds: [DeviceID])
    /// The device is booked for someone else (`bookerName`) from `startsAt`, a time that has come
    /// or is within `lending.booking_guard`: refused, nothing recorded.
    case booked(deviceId: DeviceID, model: String, bookerId: UserID, bookerName: String, startsAt: Date)
    /// During a stocktake: the device was counted as found (`again`: it was before); nothing else changed.
    case counted(deviceId: DeviceID, model: String, again: Bool)
    /// During a stocktake: a tag that is not in the inventory, recorded as unexpected (`deviceId`:
    /// what its record names, if anything).
    case unexpected(uid: TagUID, deviceId: DeviceID?)
    /// A badge during a stocktake: nobody is armed, nothing is lent until it is closed.
    case stocktakeRunning
    /// The store refused or failed (e.g. lost a race with another reader); nothing changed.
    case failed(reason: String)

    /// Stable machine-readable name of the case (for Varlink/CLI).
    public var kind: String {
        switch self {
        case .armed: "armed"
        case .disarmed: "disarmed"
        case .lent: "lent"
        case .returned: "returned"
        case .badgeRequired: "badgeRequired"
        case .refused: "refused"
        case .unknownDevice: "unknownDevice"
        case .unknownTag: "unknownTag"
        case .unregisteredTag: "unregisteredTag"
        case .limitReached: "limitReached"
        case .booked: "booked"
        case .counted: "counted"
        case .unexpected: "unexpected"
        case .stocktakeRunning: "stocktake"
        case .repeated(_, _, let change, _): change == .lent ? "alreadyLent" : "alreadyReturned"
        case .failed: "failed"
        }
    }

    /// A sentence for the person at the reader.
    public var message: String {
        switch self {
        case .armed(let session, let replacing):
            let seconds = Int(session.expiresAt.timeIntervalSince(session.armedAt).rounded())
            // People's names, not IDs: "Switched from Aiko Tanaka: Hello Ben Okafor. …"
            let prefix = replacing.map { $0.userId == session.userId ? "Renewed: " : "Switched from \($0.userName): " } ?? ""
            return "\(prefix)Hello \(session.userName). Tap devices to borrow them within \(seconds) s."
        case .disarmed(let user):
            return user.map { "Lending session of \($0) ended." } ?? "No lending session was active."
        case .lent(let id, let model, _, let userName, let dueAt, let bookedFrom):
            let due = dueAt.map { "; due \(LendingFormat.iso8601($0))" } ?? ""
            let booked = bookedFrom.map { ", when it is booked from \(LendingFormat.iso8601($0))" } ?? ""
            return "\(model) (\(id)) lent to \(userName)\(due)\(booked)."
        case .returned(let id, let model, _, let borrowerName, _):
            return "\(model) (\(id)) returned. Thank you (lent to \(borrowerName))."
        case .badgeRequired(let id, let model):
            return "\(model) (\(id)) is available. Tap your badge first to borrow it."
        case .refused(let id, let model, let status):
            return "\(model) (\(id)) is \(status.rawValue) and cannot be lent; please give it to the administrator."
        case .unknownDevice(let id, let uid):
            return "Device \(id) on tag \(uid) is not in the inventory; ask the administrator to add it."
        case .unknownTag(let uid):
            return "Unknown tag \(uid); ask the administrator to register it."
        case .repeated(let id, let model, .lent, let userName):
            return "\(model) (\(id)) is already lent to \(userName); the repeated tap changed nothing."
        case .repeated(let id, let model, .returned, _):
            return "\(model) (\(id)) is already returned; the repeated tap changed nothing."
        case .unregisteredTag(let id, let model, let uid, let boundTo):
            let bound = boundTo.map { " (it is bound to \($0))" } ?? ""
            return "Refused: tag \(uid) is not registered for \(model) (\(id))\(bound), so nothing was lent or returned. "
                + "An administrator can register it with: roombridgectl tags bind \(uid) --device \(id)"
        case .limitReached(let id, let model, _, let userName, let limit, let devices):
            return "Refused: \(userName) already has \(devices.count) device\(devices.count == 1 ? "" : "s") "
                + "(\(devices.joined(separator: ", "))), the most one person may borrow at a time (\(limit)); "
                + "return one first. \(model) (\(id)) was not lent."
        case .booked(let id, let model, _, let bookerName, let startsAt):
            return "Refused: \(model) (\(id)) is booked for \(bookerName) from \(LendingFormat.iso8601(startsAt)); "
                + "it was not lent. Borrow another device."
        case .counted(let id, let model, let again):
            return again ? "\(model) (\(id)) was counted already." : "Counted \(model) (\(id))."
        case .unexpected(let uid, let id):
            let named = id.map { " (its record names \($0))" } ?? ""
            return "Tag \(uid)\(named) is not in the inventory; the stocktake notes it as unexpected."
        case .stocktakeRunning:
            return "A stocktake is running: tap devices to count them; lending resumes when it is closed."
        case .failed(let reason):
            return "Nothing was recorded: \(reason)"
        }
    }
}

/// The result of the rules for one tap.
public struct TapDecision: Sendable, Hashable {
    public var outcome: TapOutcome
    /// The store operation to perform; nil when nothing is recorded.
    public var operation: StoreOperation?
    /// The arm session after the tap (nil when none is active).
    public var session: LendingArm?

    public init(outcome: TapOutcome, operation: StoreOperation?, session: LendingArm?) {
        self.outcome = outcome
        self.operation = operation
        self.session = session
    }
}

/// The lending rules as pure functions of (tap identity, arm session, now).
public enum LendingRules {
    /// A new session for `user` starting at `now`.
    public static func arm(_ user: User, now: Date, policy: LendingPolicy) -> LendingArm {
        LendingArm(userId: user.id, userName: user.name, reader: nil, armedAt: now,
                   expiresAt: now.addingTimeInterval(policy.armDuration))
    }

    /// The per-user limit: a user who already has `active` devices (IDs, oldest first) may
    /// borrow one more only while fewer than `limit`; nil: no limit. The store applies it in
    /// the lend's transaction, so two readers lending at once cannot pass it together.
    public static func checkLimit(userId: UserID, userName: String, active: [DeviceID], limit: Int?) throws(LendingError) {
        guard let limit, active.count >= limit else { return }
        throw .limitReached(userId, userName: userName, limit: limit, deviceIds: active)
    }

    /// Decides what a tap does.
    /// - badge → arms its user (replacing any session);
    /// - lent device → returned, whoever taps it (`returnedBy` = the armed user, if any);
    /// - available normal device with a user armed → lent to that user (session stays);
    /// - available normal device, nobody armed → `badgeRequired`, nothing recorded;
    /// - available broken/disposed device → refused with its status;
    /// - unknown device / tag, or a device record on an unregistered tag → reported; the
    ///   session is untouched;
    /// - a device lent or returned less than ``LendingPolicy/repeatWindow`` ago (`recent`) →
    ///   reported as already lent / already returned; nothing recorded.
    public static func decide(
        _ identity: TapIdentity, session: LendingArm?, now: Date, policy: LendingPolicy, location: String?,
        recent: RecentChange? = nil
    ) -> TapDecision {
        let active = session.flatMap { $0.isActive(at: now) ? $0 : nil }
        switch identity {
        case .badge(_, let user):
            let new = arm(user, now: now, policy: policy)
            return TapDecision(outcome: .armed(new, replacing: active), operation: nil, session: new)
        case .unknownTag(let uid):
            return TapDecision(outcome: .unknownTag(uid: uid), operation: nil, session: active)
        case .unknownDevice(let id, let uid):
            return TapDecision(outcome: .unknownDevice(deviceId: id, uid: uid), operation: nil, session: active)
        case .unregisteredTag(let record, let uid, let boundTo):
            let outcome = TapOutcome.unregisteredTag(deviceId: record.device.id, model: record.device.model,
                                                     uid: uid, boundTo: boundTo)
            return TapDecision(outcome: outcome, operation: nil, session: active)
        case .device(let record):
            let device = record.device
            if let recent, recent.isRepeated(by: device.id, at: now, policy: policy) {
                let outcome = TapOutcome.repeated(deviceId: device.id, model: device.model, change: recent.kind,
                                                  userName: recent.userName)
                return TapDecision(outcome: outcome, operation: nil, session: active)
            }
            if let rental = record.activeRental {
                // A return is never refused, whatever the device's status, so it can come back.
                let request = ReturnRequest(deviceId: device.id, at: now, returnedBy: active.map { .user($0.userId) },
                                            location: location)
                let outcome = TapOutcome.returned(deviceId: device.id, model: device.model, borrowerId: rental.userId,
                                                  borrowerName: rental.userName, returnedBy: active?.userId)
                return TapDecision(outcome: outcome, operation: .returnDevice(request), session: active)
            }
            guard device.status == .normal else {
                return TapDecision(outcome: .refused(deviceId: device.id, model: device.model, status: device.status),
                                   operation: nil, session: active)
            }
            guard let active else {
                return TapDecision(outcome: .badgeRequired(deviceId: device.id, model: device.model),
                                   operation: nil, session: nil)
            }
            let due = policy.dueDate(for: now)
            let request = LendRequest(deviceId: device.id, userId: active.userId, at: now, dueAt: due, location: location,
                                      lentBy: .user(active.userId), maxActivePerUser: policy.maxActivePerUser,
                                      bookingGuard: policy.bookingGuard)
            let outcome = TapOutcome.lent(deviceId: device.id, model: device.model, userId: active.userId,
                                          userName: active.userName, dueAt: due)
            return TapDecision(outcome: outcome, operation: .lend(request), session: active)
        }
    }
}
