import Foundation
import Lending
import Varlink

/// The typed errors of `io.roombridge.Inventory` and `io.roombridge.Lending`.
enum LendingWireErrors {

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
        case .booked(let id, let userId, let userName, let startsAt):
            name = "Booked"; p["deviceId"] = .string(id); p["userId"] = .string(userId); p["userName"] = .string(userName)
            p["startsAt"] = .string(LendingFormat.iso8601(startsAt))
        case .bookedWhileLent(let id, let userName, let dueAt):
            name = "BookedWhileLent"; p["deviceId"] = .string(id); p["userName"] = .string(userName)
            if let dueAt { p["dueAt"] = .string(LendingFormat.iso8601(dueAt)) }
        case .bookingOverlaps(let id, let existing, let userName, let startsAt, let endsAt):
            name = "BookingOverlaps"; p["deviceId"] = .string(id); p["bookingId"] = .int(existing)
            p["userName"] = .string(userName); p["startsAt"] = .string(LendingFormat.iso8601(startsAt))
            p["endsAt"] = .string(LendingFormat.iso8601(endsAt))
        case .noSuchBooking(let id): name = "NoSuchBooking"; p["bookingId"] = .int(id)
        case .bookingNotCancellable(let id, let state):
            name = "BookingNotCancellable"; p["bookingId"] = .int(id); p["state"] = .string(state.rawValue)
        case .stocktakeOpen(let id): name = "StocktakeOpen"; p["stocktakeId"] = .int(id)
        case .noSuchStocktake(let id): name = "NoSuchStocktake"; p["stocktakeId"] = .int(id)
        case .stocktakeClosed(let id): name = "StocktakeClosed"; p["stocktakeId"] = .int(id)
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

    /// ``mapping(_:_:)`` for synchronous work.
    static func mapping<T>(_ interface: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as LendingError {
            throw varlink(error, interface: interface)
        }
    }
}
