import Foundation
import GRDB
import Lending

// MARK: - SQL helpers

/// Dates are stored as INTEGER milliseconds since 1970-01-01 UTC (compact, exact, and
/// ordered for range queries).
enum Millis {
    static func from(_ date: Date) -> Int64 { StoreConventions.millis(date) }
    static func date(_ ms: Int64) -> Date { StoreConventions.date(millis: ms) }
}

extension SQLiteInventoryStore {
    static let deviceColumns = """
        d.id, d.group_id, d.model, d.serial_number, d.os_version, d.status, d.connector_type, \
        d.registered_at, d.note, d.is_nfc_registered
        """
    static let rentalColumns = """
        r.id, r.device_id, r.model, r.os_version, r.serial_number, r.user_id, r.user_name, r.rented_at, \
        r.due_at, r.returned_at, r.returned_by, r.location, r.return_location, r.lent_by, r.return_note
        """
    /// A device with its active rental (the join uses the partial unique index).
    static let deviceRecordSelect = """
        SELECT \(deviceColumns), \(rentalColumns)
        FROM devices d LEFT JOIN rentals r ON r.device_id = d.id AND r.returned_at IS NULL
        """

    static let deviceColumnCount = 10

    /// A ``deviceRecordSelect`` row read by position: the device's columns, then the rental's (all
    /// NULL when the device is not lent). Reading by position rather than through Codable and a
    /// scope adapter halves the CPU of a point lookup (lending-bench, "who has device X").
    static func decodeDeviceRecord(_ row: Row) throws -> DeviceRecord {
        let rental = row.hasNull(atIndex: deviceColumnCount) ? nil : try rental(row, from: deviceColumnCount)
        return DeviceRecord(device: try device(row, from: 0), activeRental: rental)
    }

    /// A device from ``deviceColumns`` at `i`.
    static func device(_ row: Row, from i: Int) throws -> Device {
        let raw: String = row[i + 5]
        guard let status = DeviceStatus(rawValue: raw) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "devices.status '\(raw)' is not one of \(DeviceStatus.allCases.map(\.rawValue))"))
        }
        return Device(id: row[i], groupId: row[i + 1], model: row[i + 2], serialNumber: row[i + 3], osVersion: row[i + 4],
                      status: status, connectorType: row[i + 6], registeredAt: Millis.date(row[i + 7]), note: row[i + 8],
                      isNFCRegistered: row[i + 9])
    }

    /// A rental from ``rentalColumns`` at `i`.
    static func rental(_ row: Row, from i: Int) throws -> Rental {
        func date(_ j: Int) -> Date? { (row[i + j] as Int64?).map(Millis.date) }
        return Rental(id: row[i], deviceId: row[i + 1], model: row[i + 2], osVersion: row[i + 3], serialNumber: row[i + 4],
                      userId: row[i + 5], userName: row[i + 6], rentedAt: Millis.date(row[i + 7]), dueAt: date(8),
                      returnedAt: date(9), returnedBy: row[i + 10], location: row[i + 11], returnLocation: row[i + 12],
                      lentBy: row[i + 13], returnNote: row[i + 14])
    }

    static func fetchDevice(_ db: Database, id: DeviceID) throws -> Device? {
        try Device.fetchOne(db, sql: "SELECT \(deviceColumns) FROM devices d WHERE d.id = ?", arguments: [id])
    }

    static func fetchActiveRental(_ db: Database, deviceId: DeviceID) throws -> Rental? {
        try Rental.fetchOne(db, sql: "SELECT \(rentalColumns) FROM rentals r WHERE r.device_id = ? AND r.returned_at IS NULL",
                            arguments: [deviceId])
    }

    static func fetchUser(_ db: Database, id: UserID) throws -> User? {
        try User.fetchOne(db, key: id)
    }

    static func exists(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> Bool {
        try Row.fetchOne(db, sql: sql, arguments: arguments) != nil
    }

    static func requireGroup(_ db: Database, _ id: GroupID) throws {
        if try !exists(db, "SELECT 1 FROM device_groups WHERE id = ?", [id]) { throw LendingError.noSuchGroup(id) }
    }

    /// Refuses a new ID of `table` that differs only in case from an existing one (rule
    /// `idCaseCollision`; SQLite's NOCASE folds ASCII letters).
    static func requireNoCaseTwin(_ db: Database, _ table: String, _ id: String, field: String) throws {
        let twin = try String.fetchOne(db, sql: "SELECT id FROM \(table) WHERE id = ? COLLATE NOCASE AND id != ? LIMIT 1",
                                       arguments: [id, id])
        try Validation.caseCollision(id, existing: twin, field: field)
    }

    /// Refuses a UID already used by a badge or a tag binding.
    static func requireUIDFree(_ db: Database, _ uid: String, exceptDevice: DeviceID? = nil) throws {
        if let device = try String.fetchOne(db, sql: "SELECT device_id FROM tag_bindings WHERE uid = ?", arguments: [uid]),
           device != exceptDevice {
            throw LendingError.uidAlreadyBound(uid, boundTo: "device \(device)")
        }
        if let user = try String.fetchOne(db, sql: "SELECT user_id FROM badges WHERE identifier = ?", arguments: [uid]) {
            throw LendingError.uidAlreadyBound(uid, boundTo: "a badge of user \(user)")
        }
    }

    static func bind(_ db: Database, uid: String, deviceId: DeviceID, at: Date) throws {
        guard try exists(db, "SELECT 1 FROM devices WHERE id = ?", [deviceId]) else { throw LendingError.noSuchDevice(deviceId) }
        try requireUIDFree(db, uid, exceptDevice: deviceId)
        try db.execute(sql: "INSERT OR IGNORE INTO tag_bindings (uid, device_id, bound_at) VALUES (?, ?, ?)",
                       arguments: [uid, deviceId, Millis.from(at)])
    }

    static func log(
        _ db: Database, _ deviceId: DeviceID, _ operation: DeviceLogOperation, _ field: String,
        _ old: String?, _ new: String?, _ at: Date, _ actor: ChangeActor?
    ) throws -> DeviceLogEntry {
        try db.execute(sql: """
            INSERT INTO device_log (device_id, operation, field, old_value, new_value, at, actor) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [deviceId, operation.rawValue, field, old, new, Millis.from(at), actor?.text])
        return DeviceLogEntry(id: db.lastInsertedRowID, deviceId: deviceId, operation: operation, field: field,
                              oldValue: old, newValue: new, at: Millis.date(Millis.from(at)), actor: actor?.text)
    }

    static func whereSQL(_ clauses: [String]) -> String {
        clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
    }

    static func escapeLike(_ text: String) -> String { StoreConventions.escapeLike(text) }

    /// Cursor `"<millis>.<id>"` for (time, id) keyset paging.
    static func parseCursor(_ cursor: String) throws -> (Int64, Int64) { try StoreConventions.parseCursor(cursor) }

    /// Cuts the `limit + 1` rows fetched into a page and the cursor of its last item.
    static func page<T: Sendable>(_ rows: [T], limit: Int, cursor: (T) -> String) -> Page<T> {
        StoreConventions.page(rows, limit: limit, cursor: cursor)
    }
}
