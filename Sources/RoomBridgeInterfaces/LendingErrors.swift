import Foundation
import Lending
import Varlink

/// The typed errors of `io.roombridge.Inventory` and `io.roombridge.Lending`.
enum LendingWireErrors {
    /// Error declarations shared by both interfaces' IDL. Every error carries `message`, the
    /// text that says what to do.
    static let idl = """
        # No device has this ID.
        error NoSuchDevice (deviceId: string, message: string)

        # No user has this ID.
        error NoSuchUser (userId: string, message: string)

        # No device group has this ID.
        error NoSuchGroup (groupId: string, message: string)

        # No badge has this identifier.
        error NoSuchBadge (identifier: string, message: string)

        # The tag UID is not bound to a device.
        error NoSuchTagBinding (uid: string, message: string)

        # No outbox entry has this sequence number (it may have been pruned).
        error NoSuchOutboxEntry (seq: int, message: string)

        # A device, user or group with this ID exists already.
        error AlreadyExists (kind: (device, user, group), id: string, message: string)

        # The group still has devices.
        error GroupInUse (groupId: string, deviceCount: int, message: string)

        # The device is lent; return it first.
        error DeviceIsLent (deviceId: string, userId: string, message: string)

        # The user still has devices; return them first.
        error UserHasDevices (userId: string, deviceIds: []string, message: string)

        # The UID is already bound to a device tag or a badge.
        error UidAlreadyBound (uid: string, boundTo: string, message: string)

        # A field value is not acceptable; rule names the validation rule it breaks, if one
        # does: blankName, idCharacters, idCaseCollision, nameTooLong, idTooLong, unknownStatus,
        # noteTooLong.
        error InvalidField (field: string, reason: string, message: string, rule: ?string)

        # A page cursor this daemon did not issue; start again without one.
        error InvalidCursor (cursor: string, message: string)

        # The device has an active rental.
        error AlreadyLent (deviceId: string, userId: string, userName: string, since: string, message: string)

        # The device is not lent.
        error NotLent (deviceId: string, message: string)

        # The device's status does not allow lending.
        error NotLendable (deviceId: string, status: (normal, broken, disposed), message: string)

        # The user already has as many devices as lending.max_active_per_user (limit) allows;
        # deviceIds: theirs, oldest first. Return one first.
        error LimitReached (userId: string, userName: string, limit: int, deviceIds: []string, message: string)

        # No user is armed at the reader.
        error NotArmed (message: string)

        # The disk holding the database is full; nothing was recorded. Free space and retry.
        error StorageFull (directory: string, message: string)

        # The database server cannot be reached since `since`; nothing was recorded. Try again:
        # the daemon reconnects by itself.
        error StorageOffline (since: string, message: string)

        # The connection to the database server was lost while the change was being committed:
        # it may or may not have been recorded. Look before trying again.
        error StorageOutcomeUnknown (detail: string, message: string)

        # The database failed an integrity check; changes are refused (reads still work) until
        # it is restored from a backup or reindexed. Nothing was recorded.
        error StorageCorrupt (path: string, detail: string, message: string)
        """

    /// A store error as the typed Varlink error of `interface`.
    static func varlink(_ error: LendingError, interface: String) -> VarlinkError {
        var p: [String: JSONValue] = ["message": .string(error.description)]
        let name: String
        switch error {
        case .noSuchDevice(let id): name = "NoSuchDevice"; p["deviceId"] = .string(id)
        case .noSuchUser(let id): name = "NoSuchUser"; p["userId"] = .string(id)
        case .noSuchGroup(let id): name = "NoSuchGroup"; p["groupId"] = .string(id)
        case .noSuchBadge(let id): name = "NoSuchBadge"; p["identifier"] = .string(id)
        case .noSuchTagBinding(let uid): name = "NoSuchTagBinding"; p["uid"] = .string(uid)
        case .noSuchOutboxEntry(let seq): name = "NoSuchOutboxEntry"; p["seq"] = .int(seq)
        case .deviceAlreadyExists(let id): name = "AlreadyExists"; p["kind"] = "device"; p["id"] = .string(id)
        case .userAlreadyExists(let id): name = "AlreadyExists"; p["kind"] = "user"; p["id"] = .string(id)
        case .groupAlreadyExists(let id): name = "AlreadyExists"; p["kind"] = "group"; p["id"] = .string(id)
        case .groupInUse(let id, let count):
            name = "GroupInUse"; p["groupId"] = .string(id); p["deviceCount"] = .int(Int64(count))
        case .alreadyLent(let id, let userId, let userName, let since):
            name = "AlreadyLent"; p["deviceId"] = .string(id); p["userId"] = .string(userId)
            p["userName"] = .string(userName); p["since"] = .string(LendingFormat.iso8601(since))
        case .notLent(let id): name = "NotLent"; p["deviceId"] = .string(id)
        case .notLendable(let id, let status):
            name = "NotLendable"; p["deviceId"] = .string(id); p["status"] = .string(status.rawValue)
        case .limitReached(let id, let userName, let limit, let devices):
            name = "LimitReached"; p["userId"] = .string(id); p["userName"] = .string(userName)
            p["limit"] = .int(Int64(limit)); p["deviceIds"] = .array(devices.map { .string($0) })
        case .deviceIsLent(let id, let userId):
            name = "DeviceIsLent"; p["deviceId"] = .string(id); p["userId"] = .string(userId)
        case .userHasDevices(let id, let devices):
            name = "UserHasDevices"; p["userId"] = .string(id); p["deviceIds"] = .array(devices.map { .string($0) })
        case .uidAlreadyBound(let uid, let boundTo):
            name = "UidAlreadyBound"; p["uid"] = .string(uid); p["boundTo"] = .string(boundTo)
        case .invalidCardIdentifier(_, let reason):
            name = "InvalidField"; p["field"] = "identifier"; p["reason"] = .string(reason)
        case .invalidField(let field, let reason):
            name = "InvalidField"; p["field"] = .string(field); p["reason"] = .string(reason)
        case .ruleViolated(let rule, let field, let reason):
            name = "InvalidField"; p["field"] = .string(field); p["reason"] = .string(reason); p["rule"] = .string(rule.rawValue)
        case .invalidCursor(let cursor): name = "InvalidCursor"; p["cursor"] = .string(cursor)
        case .noArmedUser: name = "NotArmed"
        case .storageFull(let directory): name = "StorageFull"; p["directory"] = .string(directory)
        case .storageOffline(let since): name = "StorageOffline"; p["since"] = .string(LendingFormat.iso8601(since))
        case .storageOutcomeUnknown(let detail): name = "StorageOutcomeUnknown"; p["detail"] = .string(detail)
        case .storageCorrupt(let path, let detail):
            name = "StorageCorrupt"; p["path"] = .string(path); p["detail"] = .string(detail)
        }
        return VarlinkError("\(interface).\(name)", parameters: p)
    }

    /// Runs `body`, turning `LendingError` into the typed Varlink error of `interface`.
    static func mapping<T>(_ interface: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as LendingError {
            throw varlink(error, interface: interface)
        }
    }
}
