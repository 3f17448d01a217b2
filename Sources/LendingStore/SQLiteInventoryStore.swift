import Foundation
import GRDB
import Lending
import Synchronization

/// The SQLite (GRDB `DatabasePool`, WAL, `synchronous=FULL`) implementation of
/// ``Lending/InventoryStore``. Open it with ``open(_:)``.
///
/// All calls use GRDB's async APIs, which run on GRDB's own dispatch queues (its
/// `DispatchQueueActor` executor), never blocking the cooperative pool. Every mutation is one
/// `BEGIN IMMEDIATE` transaction; SQLite's single-writer lock plus the busy timeout serialize
/// writers across processes, and the partial unique index
/// `rentals_one_active_per_device` is the final arbiter of "one active rental per device".
public final class SQLiteInventoryStore: InventoryStore {
    let pool: DatabasePool
    /// The database file.
    public let path: String
    let health = Mutex(StoreHealthState())

    init(pool: DatabasePool, path: String) {
        self.pool = pool
        self.path = path
    }

    /// Closes the connections (further calls fail). Blocks until running accesses finish;
    /// call it once at shutdown, off the cooperative pool if accesses may be long.
    public func close() throws {
        try pool.close()
    }

    // MARK: Groups

    public func groups() async throws -> [DeviceGroup] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, sort_order FROM device_groups ORDER BY sort_order, id")
                .map { DeviceGroup(id: $0[0], name: $0[1], sortOrder: $0[2]) }
        }
    }

    public func addGroup(_ group: DeviceGroup) async throws {
        try Self.requireNonEmpty(group.id, "group ID")
        try await write { db in
            if try Self.exists(db, "SELECT 1 FROM device_groups WHERE id = ?", [group.id]) {
                throw LendingError.groupAlreadyExists(group.id)
            }
            try db.execute(sql: "INSERT INTO device_groups (id, name, sort_order) VALUES (?, ?, ?)",
                           arguments: [group.id, group.name, group.sortOrder])
        }
    }

    public func updateGroup(_ group: DeviceGroup) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE device_groups SET name = ?, sort_order = ? WHERE id = ?",
                           arguments: [group.name, group.sortOrder, group.id])
            if db.changesCount == 0 { throw LendingError.noSuchGroup(group.id) }
        }
    }

    public func deleteGroup(id: GroupID) async throws {
        try await write { db in
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM devices WHERE group_id = ?", arguments: [id]) ?? 0
            if count > 0 { throw LendingError.groupInUse(id, deviceCount: count) }
            try db.execute(sql: "DELETE FROM device_groups WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw LendingError.noSuchGroup(id) }
        }
    }

    // MARK: Devices

    public func addDevice(_ device: Device, at: Date) async throws {
        try Self.requireNonEmpty(device.id, "device ID")
        try await write { db in
            if try Self.exists(db, "SELECT 1 FROM devices WHERE id = ?", [device.id]) {
                throw LendingError.deviceAlreadyExists(device.id)
            }
            try Self.requireGroup(db, device.groupId)
            try db.execute(sql: """
                INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type,
                                     registered_at, note, is_nfc_registered)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [
                    device.id, device.groupId, device.model, device.serialNumber, device.osVersion,
                    device.status.rawValue, device.connectorType, Millis.from(device.registeredAt), device.note,
                    device.isNFCRegistered,
                ])
            for (field, value) in device.loggedFields where value != nil {
                _ = try Self.log(db, device.id, .add, field, nil, value, at)
            }
        }
    }

    @discardableResult
    public func updateDevice(_ device: Device, at: Date) async throws -> [DeviceLogEntry] {
        try await write { db in
            guard let old = try Self.fetchDevice(db, id: device.id) else { throw LendingError.noSuchDevice(device.id) }
            if old.groupId != device.groupId { try Self.requireGroup(db, device.groupId) }
            try db.execute(sql: """
                UPDATE devices SET group_id = ?, model = ?, serial_number = ?, os_version = ?, status = ?,
                    connector_type = ?, registered_at = ?, note = ?, is_nfc_registered = ?
                WHERE id = ?
                """, arguments: [
                    device.groupId, device.model, device.serialNumber, device.osVersion, device.status.rawValue,
                    device.connectorType, Millis.from(device.registeredAt), device.note, device.isNFCRegistered,
                    device.id,
                ])
            var entries: [DeviceLogEntry] = []
            for (before, after) in zip(old.loggedFields, device.loggedFields) where before.value != after.value {
                entries.append(try Self.log(db, device.id, .update, before.field, before.value, after.value, at))
            }
            return entries
        }
    }

    public func deleteDevice(id: DeviceID, at: Date) async throws {
        try await write { db in
            guard let old = try Self.fetchDevice(db, id: id) else { throw LendingError.noSuchDevice(id) }
            if let active = try Self.fetchActiveRental(db, deviceId: id) {
                throw LendingError.deviceIsLent(id, userId: active.userId)
            }
            try db.execute(sql: "DELETE FROM devices WHERE id = ?", arguments: [id])
            for (field, value) in old.loggedFields where value != nil {
                _ = try Self.log(db, id, .delete, field, value, nil, at)
            }
        }
    }

    public func device(id: DeviceID) async throws -> DeviceRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "\(Self.deviceRecordSelect) WHERE d.id = ?", arguments: [id])
                .map(Self.decodeDeviceRecord)
        }
    }

    public func devices(_ filter: DeviceFilter, page: PageRequest) async throws -> Page<DeviceRecord> {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let group = filter.groupId { clauses.append("d.group_id = ?"); arguments += [group] }
        if let status = filter.status { clauses.append("d.status = ?"); arguments += [status.rawValue] }
        if let lent = filter.isLent { clauses.append(lent ? "r.id IS NOT NULL" : "r.id IS NULL") }
        if let nfc = filter.isNFCRegistered { clauses.append("d.is_nfc_registered = ?"); arguments += [nfc] }
        if let text = filter.text, !text.isEmpty {
            let pattern = "%" + Self.escapeLike(text) + "%"
            clauses.append("(d.id LIKE ? ESCAPE '\\' OR d.model LIKE ? ESCAPE '\\' OR d.serial_number LIKE ? ESCAPE '\\')")
            arguments += [pattern, pattern, pattern]
        }
        if let cursor = page.cursor { clauses.append("d.id > ?"); arguments += [cursor] }
        let sql = "\(Self.deviceRecordSelect) \(Self.whereSQL(clauses)) ORDER BY d.id LIMIT ?"
        arguments += [page.limit + 1]
        let rows = try await pool.read { [arguments] db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.decodeDeviceRecord)
        }
        return Self.page(rows, limit: page.limit) { $0.device.id }
    }

    public func deviceLog(deviceId: DeviceID, page: PageRequest) async throws -> Page<DeviceLogEntry> {
        var sql = "SELECT id, device_id, operation, field, old_value, new_value, at FROM device_log WHERE device_id = ?"
        var arguments: StatementArguments = [deviceId]
        if let cursor = page.cursor {
            guard let id = Int64(cursor) else { throw LendingError.invalidCursor(cursor) }
            sql += " AND id < ?"
            arguments += [id]
        }
        sql += " ORDER BY id DESC LIMIT ?"
        arguments += [page.limit + 1]
        let entries = try await pool.read { [sql, arguments] db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                DeviceLogEntry(id: row[0], deviceId: row[1],
                               operation: DeviceLogOperation(rawValue: row[2]) ?? .update,
                               field: row[3], oldValue: row[4], newValue: row[5], at: Millis.date(row[6]))
            }
        }
        return Self.page(entries, limit: page.limit) { String($0.id) }
    }

    // MARK: Users

    public func addUser(_ user: User) async throws {
        try Self.requireNonEmpty(user.id, "user ID")
        try await write { db in
            if try Self.exists(db, "SELECT 1 FROM users WHERE id = ?", [user.id]) {
                throw LendingError.userAlreadyExists(user.id)
            }
            try db.execute(sql: "INSERT INTO users (id, name, registered_at) VALUES (?, ?, ?)",
                           arguments: [user.id, user.name, Millis.from(user.registeredAt)])
        }
    }

    public func updateUser(_ user: User) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE users SET name = ?, registered_at = ? WHERE id = ?",
                           arguments: [user.name, Millis.from(user.registeredAt), user.id])
            if db.changesCount == 0 { throw LendingError.noSuchUser(user.id) }
        }
    }

    public func deleteUser(id: UserID) async throws {
        try await write { db in
            let lent = try String.fetchAll(db, sql: """
                SELECT device_id FROM rentals WHERE user_id = ? AND returned_at IS NULL ORDER BY device_id
                """, arguments: [id])
            if !lent.isEmpty { throw LendingError.userHasDevices(id, deviceIds: lent) }
            try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw LendingError.noSuchUser(id) }
        }
    }

    public func user(id: UserID) async throws -> User? {
        try await pool.read { db in try Self.fetchUser(db, id: id) }
    }

    public func users(nameContains: String?, page: PageRequest) async throws -> Page<User> {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let text = nameContains, !text.isEmpty {
            clauses.append("name LIKE ? ESCAPE '\\'")
            arguments += ["%" + Self.escapeLike(text) + "%"]
        }
        if let cursor = page.cursor { clauses.append("id > ?"); arguments += [cursor] }
        let sql = "SELECT id, name, registered_at FROM users \(Self.whereSQL(clauses)) ORDER BY id LIMIT ?"
        arguments += [page.limit + 1]
        let users = try await pool.read { [arguments] db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.decodeUser)
        }
        return Self.page(users, limit: page.limit) { $0.id }
    }

    // MARK: Badges and tags

    public func addBadge(_ badge: Badge) async throws {
        let identifier = try CardIdentifier.normalize(badge.identifier, kind: badge.kind)
        try await write { db in
            guard try Self.fetchUser(db, id: badge.userId) != nil else { throw LendingError.noSuchUser(badge.userId) }
            try Self.requireUIDFree(db, identifier)
            try db.execute(sql: """
                INSERT INTO badges (identifier, kind, user_id, registered_at, label) VALUES (?, ?, ?, ?, ?)
                """, arguments: [identifier, badge.kind.rawValue, badge.userId, Millis.from(badge.registeredAt), badge.label])
        }
    }

    public func deleteBadge(identifier: String) async throws {
        let canonical = CardIdentifier.canonical(identifier) ?? identifier
        try await write { db in
            try db.execute(sql: "DELETE FROM badges WHERE identifier = ?", arguments: [canonical])
            if db.changesCount == 0 { throw LendingError.noSuchBadge(identifier) }
        }
    }

    public func badges(userId: UserID) async throws -> [Badge] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT identifier, kind, user_id, registered_at, label FROM badges WHERE user_id = ? ORDER BY identifier
                """, arguments: [userId]).map(Self.decodeBadge)
        }
    }

    public func bindTag(_ binding: TagBinding) async throws {
        let uid = try Self.canonicalUID(binding.uid)
        try await write { db in
            try Self.bind(db, uid: uid, deviceId: binding.deviceId, at: binding.boundAt)
        }
    }

    public func unbindTag(uid: String) async throws {
        let canonical = CardIdentifier.canonical(uid) ?? uid
        try await write { db in
            try db.execute(sql: "DELETE FROM tag_bindings WHERE uid = ?", arguments: [canonical])
            if db.changesCount == 0 { throw LendingError.noSuchTagBinding(uid) }
        }
    }

    public func tagBindings(deviceId: DeviceID) async throws -> [TagBinding] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT uid, device_id, bound_at FROM tag_bindings WHERE device_id = ? ORDER BY uid",
                             arguments: [deviceId])
                .map { TagBinding(uid: $0[0], deviceId: $0[1], boundAt: Millis.date($0[2])) }
        }
    }

    public func registerTag(uid: String, deviceId: DeviceID, at: Date) async throws {
        let uid = try Self.canonicalUID(uid)
        try await write { db in
            try Self.bind(db, uid: uid, deviceId: deviceId, at: at)
            let wasRegistered = try Bool.fetchOne(db, sql: "SELECT is_nfc_registered FROM devices WHERE id = ?",
                                                  arguments: [deviceId]) ?? false
            if !wasRegistered {
                try db.execute(sql: "UPDATE devices SET is_nfc_registered = 1 WHERE id = ?", arguments: [deviceId])
                _ = try Self.log(db, deviceId, .update, "isNFCRegistered", "false", "true", at)
            }
        }
    }

    public func resolve(uid: String) async throws -> UIDBinding? {
        guard let canonical = CardIdentifier.canonical(uid) else { return nil }
        return try await pool.read { db in
            if let row = try Row.fetchOne(db, sql: """
                \(Self.deviceRecordSelect) JOIN tag_bindings t ON t.device_id = d.id WHERE t.uid = ?
                """, arguments: [canonical]) {
                return .device(Self.decodeDeviceRecord(row))
            }
            if let row = try Row.fetchOne(db, sql: """
                SELECT b.identifier, b.kind, b.user_id, b.registered_at, b.label, u.id, u.name, u.registered_at
                FROM badges b JOIN users u ON u.id = b.user_id WHERE b.identifier = ?
                """, arguments: [canonical]) {
                let user = User(id: row[5], name: row[6], registeredAt: Millis.date(row[7]))
                return .badge(Self.decodeBadge(row), user)
            }
            return nil
        }
    }

    // MARK: Rentals

    public func lend(_ request: LendRequest) async throws -> Rental {
        if let due = request.dueAt, due < request.at {
            throw LendingError.invalidField("due date", reason: "\(LendingFormat.iso8601(due)) is before the lend time")
        }
        return try await write { db in
            guard let device = try Self.fetchDevice(db, id: request.deviceId) else {
                throw LendingError.noSuchDevice(request.deviceId)
            }
            if let active = try Self.fetchActiveRental(db, deviceId: device.id) {
                throw LendingError.alreadyLent(device.id, userId: active.userId, userName: active.userName, since: active.rentedAt)
            }
            guard device.status == .normal else { throw LendingError.notLendable(device.id, status: device.status) }
            guard let user = try Self.fetchUser(db, id: request.userId) else { throw LendingError.noSuchUser(request.userId) }
            do {
                try db.execute(sql: """
                    INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name,
                                         rented_at, due_at, location)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [
                        device.id, device.model, device.osVersion, device.serialNumber, user.id, user.name,
                        Millis.from(request.at), request.dueAt.map(Millis.from), request.location,
                    ])
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                // The unique index is the final arbiter (e.g. a writer that skipped the check above).
                let active = try Self.fetchActiveRental(db, deviceId: device.id)
                throw LendingError.alreadyLent(device.id, userId: active?.userId ?? "?",
                                               userName: active?.userName ?? "?", since: active?.rentedAt ?? request.at)
            }
            // Both checks above rely on the partial unique index; a damaged index page would let a
            // second rental through. Count again without it before committing.
            let active = try Self.activeRentalCountWithoutUniqueIndex(db, deviceId: device.id)
            if active != 1 {
                throw StoreIntegrityViolation(detail: "device \(device.id) would have \(active) active rentals; the index rentals_one_active_per_device is damaged")
            }
            return Rental(id: db.lastInsertedRowID, deviceId: device.id, model: device.model,
                          osVersion: device.osVersion, serialNumber: device.serialNumber, userId: user.id,
                          userName: user.name, rentedAt: Millis.date(Millis.from(request.at)),
                          dueAt: request.dueAt.map { Millis.date(Millis.from($0)) }, location: request.location)
        }
    }

    public func returnDevice(_ request: ReturnRequest) async throws -> Rental {
        try await write { db in
            guard var rental = try Self.fetchActiveRental(db, deviceId: request.deviceId) else {
                if try Self.exists(db, "SELECT 1 FROM devices WHERE id = ?", [request.deviceId]) {
                    throw LendingError.notLent(request.deviceId)
                }
                throw LendingError.noSuchDevice(request.deviceId)
            }
            // Clocks of two readers may disagree: never record a return before the lend.
            let returnedAt = max(Millis.from(request.at), Millis.from(rental.rentedAt))
            try db.execute(sql: """
                UPDATE rentals SET returned_at = ?, returned_by = ?, return_location = ?
                WHERE id = ? AND returned_at IS NULL
                """, arguments: [returnedAt, request.returnedBy, request.location, rental.id])
            if db.changesCount != 1 { throw LendingError.notLent(request.deviceId) }
            rental.returnedAt = Millis.date(returnedAt)
            rental.returnedBy = request.returnedBy
            rental.returnLocation = request.location
            return rental
        }
    }

    public func activeRentals(userId: UserID?, page: PageRequest) async throws -> Page<Rental> {
        var clauses = ["r.returned_at IS NULL"]
        var arguments: StatementArguments = []
        if let userId { clauses.append("r.user_id = ?"); arguments += [userId] }
        if let cursor = page.cursor {
            let (t, id) = try Self.parseCursor(cursor)
            clauses.append("(r.rented_at, r.id) > (?, ?)")
            arguments += [t, id]
        }
        // Without statistics the planner prefers the full per-user history index; the
        // partial index only holds active rentals.
        let index = userId == nil ? "rentals_active_by_time" : "rentals_active_by_user"
        let sql = "SELECT \(Self.rentalColumns) FROM rentals r INDEXED BY \(index) \(Self.whereSQL(clauses)) ORDER BY r.rented_at, r.id LIMIT ?"
        arguments += [page.limit + 1]
        let rentals = try await fetchRentals(sql, arguments)
        return Self.page(rentals, limit: page.limit) { "\(Millis.from($0.rentedAt)).\($0.id)" }
    }

    public func overdueRentals(at now: Date, page: PageRequest) async throws -> Page<Rental> {
        var clauses = ["r.returned_at IS NULL", "r.due_at IS NOT NULL", "r.due_at < ?"]
        var arguments: StatementArguments = [Millis.from(now)]
        if let cursor = page.cursor {
            let (t, id) = try Self.parseCursor(cursor)
            clauses.append("(r.due_at, r.id) > (?, ?)")
            arguments += [t, id]
        }
        let sql = "SELECT \(Self.rentalColumns) FROM rentals r \(Self.whereSQL(clauses)) ORDER BY r.due_at, r.id LIMIT ?"
        arguments += [page.limit + 1]
        let rentals = try await fetchRentals(sql, arguments)
        return Self.page(rentals, limit: page.limit) { "\(Millis.from($0.dueAt ?? $0.rentedAt)).\($0.id)" }
    }

    public func history(_ query: HistoryQuery, page: PageRequest) async throws -> Page<Rental> {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let device = query.deviceId { clauses.append("r.device_id = ?"); arguments += [device] }
        if let user = query.userId { clauses.append("r.user_id = ?"); arguments += [user] }
        if let since = query.since { clauses.append("r.rented_at >= ?"); arguments += [Millis.from(since)] }
        if let until = query.until { clauses.append("r.rented_at < ?"); arguments += [Millis.from(until)] }
        if !query.includeActive { clauses.append("r.returned_at IS NOT NULL") }
        if let cursor = page.cursor {
            let (t, id) = try Self.parseCursor(cursor)
            clauses.append("(r.rented_at, r.id) < (?, ?)")
            arguments += [t, id]
        }
        let sql = "SELECT \(Self.rentalColumns) FROM rentals r \(Self.whereSQL(clauses)) ORDER BY r.rented_at DESC, r.id DESC LIMIT ?"
        arguments += [page.limit + 1]
        let rentals = try await fetchRentals(sql, arguments)
        return Self.page(rentals, limit: page.limit) { "\(Millis.from($0.rentedAt)).\($0.id)" }
    }

    private func fetchRentals(_ sql: String, _ arguments: StatementArguments) async throws -> [Rental] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.decodeRental)
        }
    }
}

// MARK: - SQL helpers

/// Dates are stored as INTEGER milliseconds since 1970-01-01 UTC (compact, exact, and
/// ordered for range queries).
enum Millis {
    static func from(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}

extension SQLiteInventoryStore {
    static let deviceColumns = """
        d.id, d.group_id, d.model, d.serial_number, d.os_version, d.status, d.connector_type, \
        d.registered_at, d.note, d.is_nfc_registered
        """
    static let rentalColumns = """
        r.id, r.device_id, r.model, r.os_version, r.serial_number, r.user_id, r.user_name, r.rented_at, \
        r.due_at, r.returned_at, r.returned_by, r.location, r.return_location
        """
    /// A device with its active rental (the join uses the partial unique index).
    static let deviceRecordSelect = """
        SELECT \(deviceColumns), \(rentalColumns)
        FROM devices d LEFT JOIN rentals r ON r.device_id = d.id AND r.returned_at IS NULL
        """

    static func decodeDevice(_ row: Row) -> Device {
        Device(id: row[0], groupId: row[1], model: row[2], serialNumber: row[3], osVersion: row[4],
               status: DeviceStatus(rawValue: row[5]) ?? .normal, connectorType: row[6],
               registeredAt: Millis.date(row[7]), note: row[8], isNFCRegistered: row[9])
    }

    static func decodeRental(_ row: Row, offset i: Int) -> Rental {
        let dueAt: Int64? = row[i + 8]
        let returnedAt: Int64? = row[i + 9]
        return Rental(id: row[i], deviceId: row[i + 1], model: row[i + 2], osVersion: row[i + 3],
                      serialNumber: row[i + 4], userId: row[i + 5], userName: row[i + 6],
                      rentedAt: Millis.date(row[i + 7]), dueAt: dueAt.map(Millis.date),
                      returnedAt: returnedAt.map(Millis.date), returnedBy: row[i + 10],
                      location: row[i + 11], returnLocation: row[i + 12])
    }

    static func decodeRental(_ row: Row) -> Rental { decodeRental(row, offset: 0) }

    static func decodeDeviceRecord(_ row: Row) -> DeviceRecord {
        let rentalId: Int64? = row[10]
        return DeviceRecord(device: decodeDevice(row), activeRental: rentalId == nil ? nil : decodeRental(row, offset: 10))
    }

    static func decodeUser(_ row: Row) -> User {
        User(id: row[0], name: row[1], registeredAt: Millis.date(row[2]))
    }

    static func decodeBadge(_ row: Row) -> Badge {
        Badge(identifier: row[0], kind: BadgeKind(rawValue: row[1]) ?? .iso14443a, userId: row[2],
              registeredAt: Millis.date(row[3]), label: row[4])
    }

    static func fetchDevice(_ db: Database, id: DeviceID) throws -> Device? {
        try Row.fetchOne(db, sql: "SELECT \(deviceColumns) FROM devices d WHERE d.id = ?", arguments: [id]).map(decodeDevice)
    }

    static func fetchActiveRental(_ db: Database, deviceId: DeviceID) throws -> Rental? {
        try Row.fetchOne(db, sql: "SELECT \(rentalColumns) FROM rentals r WHERE r.device_id = ? AND r.returned_at IS NULL",
                         arguments: [deviceId]).map(decodeRental)
    }

    static func fetchUser(_ db: Database, id: UserID) throws -> User? {
        try Row.fetchOne(db, sql: "SELECT id, name, registered_at FROM users WHERE id = ?", arguments: [id]).map(decodeUser)
    }

    static func exists(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> Bool {
        try Row.fetchOne(db, sql: sql, arguments: arguments) != nil
    }

    static func requireGroup(_ db: Database, _ id: GroupID) throws {
        if try !exists(db, "SELECT 1 FROM device_groups WHERE id = ?", [id]) { throw LendingError.noSuchGroup(id) }
    }

    /// A new ID: not empty, no control characters.
    static func requireNonEmpty(_ value: String, _ field: String) throws {
        try TextRules.requirePrintable(value, field)
        if value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw LendingError.invalidField(field, reason: "must not be empty")
        }
    }

    static func canonicalUID(_ uid: String) throws -> String {
        guard let canonical = CardIdentifier.canonical(uid) else {
            throw LendingError.invalidCardIdentifier(uid, reason: "expected hex digits such as 04A1B2C3D4E5F6")
        }
        return canonical
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
        _ old: String?, _ new: String?, _ at: Date
    ) throws -> DeviceLogEntry {
        try db.execute(sql: """
            INSERT INTO device_log (device_id, operation, field, old_value, new_value, at) VALUES (?, ?, ?, ?, ?, ?)
            """, arguments: [deviceId, operation.rawValue, field, old, new, Millis.from(at)])
        return DeviceLogEntry(id: db.lastInsertedRowID, deviceId: deviceId, operation: operation, field: field,
                              oldValue: old, newValue: new, at: Millis.date(Millis.from(at)))
    }

    static func whereSQL(_ clauses: [String]) -> String {
        clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
    }

    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }

    /// Cursor `"<millis>.<id>"` for (time, id) keyset paging.
    static func parseCursor(_ cursor: String) throws -> (Int64, Int64) {
        let parts = cursor.split(separator: ".")
        guard parts.count == 2, let t = Int64(parts[0]), let id = Int64(parts[1]) else {
            throw LendingError.invalidCursor(cursor)
        }
        return (t, id)
    }

    /// Cuts the `limit + 1` rows fetched into a page and the cursor of its last item.
    static func page<T: Sendable>(_ rows: [T], limit: Int, cursor: (T) -> String) -> Page<T> {
        guard rows.count > limit else { return Page(items: rows, nextCursor: nil) }
        let items = Array(rows.prefix(limit))
        return Page(items: items, nextCursor: items.last.map(cursor))
    }
}

/// Settings of an open store, for status output and checks.
public struct StoreDiagnostics: Sendable, Hashable {
    public var path: String
    /// `wal` when open normally.
    public var journalMode: String
    /// 2 = FULL.
    public var synchronous: Int
    public var foreignKeys: Bool
    /// Schema migrations applied to the file, in order.
    public var appliedMigrations: [String]
    /// Schema migrations this binary knows.
    public var knownMigrations: [String]
}

extension SQLiteInventoryStore {
    /// The schema migration identifiers this binary knows, oldest first.
    public static var knownMigrations: [String] { Schema.migrator.migrations }

    /// The writer connection's settings and the schema version.
    public func diagnostics() async throws -> StoreDiagnostics {
        let path = self.path
        return try await pool.writeWithoutTransaction { db in
            StoreDiagnostics(
                path: path,
                journalMode: try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                synchronous: try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1,
                foreignKeys: try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false,
                appliedMigrations: try Schema.migrator.appliedMigrations(db),
                knownMigrations: Schema.migrator.migrations)
        }
    }
}
