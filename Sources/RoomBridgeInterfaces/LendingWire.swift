import Foundation
import Lending
import Varlink

// Wire forms of the lending domain for `io.roombridge.Inventory` and `io.roombridge.Lending`:
// camel-case `…Id` names as in `io.roombridge.State`, dates as ISO 8601 UTC strings.

/// A device group on the wire.
struct WireGroup: Codable, Sendable {
    var id: String
    var name: String
    var sortOrder: Int

    init(_ g: DeviceGroup) { id = g.id; name = g.name; sortOrder = g.sortOrder }
}

/// A rental on the wire; `overdue` is computed when the reply is made.
struct WireRental: Codable, Sendable {
    var id: Int64
    var deviceId: String
    var model: String
    var osVersion: String
    var serialNumber: String
    var userId: String
    var userName: String
    var rentedAt: Date
    var dueAt: Date?
    var returnedAt: Date?
    var returnedBy: String?
    var location: String?
    var returnLocation: String?
    var overdue: Bool

    init(_ r: Rental, now: Date) {
        id = r.id; deviceId = r.deviceId; model = r.model; osVersion = r.osVersion
        serialNumber = r.serialNumber; userId = r.userId; userName = r.userName; rentedAt = r.rentedAt
        dueAt = r.dueAt; returnedAt = r.returnedAt; returnedBy = r.returnedBy; location = r.location
        returnLocation = r.returnLocation; overdue = r.isOverdue(at: now)
    }
}

/// A device with its active rental on the wire.
struct WireDevice: Codable, Sendable {
    var id: String
    var groupId: String
    var model: String
    var serialNumber: String
    var osVersion: String
    var status: String
    var connectorType: String
    var registeredAt: Date
    var note: String?
    var isNfcRegistered: Bool
    var rental: WireRental?

    init(_ r: DeviceRecord, now: Date) {
        let d = r.device
        id = d.id; groupId = d.groupId; model = d.model; serialNumber = d.serialNumber
        osVersion = d.osVersion; status = d.status.rawValue; connectorType = d.connectorType
        registeredAt = d.registeredAt; note = d.note; isNfcRegistered = d.isNFCRegistered
        rental = r.activeRental.map { WireRental($0, now: now) }
    }
}

/// A device log row on the wire.
struct WireLogEntry: Codable, Sendable {
    var id: Int64
    var deviceId: String
    var operation: String
    var field: String
    var oldValue: String?
    var newValue: String?
    var at: Date

    init(_ e: DeviceLogEntry) {
        id = e.id; deviceId = e.deviceId; operation = e.operation.rawValue; field = e.field
        oldValue = e.oldValue; newValue = e.newValue; at = e.at
    }
}

/// A user on the wire.
struct WireUser: Codable, Sendable {
    var id: String
    var name: String
    var registeredAt: Date

    init(_ u: User) { id = u.id; name = u.name; registeredAt = u.registeredAt }
}

/// A badge on the wire.
struct WireBadge: Codable, Sendable {
    var identifier: String
    var kind: String
    var userId: String
    var registeredAt: Date
    var label: String?

    init(_ b: Badge) {
        identifier = b.identifier; kind = b.kind.rawValue; userId = b.userId; registeredAt = b.registeredAt
        label = b.label
    }
}

/// A tag binding on the wire.
struct WireTagBinding: Codable, Sendable {
    var uid: String
    var deviceId: String
    var boundAt: Date

    init(_ t: TagBinding) { uid = t.uid; deviceId = t.deviceId; boundAt = t.boundAt }
}

/// Typed access to a call's parameters (the service has already checked them against the IDL).
///
/// Strings are checked at this boundary: no string may contain NUL, and IDs and names
/// (``isIdentifierOrName(_:)``) no control character at all (``TextRules``); free text such as a
/// note may contain line breaks and tabs.
struct Parameters {
    let values: [String: JSONValue]
    /// The interface whose `InvalidField` error reports a refused string.
    let interface: String

    init(_ call: VarlinkCall) { values = call.parameters; interface = call.interface }
    init(_ values: [String: JSONValue], interface: String) { self.values = values; self.interface = interface }

    /// True for parameters that name or identify something: `id`, `name`, `…Id`, `identifier`,
    /// `uid`, `returnedBy`.
    static func isIdentifierOrName(_ name: String) -> Bool {
        ["id", "name", "identifier", "uid", "returnedBy", "label"].contains(name) || name.hasSuffix("Id")
    }

    /// A required string.
    func string(_ name: String) throws(VarlinkError) -> String {
        guard let s = values[name]?.stringValue else { throw VarlinkError.invalidParameter(name) }
        return try checked(s, name)
    }

    /// An optional string (absent or null → nil).
    func optionalString(_ name: String) throws(VarlinkError) -> String? {
        guard let v = values[name], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw VarlinkError.invalidParameter(name) }
        return try checked(s, name)
    }

    private func checked(_ s: String, _ name: String) throws(VarlinkError) -> String {
        let refused = Self.isIdentifierOrName(name)
            ? TextRules.firstControlCharacter(in: s)
            : s.unicodeScalars.first { $0.value == 0 }
        if let scalar = refused {
            throw LendingWireErrors.varlink(
                .invalidField(name, reason: "contains the control character \(TextRules.codePoint(scalar)); use printable text only"),
                interface: interface)
        }
        return s
    }

    func optionalBool(_ name: String) throws(VarlinkError) -> Bool? {
        guard let v = values[name], !v.isNull else { return nil }
        guard let b = v.boolValue else { throw VarlinkError.invalidParameter(name) }
        return b
    }

    func optionalInt(_ name: String) throws(VarlinkError) -> Int? {
        guard let v = values[name], !v.isNull else { return nil }
        guard let i = v.intValue else { throw VarlinkError.invalidParameter(name) }
        return Int(clamping: i)
    }

    /// A nested object (absent → empty).
    func object(_ name: String) throws(VarlinkError) -> Parameters {
        guard let v = values[name], !v.isNull else { return Parameters([:], interface: interface) }
        guard let o = v.objectValue else { throw VarlinkError.invalidParameter(name) }
        return Parameters(o, interface: interface)
    }

    /// An optional time: ISO 8601 (with or without fractional seconds or offset) or a plain
    /// `YYYY-MM-DD` date (midnight UTC).
    func optionalDate(_ name: String, interface: String) throws(VarlinkError) -> Date? {
        guard let text = try optionalString(name) else { return nil }
        guard let date = WireDates.parse(text) else {
            throw LendingWireErrors.varlink(
                .invalidField(name, reason: "expected a date such as 2026-11-21 or 2026-11-21T18:00:00Z, got '\(text)'"),
                interface: interface)
        }
        return date
    }

    /// `limit` and `cursor` as a page request.
    func page() throws(VarlinkError) -> PageRequest {
        PageRequest(limit: try optionalLimit() ?? 100, cursor: try optionalString("cursor"))
    }

    /// The documented page sizes.
    static let limitRange = 1...1000

    /// `limit`, if given: within ``limitRange``, else `InvalidParameter`.
    func optionalLimit() throws(VarlinkError) -> Int? {
        guard let limit = try optionalInt("limit") else { return nil }
        guard Self.limitRange.contains(limit) else { throw VarlinkError.invalidParameter("limit") }
        return limit
    }
}

/// Time strings clients send.
public enum WireDates {
    /// Parses ISO 8601 (`2026-11-21T18:00:00Z`, with fractional seconds or a `+01:00` offset) or
    /// `YYYY-MM-DD` (midnight UTC); nil otherwise.
    public static func parse(_ text: String) -> Date? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(t) { return d }
        if let d = try? Date.ISO8601FormatStyle().parse(t) { return d }
        let parts = t.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
           let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(secondsFromGMT: 0)!
            let components = DateComponents(year: y, month: m, day: d)
            guard components.isValidDate(in: calendar) else { return nil }
            return calendar.date(from: components)
        }
        return nil
    }
}

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

        # A field value is not acceptable.
        error InvalidField (field: string, reason: string, message: string)

        # A page cursor this daemon did not issue; start again without one.
        error InvalidCursor (cursor: string, message: string)

        # The device has an active rental.
        error AlreadyLent (deviceId: string, userId: string, userName: string, since: string, message: string)

        # The device is not lent.
        error NotLent (deviceId: string, message: string)

        # The device's status does not allow lending.
        error NotLendable (deviceId: string, status: (normal, broken, disposed), message: string)

        # No user is armed at the reader.
        error NotArmed (message: string)

        # The disk holding the database is full; nothing was recorded. Free space and retry.
        error StorageFull (directory: string, message: string)

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
        case .invalidCursor(let cursor): name = "InvalidCursor"; p["cursor"] = .string(cursor)
        case .noArmedUser: name = "NotArmed"
        case .storageFull(let directory): name = "StorageFull"; p["directory"] = .string(directory)
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
