#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import struct RoomBridgeCore.TagUID
import Logging
import PostgresNIO

// The lending domain's types to and from PostgreSQL rows: the columns of the SQLite schema,
// dates as BIGINT milliseconds (StoreConventions).

/// Reads a row's cells in order.
struct Cells {
    let row: PostgresRandomAccessRow
    var index: Int

    init(_ row: PostgresRandomAccessRow, from index: Int = 0) {
        self.row = row
        self.index = index
    }

    mutating func next<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
        defer { index += 1 }
        return try row[index].decode(T.self)
    }

    mutating func date() throws -> Date { StoreConventions.date(millis: try next(Int64.self)) }
    mutating func optionalDate() throws -> Date? { try next(Int64?.self).map { StoreConventions.date(millis: $0) } }

    /// A stored tag UID (stored canonical; anything else is a damaged row).
    mutating func uid() throws -> TagUID {
        try TagUID.stored(try next(String.self))
    }

    mutating func optionalUID() throws -> TagUID? {
        guard let text = try next(String?.self) else { return nil }
        return try TagUID.stored(text)
    }
}

enum Columns {
    static let device = """
        d.id, d.group_id, d.model, d.serial_number, d.os_version, d.status, d.connector_type, \
        d.registered_at, d.note, d.is_nfc_registered
        """
    static let deviceCount = 10
    static let rental = """
        r.id, r.device_id, r.model, r.os_version, r.serial_number, r.user_id, r.user_name, r.rented_at, \
        r.due_at, r.returned_at, r.returned_by, r.location, r.return_location, r.lent_by, r.return_note
        """
    static let user = "id, name, registered_at"
    static let booking = """
        id, device_id, model, user_id, user_name, starts_at, ends_at, state, booked_at, booked_by, cancelled_at, \
        cancelled_by, rental_id
        """
    static let badge = "identifier, kind, user_id, registered_at, label"
    static let deviceLog = "id, device_id, operation, field, old_value, new_value, at, actor"
    /// A device with its active rental (the join uses the partial unique index).
    static let deviceRecordSelect = """
        SELECT \(device), \(rental)
        FROM devices d LEFT JOIN rentals r ON r.device_id = d.id AND r.returned_at IS NULL
        """
}

enum Decode {
    static func device(_ row: PostgresRandomAccessRow) throws -> Device {
        var c = Cells(row)
        let id: String = try c.next(), group: String = try c.next(), model: String = try c.next()
        let serial: String = try c.next(), os: String = try c.next(), statusText: String = try c.next()
        let connector: String = try c.next(), registered = try c.date(), note: String? = try c.next()
        let nfc: Bool = try c.next()
        return Device(id: id, groupId: group, model: model, serialNumber: serial, osVersion: os,
                      status: DeviceStatus(rawValue: statusText) ?? .broken, connectorType: connector,
                      registeredAt: registered, note: note, isNFCRegistered: nfc)
    }

    static func rental(_ row: PostgresRandomAccessRow, from index: Int = 0) throws -> Rental {
        var c = Cells(row, from: index)
        let id: Int64 = try c.next(), device: String = try c.next(), model: String = try c.next()
        let os: String = try c.next(), serial: String = try c.next(), user: String = try c.next()
        let name: String = try c.next(), rented = try c.date(), due = try c.optionalDate()
        let returned = try c.optionalDate(), returnedBy: String? = try c.next()
        let location: String? = try c.next(), returnLocation: String? = try c.next(), lentBy: String? = try c.next()
        let returnNote: String? = try c.next()
        return Rental(id: id, deviceId: device, model: model, osVersion: os, serialNumber: serial, userId: user,
                      userName: name, rentedAt: rented, dueAt: due, returnedAt: returned, returnedBy: returnedBy,
                      location: location, returnLocation: returnLocation, lentBy: lentBy, returnNote: returnNote)
    }

    static func booking(_ row: PostgresRandomAccessRow) throws -> Booking {
        var c = Cells(row)
        let id: Int64 = try c.next(), device: String = try c.next(), model: String = try c.next()
        let user: String = try c.next(), name: String = try c.next(), starts = try c.date(), ends = try c.date()
        let state: String = try c.next(), bookedAt = try c.date(), bookedBy: String? = try c.next()
        let cancelledAt = try c.optionalDate(), cancelledBy: String? = try c.next(), rental: Int64? = try c.next()
        return Booking(id: id, deviceId: device, model: model, userId: user, userName: name, startsAt: starts, endsAt: ends,
                       state: Booking.State(rawValue: state) ?? .cancelled, bookedAt: bookedAt, bookedBy: bookedBy,
                       cancelledAt: cancelledAt, cancelledBy: cancelledBy, rentalId: rental)
    }

    /// A ``Columns/deviceRecordSelect`` row.
    static func deviceRecord(_ row: PostgresRandomAccessRow) throws -> DeviceRecord {
        let hasRental = try row[Columns.deviceCount].decode(Int64?.self) != nil
        return DeviceRecord(device: try device(row),
                            activeRental: hasRental ? try rental(row, from: Columns.deviceCount) : nil)
    }

    static func user(_ row: PostgresRandomAccessRow) throws -> User {
        var c = Cells(row)
        return User(id: try c.next(), name: try c.next(), registeredAt: try c.date())
    }

    static func badge(_ row: PostgresRandomAccessRow) throws -> Badge {
        var c = Cells(row)
        let identifier: String = try c.next(), kind: String = try c.next(), user: String = try c.next()
        return Badge(identifier: identifier, kind: BadgeKind(rawValue: kind) ?? .iso14443a, userId: user,
                     registeredAt: try c.date(), label: try c.next())
    }

    static func tagBinding(_ row: PostgresRandomAccessRow) throws -> TagBinding {
        var c = Cells(row)
        return TagBinding(uid: try c.uid(), deviceId: try c.next(), boundAt: try c.date())
    }

    static func logEntry(_ row: PostgresRandomAccessRow) throws -> DeviceLogEntry {
        var c = Cells(row)
        let id: Int64 = try c.next(), device: String = try c.next(), operation: String = try c.next()
        return DeviceLogEntry(id: id, deviceId: device, operation: DeviceLogOperation(rawValue: operation) ?? .update,
                              field: try c.next(), oldValue: try c.next(), newValue: try c.next(), at: try c.date(),
                              actor: try c.next())
    }
}

/// A statement built piece by piece: SQL text with `$n` placeholders and their values.
struct Statement {
    var sql: String
    var binds = PostgresBindings()

    init(_ sql: String) { self.sql = sql }

    /// Appends `value` as the next parameter and returns its placeholder.
    mutating func bind<V: PostgresDynamicTypeEncodable>(_ value: V) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    mutating func bind<V: PostgresDynamicTypeEncodable>(_ value: V?) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }

    static func whereSQL(_ clauses: [String]) -> String {
        clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
    }
}

extension PostgresInventoryStore {
    /// Rows of `query` on a pooled connection.
    func fetch<T: Sendable>(_ query: PostgresQuery, _ decode: @escaping @Sendable (PostgresRandomAccessRow) throws -> T) async throws -> [T] {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.rows(connection, query, logger: logger, decode)
        }
    }

    static func fetchDevice(_ c: PostgresConnection, id: DeviceID, lock: String = "", logger: Logger) async throws -> Device? {
        try await rows(c, "SELECT \(unescaped: Columns.device) FROM devices d WHERE d.id = \(id) \(unescaped: lock)",
                       logger: logger, Decode.device).first
    }

    static func fetchActiveRental(_ c: PostgresConnection, deviceId: DeviceID, logger: Logger) async throws -> Rental? {
        try await rows(c, "SELECT \(unescaped: Columns.rental) FROM rentals r WHERE r.device_id = \(deviceId) AND r.returned_at IS NULL",
                       logger: logger) { try Decode.rental($0) }.first
    }

    static func exists(_ c: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> Bool {
        try await !rows(c, query, logger: logger) { _ in () }.isEmpty
    }

    static func requireGroup(_ c: PostgresConnection, _ id: GroupID, logger: Logger) async throws {
        if try await !exists(c, "SELECT 1 FROM device_groups WHERE id = \(id)", logger: logger) {
            throw LendingError.noSuchGroup(id)
        }
    }

    /// Refuses a UID already used by a badge or a tag binding.
    static func requireUIDFree(_ c: PostgresConnection, _ uid: String, exceptDevice: DeviceID? = nil, logger: Logger) async throws {
        if let device = try await rows(c, "SELECT device_id FROM tag_bindings WHERE uid = \(uid)", logger: logger, {
            try $0[0].decode(String.self)
        }).first, device != exceptDevice {
            throw LendingError.uidAlreadyBound(uid, boundTo: "device \(device)")
        }
        if let user = try await rows(c, "SELECT user_id FROM badges WHERE identifier = \(uid)", logger: logger, {
            try $0[0].decode(String.self)
        }).first {
            throw LendingError.uidAlreadyBound(uid, boundTo: "a badge of user \(user)")
        }
    }

    static func log(
        _ c: PostgresConnection, _ deviceId: DeviceID, _ operation: DeviceLogOperation, _ field: String,
        _ old: String?, _ new: String?, _ at: Date, _ actor: ChangeActor?, logger: Logger
    ) async throws -> DeviceLogEntry {
        let ms = StoreConventions.millis(at)
        let id = try await rows(c, """
            INSERT INTO device_log (device_id, operation, field, old_value, new_value, at, actor)
            VALUES (\(deviceId), \(operation.rawValue), \(field), \(old), \(new), \(ms), \(actor?.text)) RETURNING id
            """, logger: logger) { try $0[0].decode(Int64.self) }.first ?? 0
        return DeviceLogEntry(id: id, deviceId: deviceId, operation: operation, field: field,
                              oldValue: old, newValue: new, at: StoreConventions.date(millis: ms), actor: actor?.text)
    }

    /// Refuses a new ID of `table` that differs only in case from an existing one (rule
    /// `idCaseCollision`). `lower` under the IDs' "C" collation folds ASCII letters only, as
    /// SQLite's NOCASE does. The advisory lock on the folded ID makes two kiosks adding
    /// `d-1` and `D-1` at once take turns, so the second sees the first.
    static func requireNoCaseTwin(_ c: PostgresConnection, _ table: String, _ id: String, field: String,
                                  logger: Logger) async throws {
        try await c.query("SELECT pg_advisory_xact_lock(hashtext(\(table + ":" + id.lowercased())))", logger: logger)
        let twin = try await rows(c, """
            SELECT id FROM \(unescaped: table) WHERE lower(id) = lower(\(id) COLLATE "C") AND id <> \(id) LIMIT 1
            """, logger: logger) { try $0[0].decode(String.self) }.first
        try Validation.caseCollision(id, existing: twin, field: field)
    }

    /// The number of rows a data-changing statement with `RETURNING 1` touched.
    static func changed(_ c: PostgresConnection, _ query: PostgresQuery, logger: Logger) async throws -> Int {
        try await rows(c, query, logger: logger) { _ in () }.count
    }
}
