#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import struct RoomBridgeCore.TagUID

/// Errors of the inventory and lending rules. Each message says what to do next.
public enum LendingError: Error, Sendable, Hashable, CustomStringConvertible {
    case noSuchDevice(DeviceID)
    case noSuchUser(UserID)
    case noSuchGroup(GroupID)
    case noSuchBadge(String)
    case noSuchTagBinding(String)
    /// No outbox entry has this sequence number (it may have been pruned).
    case noSuchOutboxEntry(Int64)
    case deviceAlreadyExists(DeviceID)
    case userAlreadyExists(UserID)
    case groupAlreadyExists(GroupID)
    /// The group still has devices.
    case groupInUse(GroupID, deviceCount: Int)
    /// The device has an active rental (to `userId` since `since`).
    case alreadyLent(DeviceID, userId: UserID, userName: String, since: Date)
    /// Return of a device that is not lent.
    case notLent(DeviceID)
    /// Lend of a device whose status is not `normal`.
    case notLendable(DeviceID, status: DeviceStatus)
    /// The user already has `deviceIds`, as many as `lending.max_active_per_user` (`limit`) allows.
    case limitReached(UserID, userName: String, limit: Int, deviceIds: [DeviceID])
    /// A lend to someone other than the booker while a booking of `userName` (`userId`) runs or
    /// starts within `lending.booking_guard` (at `startsAt`); also a renewal into it.
    case booked(DeviceID, userId: UserID, userName: String, startsAt: Date)
    /// A booking of a lent device that starts before the rental's due date (`dueAt`; nil: an
    /// open-ended rental, which can be booked once it is back).
    case bookedWhileLent(DeviceID, userName: String, dueAt: Date?)
    /// The booking overlaps booking `existing` of the same device (`userName`'s, `startsAt`–`endsAt`).
    case bookingOverlaps(DeviceID, existing: BookingID, userName: String, startsAt: Date, endsAt: Date)
    case noSuchBooking(BookingID)
    /// A booking that was fulfilled or cancelled cannot be cancelled (`state`).
    case bookingNotCancellable(BookingID, state: Booking.State)
    /// A stocktake is open already (number `id`); close it before starting another.
    case stocktakeOpen(StocktakeID)
    case noSuchStocktake(StocktakeID)
    /// The stocktake was closed already.
    case stocktakeClosed(StocktakeID)
    /// Delete of a device that is lent.
    case deviceIsLent(DeviceID, userId: UserID)
    /// Delete of a user who still has devices.
    case userHasDevices(UserID, deviceIds: [DeviceID])
    /// The UID is already bound (`boundTo` describes to what, e.g. "device D-0001").
    case uidAlreadyBound(String, boundTo: String)
    case invalidCardIdentifier(String, reason: String)
    /// A field value is not acceptable (empty ID, due date before lend time, …).
    case invalidField(String, reason: String)
    /// A value breaks a named validation rule (``Validation``); `reason` says how and what to do.
    case ruleViolated(ValidationRule, field: String, reason: String)
    /// A page cursor that this store did not issue.
    case invalidCursor(String)
    /// No user is armed at the reader (internal to the rules; taps report `badgeRequired`).
    case noArmedUser
    /// The disk holding the database (`directory`) is full; the change was rolled back.
    case storageFull(directory: String)
    /// The database failed an integrity check (`detail`); changes are refused until it is
    /// repaired, reads still work.
    case storageCorrupt(path: String, detail: String)
    /// The database server cannot be reached (since `since`); the call was refused and nothing
    /// was recorded. The store reconnects by itself.
    case storageOffline(since: Date)
    /// The connection to the database server was lost while the change was being committed
    /// (`detail` says how): it may or may not have been recorded.
    case storageOutcomeUnknown(detail: String)

    public var description: String {
        switch self {
        case .noSuchDevice(let id):
            return "no device \(id); see roombridgectl devices list"
        case .noSuchUser(let id):
            return "no user \(id); see roombridgectl users list"
        case .noSuchGroup(let id):
            return "no device group \(id); see roombridgectl groups list, or add it first"
        case .noSuchBadge(let id):
            return "no badge \(id); see roombridgectl badges list"
        case .noSuchTagBinding(let uid):
            return "tag \(uid) is not bound to any device; bind it with roombridgectl tags bind"
        case .noSuchOutboxEntry(let seq):
            return "no outbox entry \(seq); see roombridgectl outbox list"
        case .deviceAlreadyExists(let id):
            return "device \(id) already exists; choose another ID or update it instead"
        case .userAlreadyExists(let id):
            return "user \(id) already exists; choose another ID or update it instead"
        case .groupAlreadyExists(let id):
            return "device group \(id) already exists; choose another ID or update it instead"
        case .groupInUse(let id, let count):
            return "device group \(id) still has \(count) device(s); move or delete them first"
        case .alreadyLent(let id, let userId, let userName, let since):
            return "device \(id) is already lent to \(userName) (\(userId)) since \(LendingFormat.iso8601(since)); return it first"
        case .notLent(let id):
            return "device \(id) is not lent; nothing to return"
        case .notLendable(let id, let status):
            return "device \(id) is \(status.rawValue) and cannot be lent; set its status to normal first"
        case .limitReached(let id, let userName, let limit, let devices):
            return "\(userName) (\(id)) already has \(devices.count) device\(devices.count == 1 ? "" : "s") "
                + "(\(devices.joined(separator: ", "))), the most one person may borrow at a time "
                + "(lending.max_active_per_user = \(limit)); return one first"
        case .booked(let id, let userId, let userName, let startsAt):
            return "device \(id) is booked for \(userName) (\(userId)) from \(LendingFormat.iso8601(startsAt)); "
                + "lend another device, or ask \(userName) to cancel (roombridgectl bookings --device \(id))"
        case .bookedWhileLent(let id, let userName, let dueAt):
            if let dueAt {
                return "device \(id) is lent to \(userName) until \(LendingFormat.iso8601(dueAt)); book it from then on"
            }
            return "device \(id) is lent to \(userName) with no due date; book it once it is back, or renew the rental with a due date first"
        case .bookingOverlaps(let id, let existing, let userName, let startsAt, let endsAt):
            return "device \(id) is already booked for \(userName) from \(LendingFormat.iso8601(startsAt)) to "
                + "\(LendingFormat.iso8601(endsAt)) (booking \(existing)); choose another time or device"
        case .noSuchBooking(let id):
            return "no booking \(id); see roombridgectl bookings"
        case .bookingNotCancellable(let id, let state):
            return "booking \(id) is \(state.rawValue) and can no longer be cancelled"
        case .stocktakeOpen(let id):
            return "stocktake \(id) is still open; close it first (roombridgectl stocktake close)"
        case .noSuchStocktake(let id):
            return "no stocktake \(id); see roombridgectl stocktake list"
        case .stocktakeClosed(let id):
            return "stocktake \(id) is closed; see its report (roombridgectl stocktake report \(id)) or start a new one"
        case .deviceIsLent(let id, let userId):
            return "device \(id) is lent to \(userId); return it before deleting it"
        case .userHasDevices(let id, let devices):
            return "user \(id) still has \(devices.joined(separator: ", ")); return them before deleting the user"
        case .uidAlreadyBound(let uid, let boundTo):
            return "UID \(uid) is already bound to \(boundTo); unbind it first"
        case .invalidCardIdentifier(let text, let reason):
            return "invalid card identifier '\(text)': \(reason)"
        case .invalidField(let field, let reason):
            return "invalid \(field): \(reason)"
        case .ruleViolated(let rule, let field, let reason):
            return "invalid \(field) (rule \(rule.rawValue)): \(reason)"
        case .invalidCursor(let cursor):
            return "invalid page cursor '\(cursor)'; start again without a cursor"
        case .noArmedUser:
            return "no user is armed at the reader; tap a badge first"
        case .storageFull(let directory):
            return "the disk holding \(directory) is full; free space there and try again; nothing was recorded"
        case .storageOutcomeUnknown(let detail):
            return "the connection to the database was lost while the change was being committed (\(detail)); it may or may not have been recorded: look (roombridgectl devices show, history) before trying again"
        case .storageOffline(let since):
            return "offline — nothing was recorded, try again (the database does not answer since \(LendingFormat.iso8601(since)); roombridged reconnects by itself)"
        case .storageCorrupt(let path, let detail):
            return "the database \(path) failed its integrity check (\(detail)); changes are refused until it is repaired: stop roombridged and restore it from a backup, or rebuild its indexes with: sqlite3 \(path) 'REINDEX;' and check with: sqlite3 \(path) 'PRAGMA integrity_check;', then start roombridged; nothing was recorded"
        }
    }
}

extension LendingError: LocalizedError {
    /// Same as ``description``, so `localizedDescription` shows the actionable text.
    public var errorDescription: String? { description }
}

extension TagUID {
    /// A tag UID as a store holds it: a value that is not one is the database's corruption, reported
    /// as such rather than dropped (both stores read UIDs through this).
    public static func stored(_ text: String) throws(LendingError) -> TagUID {
        guard let uid = TagUID(text) else { throw .storageCorrupt(path: "tag UID", detail: "\"\(text)\" is not a tag UID") }
        return uid
    }
}
