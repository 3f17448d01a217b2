#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO

// Device groups, devices and their change log.
extension PostgresInventoryStore {
    // MARK: Groups

    public func groups() async throws -> [DeviceGroup] {
        try await fetch("SELECT id, name, sort_order FROM device_groups ORDER BY sort_order, id") { row in
            var c = Cells(row)
            return DeviceGroup(id: try c.next(), name: try c.next(), sortOrder: Int(try c.next(Int32.self)))
        }
    }

    public func addGroup(_ group: DeviceGroup) async throws {
        try Validation.group(group, isNew: true)
        let logger = self.logger
        try await transaction { c in
            let inserted = try await Self.changed(c, """
                INSERT INTO device_groups (id, name, sort_order) VALUES (\(group.id), \(group.name), \(Int32(clamping: group.sortOrder)))
                ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger: logger)
            if inserted == 0 { throw LendingError.groupAlreadyExists(group.id) }
            try await Self.requireNoCaseTwin(c, "device_groups", group.id, field: "group ID", logger: logger)
        }
    }

    public func updateGroup(_ group: DeviceGroup) async throws {
        try Validation.group(group, isNew: false)
        let logger = self.logger
        try await transaction { c in
            let updated = try await Self.changed(c, """
                UPDATE device_groups SET name = \(group.name), sort_order = \(Int32(clamping: group.sortOrder))
                WHERE id = \(group.id) RETURNING 1
                """, logger: logger)
            if updated == 0 { throw LendingError.noSuchGroup(group.id) }
        }
    }

    public func deleteGroup(id: GroupID) async throws {
        let logger = self.logger
        try await transaction { c in
            // Locks the group row: a device added meanwhile (its foreign key share-locks the
            // row) waits, and this count sees it.
            guard try await Self.exists(c, "SELECT 1 FROM device_groups WHERE id = \(id) FOR UPDATE", logger: logger) else {
                throw LendingError.noSuchGroup(id)
            }
            let count = try await Self.rows(c, "SELECT COUNT(*) FROM devices WHERE group_id = \(id)", logger: logger) {
                try $0[0].decode(Int64.self)
            }.first ?? 0
            if count > 0 { throw LendingError.groupInUse(id, deviceCount: Int(count)) }
            try await c.query("DELETE FROM device_groups WHERE id = \(id)", logger: logger)
        }
    }

    // MARK: Devices

    public func addDevice(_ device: Device, at: Date, by actor: ChangeActor?) async throws {
        try Validation.device(device, isNew: true)
        let logger = self.logger
        try await transaction { c in try await Self.insertDevice(c, device, at: at, by: actor, logger: logger) }
    }

    /// Inserts a validated device and logs its fields.
    static func insertDevice(_ c: PostgresConnection, _ device: Device, at: Date, by actor: ChangeActor?,
                             logger: Logger) async throws {
        try await requireGroup(c, device.groupId, logger: logger)
        let inserted = try await changed(c, """
            INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type,
                                 registered_at, note, is_nfc_registered)
            VALUES (\(device.id), \(device.groupId), \(device.model), \(device.serialNumber), \(device.osVersion),
                    \(device.status.rawValue), \(device.connectorType), \(StoreConventions.millis(device.registeredAt)),
                    \(device.note), \(device.isNFCRegistered))
            ON CONFLICT (id) DO NOTHING RETURNING 1
            """, logger: logger)
        if inserted == 0 { throw LendingError.deviceAlreadyExists(device.id) }
        try await requireNoCaseTwin(c, "devices", device.id, field: "device ID", logger: logger)
        for (field, value) in device.loggedFields where value != nil {
            _ = try await log(c, device.id, .add, field, nil, value, at, actor, logger: logger)
        }
    }

    @discardableResult
    public func updateDevice(_ device: Device, at: Date, by actor: ChangeActor?) async throws -> [DeviceLogEntry] {
        try Validation.device(device, isNew: false)
        let logger = self.logger
        return try await transaction { c in
            guard let old = try await Self.fetchDevice(c, id: device.id, lock: "FOR UPDATE", logger: logger) else {
                throw LendingError.noSuchDevice(device.id)
            }
            return try await Self.updateDevice(c, from: old, to: device, at: at, by: actor, logger: logger)
        }
    }

    /// Writes a validated device over `old` (read `FOR UPDATE`) and logs each field that changed.
    static func updateDevice(_ c: PostgresConnection, from old: Device, to device: Device, at: Date, by actor: ChangeActor?,
                             logger: Logger) async throws -> [DeviceLogEntry] {
        if old.groupId != device.groupId { try await requireGroup(c, device.groupId, logger: logger) }
        try await c.query("""
            UPDATE devices SET group_id = \(device.groupId), model = \(device.model), serial_number = \(device.serialNumber),
                os_version = \(device.osVersion), status = \(device.status.rawValue), connector_type = \(device.connectorType),
                registered_at = \(StoreConventions.millis(device.registeredAt)), note = \(device.note),
                is_nfc_registered = \(device.isNFCRegistered)
            WHERE id = \(device.id)
            """, logger: logger)
        var entries: [DeviceLogEntry] = []
        for (before, after) in zip(old.loggedFields, device.loggedFields) where before.value != after.value {
            entries.append(try await log(c, device.id, .update, before.field, before.value, after.value, at, actor, logger: logger))
        }
        return entries
    }

    public func deleteDevice(id: DeviceID, at: Date, by actor: ChangeActor?) async throws {
        let logger = self.logger
        try await transaction { c in
            guard let old = try await Self.fetchDevice(c, id: id, logger: logger) else { throw LendingError.noSuchDevice(id) }
            // The trigger devices_keep_lent refuses deleting a lent device.
            try await c.query("SAVEPOINT delete_device", logger: logger)
            do {
                try await c.query("DELETE FROM devices WHERE id = \(id)", logger: logger)
            } catch let error where Self.serverError(error)?.message == PostgresSchema.Constraint.deviceIsLent {
                try await c.query("ROLLBACK TO SAVEPOINT delete_device", logger: logger)
                let userId = try await Self.fetchActiveRental(c, deviceId: id, logger: logger)?.userId ?? "?"
                throw LendingError.deviceIsLent(id, userId: userId)
            }
            for (field, value) in old.loggedFields where value != nil {
                _ = try await Self.log(c, id, .delete, field, value, nil, at, actor, logger: logger)
            }
            // Bookings still to come are cancelled; those already over stay as they were.
            let (when, who) = (StoreConventions.millis(at), actor?.text)
            try await c.query("""
                UPDATE bookings SET state = 'cancelled', cancelled_at = \(when), cancelled_by = \(who)
                WHERE device_id = \(id) AND state = 'booked' AND ends_at > \(when)
                """, logger: logger)
        }
    }

    public func device(id: DeviceID) async throws -> DeviceRecord? {
        try await fetch("\(unescaped: Columns.deviceRecordSelect) WHERE d.id = \(id)", Decode.deviceRecord).first
    }

    public func devices(_ filter: DeviceFilter, page: PageRequest) async throws -> Page<DeviceRecord> {
        var s = Statement(Columns.deviceRecordSelect)
        var clauses: [String] = []
        if let group = filter.groupId { clauses.append("d.group_id = \(s.bind(group))") }
        if let status = filter.status { clauses.append("d.status = \(s.bind(status.rawValue))") }
        if let lent = filter.isLent { clauses.append(lent ? "r.id IS NOT NULL" : "r.id IS NULL") }
        if let nfc = filter.isNFCRegistered { clauses.append("d.is_nfc_registered = \(s.bind(nfc))") }
        if let text = filter.text, !text.isEmpty {
            let p = s.bind("%" + StoreConventions.escapeLike(text) + "%")
            // ILIKE: case-insensitive like SQLite's LIKE (which folds ASCII only).
            clauses.append("(d.id ILIKE \(p) ESCAPE '\\' OR d.model ILIKE \(p) ESCAPE '\\' OR d.serial_number ILIKE \(p) ESCAPE '\\')")
        }
        if let cursor = page.cursor { clauses.append("d.id > \(s.bind(cursor))") }
        s.sql += " \(Statement.whereSQL(clauses)) ORDER BY d.id LIMIT \(s.bind(Int64(page.limit + 1)))"
        let rows = try await fetch(s.query, Decode.deviceRecord)
        return StoreConventions.page(rows, limit: page.limit) { $0.device.id }
    }

    public func deviceLog(deviceId: DeviceID, page: PageRequest) async throws -> Page<DeviceLogEntry> {
        var s = Statement("SELECT \(Columns.deviceLog) FROM device_log WHERE device_id = ")
        s.sql += s.bind(deviceId)
        if let cursor = page.cursor {
            guard let id = Int64(cursor) else { throw LendingError.invalidCursor(cursor) }
            s.sql += " AND id < \(s.bind(id))"
        }
        s.sql += " ORDER BY id DESC LIMIT \(s.bind(Int64(page.limit + 1)))"
        let entries = try await fetch(s.query, Decode.logEntry)
        return StoreConventions.page(entries, limit: page.limit) { String($0.id) }
    }
}
