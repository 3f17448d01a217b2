import Foundation
import GRDB
import Lending

// Device groups, devices and their change log.
extension SQLiteInventoryStore {
    // MARK: Groups

    public func groups() async throws -> [DeviceGroup] {
        try await read { db in
            try DeviceGroup.order(Column("sort_order"), Column("id")).fetchAll(db)
        }
    }

    public func addGroup(_ group: DeviceGroup) async throws {
        try Validation.group(group, isNew: true)
        try await write { db in
            if try Self.exists(db, "SELECT 1 FROM device_groups WHERE id = ?", [group.id]) {
                throw LendingError.groupAlreadyExists(group.id)
            }
            try Self.requireNoCaseTwin(db, "device_groups", group.id, field: "group ID")
            try group.insert(db)
        }
    }

    public func updateGroup(_ group: DeviceGroup) async throws {
        try Validation.group(group, isNew: false)
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

    public func addDevice(_ device: Device, at: Date, by actor: ChangeActor?) async throws {
        try Validation.device(device, isNew: true)
        try await write { db in try Self.insertDevice(db, device, at: at, by: actor) }
    }

    /// Inserts a validated device and logs its fields.
    static func insertDevice(_ db: Database, _ device: Device, at: Date, by actor: ChangeActor?) throws {
        if try exists(db, "SELECT 1 FROM devices WHERE id = ?", [device.id]) {
            throw LendingError.deviceAlreadyExists(device.id)
        }
        try requireNoCaseTwin(db, "devices", device.id, field: "device ID")
        try requireGroup(db, device.groupId)
        try device.insert(db)
        for (field, value) in device.loggedFields where value != nil {
            _ = try log(db, device.id, .add, field, nil, value, at, actor)
        }
    }

    @discardableResult
    public func updateDevice(_ device: Device, at: Date, by actor: ChangeActor?) async throws -> [DeviceLogEntry] {
        try Validation.device(device, isNew: false)
        return try await write { db in
            guard let old = try Self.fetchDevice(db, id: device.id) else { throw LendingError.noSuchDevice(device.id) }
            return try Self.updateDevice(db, from: old, to: device, at: at, by: actor)
        }
    }

    /// Writes a validated device over `old` and logs each field that changed.
    static func updateDevice(_ db: Database, from old: Device, to device: Device, at: Date,
                             by actor: ChangeActor?) throws -> [DeviceLogEntry] {
        if old.groupId != device.groupId { try requireGroup(db, device.groupId) }
        try device.update(db)
        var entries: [DeviceLogEntry] = []
        for (before, after) in zip(old.loggedFields, device.loggedFields) where before.value != after.value {
            entries.append(try log(db, device.id, .update, before.field, before.value, after.value, at, actor))
        }
        return entries
    }

    public func deleteDevice(id: DeviceID, at: Date, by actor: ChangeActor?) async throws {
        try await write { db in
            guard let old = try Self.fetchDevice(db, id: id) else { throw LendingError.noSuchDevice(id) }
            do {
                // The trigger devices_keep_lent refuses deleting a lent device.
                try db.execute(sql: "DELETE FROM devices WHERE id = ?", arguments: [id])
            } catch let error as DatabaseError where error.message == Schema.Constraint.deviceIsLent {
                throw LendingError.deviceIsLent(id, userId: try Self.fetchActiveRental(db, deviceId: id)?.userId ?? "?")
            }
            for (field, value) in old.loggedFields where value != nil {
                _ = try Self.log(db, id, .delete, field, value, nil, at, actor)
            }
            try Self.cancelBookingsToCome(db, column: "device_id", id, at: at, by: actor)
        }
    }

    public func device(id: DeviceID) async throws -> DeviceRecord? {
        // The statement is prepared once per reader connection (cachedStatement), not per call.
        try await read { db in
            try Row.fetchOne(db.cachedStatement(sql: "\(Self.deviceRecordSelect) WHERE d.id = ?"), arguments: [id])
                .map(Self.decodeDeviceRecord)
        }
    }

    /// One read: the device and its tags from one snapshot, one hop to the read queue.
    public func deviceDetail(id: DeviceID) async throws -> DeviceDetail? {
        try await read { db in try Self.deviceDetail(db, id: id) }
    }

    static func deviceDetail(_ db: Database, id: DeviceID) throws -> DeviceDetail? {
        guard let record = try Row.fetchOne(db.cachedStatement(sql: "\(Self.deviceRecordSelect) WHERE d.id = ?"),
                                            arguments: [id]).map(Self.decodeDeviceRecord) else { return nil }
        return DeviceDetail(record: record, tags: try Self.tagBindings(db, deviceId: id))
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
        let rows = try await read { [arguments] db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.decodeDeviceRecord)
        }
        return Self.page(rows, limit: page.limit) { $0.device.id }
    }

    public func deviceLog(deviceId: DeviceID, page: PageRequest) async throws -> Page<DeviceLogEntry> {
        var sql = "SELECT id, device_id, operation, field, old_value, new_value, at, actor FROM device_log WHERE device_id = ?"
        var arguments: StatementArguments = [deviceId]
        if let cursor = page.cursor {
            guard let id = Int64(cursor) else { throw LendingError.invalidCursor(cursor) }
            sql += " AND id < ?"
            arguments += [id]
        }
        sql += " ORDER BY id DESC LIMIT ?"
        arguments += [page.limit + 1]
        let entries = try await read { [sql, arguments] db in
            try DeviceLogEntry.fetchAll(db, sql: sql, arguments: arguments)
        }
        return Self.page(entries, limit: page.limit) { String($0.id) }
    }
}
