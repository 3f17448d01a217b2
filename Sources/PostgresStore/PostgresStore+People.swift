#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import struct RoomBridgeCore.TagUID
import Logging
import PostgresNIO

// Users, their badges, and the tag UIDs bound to devices.
extension PostgresInventoryStore {
    // MARK: Users

    public func addUser(_ user: User) async throws {
        try Validation.user(user, isNew: true)
        let logger = self.logger
        try await transaction { c in try await Self.insertUser(c, user, logger: logger) }
    }

    /// Inserts a validated user (``Validation/user(_:isNew:)``).
    static func insertUser(_ c: PostgresConnection, _ user: User, logger: Logger) async throws {
        let inserted = try await changed(c, """
            INSERT INTO users (id, name, registered_at) VALUES (\(user.id), \(user.name), \(StoreConventions.millis(user.registeredAt)))
            ON CONFLICT (id) DO NOTHING RETURNING 1
            """, logger: logger)
        if inserted == 0 { throw LendingError.userAlreadyExists(user.id) }
        try await requireNoCaseTwin(c, "users", user.id, field: "user ID", logger: logger)
    }

    public func updateUser(_ user: User) async throws {
        try Validation.user(user, isNew: false)
        let logger = self.logger
        try await transaction { c in
            let updated = try await Self.changed(c, """
                UPDATE users SET name = \(user.name), registered_at = \(StoreConventions.millis(user.registeredAt))
                WHERE id = \(user.id) RETURNING 1
                """, logger: logger)
            if updated == 0 { throw LendingError.noSuchUser(user.id) }
        }
    }

    public func deleteUser(id: UserID, at: Date, by actor: ChangeActor?) async throws {
        let logger = self.logger
        let (when, who) = (StoreConventions.millis(at), actor?.text)
        try await transaction { c in
            // The trigger users_keep_borrowers refuses deleting a user who has devices.
            try await c.query("SAVEPOINT delete_user", logger: logger)
            let deleted: Int
            do {
                deleted = try await Self.changed(c, "DELETE FROM users WHERE id = \(id) RETURNING 1", logger: logger)
            } catch let error where Self.serverError(error)?.message == PostgresSchema.Constraint.userHasDevices {
                try await c.query("ROLLBACK TO SAVEPOINT delete_user", logger: logger)
                let lent = try await Self.rows(c, """
                    SELECT device_id FROM rentals WHERE user_id = \(id) AND returned_at IS NULL ORDER BY device_id COLLATE "C"
                    """, logger: logger) { try $0[0].decode(String.self) }
                throw LendingError.userHasDevices(id, deviceIds: lent)
            }
            if deleted == 0 { throw LendingError.noSuchUser(id) }
            // Bookings still to come are cancelled; those already over stay as they were.
            try await c.query("""
                UPDATE bookings SET state = 'cancelled', cancelled_at = \(when), cancelled_by = \(who)
                WHERE user_id = \(id) AND state = 'booked' AND ends_at > \(when)
                """, logger: logger)
        }
    }

    public func user(id: UserID) async throws -> User? {
        try await fetch("SELECT \(unescaped: Columns.user) FROM users WHERE id = \(id)", Decode.user).first
    }

    public func users(nameContains: String?, page: PageRequest) async throws -> Page<User> {
        var s = Statement("SELECT \(Columns.user) FROM users")
        var clauses: [String] = []
        if let text = nameContains, !text.isEmpty {
            clauses.append("name ILIKE \(s.bind("%" + StoreConventions.escapeLike(text) + "%")) ESCAPE '\\'")
        }
        if let cursor = page.cursor { clauses.append("id > \(s.bind(cursor))") }
        s.sql += " \(Statement.whereSQL(clauses)) ORDER BY id LIMIT \(s.bind(Int64(page.limit + 1)))"
        let users = try await fetch(s.query, Decode.user)
        return StoreConventions.page(users, limit: page.limit) { $0.id }
    }

    // MARK: Badges and tags

    public func addBadge(_ badge: Badge) async throws {
        var canonical = badge
        canonical.identifier = try CardIdentifier.normalize(badge.identifier, kind: badge.kind)
        let logger = self.logger
        try await transaction { [canonical] c in try await Self.insertBadge(c, canonical, logger: logger) }
    }

    /// Inserts a badge whose identifier is canonical (``CardIdentifier/normalize(_:kind:)``).
    static func insertBadge(_ c: PostgresConnection, _ badge: Badge, logger: Logger) async throws {
        let identifier = badge.identifier
        guard try await exists(c, "SELECT 1 FROM users WHERE id = \(badge.userId) FOR KEY SHARE", logger: logger) else {
            throw LendingError.noSuchUser(badge.userId)
        }
        try await requireUIDFree(c, identifier, logger: logger)
        try await c.query("SAVEPOINT add_badge", logger: logger)
        do {
            try await c.query("""
                INSERT INTO badges (identifier, kind, user_id, registered_at, label)
                VALUES (\(identifier), \(badge.kind.rawValue), \(badge.userId), \(StoreConventions.millis(badge.registeredAt)), \(badge.label))
                """, logger: logger)
        } catch let error where isUniqueOrTriggerRefusal(error) {
            // Another kiosk bound the UID meanwhile: say to what.
            try await c.query("ROLLBACK TO SAVEPOINT add_badge", logger: logger)
            try await requireUIDFree(c, identifier, logger: logger)
            throw error
        }
    }

    public func deleteBadge(identifier: TagUID) async throws {
        let canonical = identifier.hex
        let logger = self.logger
        try await transaction { c in
            let deleted = try await Self.changed(c, "DELETE FROM badges WHERE identifier = \(canonical) RETURNING 1", logger: logger)
            if deleted == 0 { throw LendingError.noSuchBadge(identifier.hex) }
        }
    }

    public func badges(userId: UserID) async throws -> [Badge] {
        try await fetch("SELECT \(unescaped: Columns.badge) FROM badges WHERE user_id = \(userId) ORDER BY identifier COLLATE \"C\"",
                        Decode.badge)
    }

    public func allBadges(page: PageRequest) async throws -> Page<Badge> {
        var s = Statement("SELECT \(Columns.badge) FROM badges")
        if let cursor = page.cursor { s.sql += " WHERE identifier > \(s.bind(cursor)) COLLATE \"C\"" }
        s.sql += " ORDER BY identifier COLLATE \"C\" LIMIT \(s.bind(Int64(page.limit + 1)))"
        let badges = try await fetch(s.query, Decode.badge)
        return StoreConventions.page(badges, limit: page.limit) { $0.identifier }
    }

    /// Binds a tag's UID to a device, which makes the device NFC-registered (as writing its tag
    /// does): a bound UID is a registered tag.
    public func bindTag(_ binding: TagBinding) async throws {
        try await registerTag(uid: binding.uid, deviceId: binding.deviceId, at: binding.boundAt, by: nil)
    }

    public func unbindTag(uid: TagUID, by actor: ChangeActor?) async throws {
        let canonical = uid.hex
        let logger = self.logger
        try await transaction { c in
            guard let deviceId = try await Self.rows(c, "DELETE FROM tag_bindings WHERE uid = \(canonical) RETURNING device_id",
                                                     logger: logger, { try $0[0].decode(String.self) }).first
            else { throw LendingError.noSuchTagBinding(uid.hex) }
            // Its last tag gone, the device is no longer NFC-registered.
            if try await !Self.exists(c, "SELECT 1 FROM tag_bindings WHERE device_id = \(deviceId)", logger: logger) {
                let changed = try await Self.changed(c, """
                    UPDATE devices SET is_nfc_registered = false WHERE id = \(deviceId) AND is_nfc_registered RETURNING 1
                    """, logger: logger)
                if changed == 1 { _ = try await Self.log(c, deviceId, .update, "isNFCRegistered", "true", "false", Date(), actor, logger: logger) }
            }
        }
    }

    public func tagBindings(deviceId: DeviceID) async throws -> [TagBinding] {
        try await fetch("SELECT uid, device_id, bound_at FROM tag_bindings WHERE device_id = \(deviceId) ORDER BY uid COLLATE \"C\"",
                        Decode.tagBinding)
    }

    public func registerTag(uid: TagUID, deviceId: DeviceID, at: Date, by actor: ChangeActor?) async throws {
        let logger = self.logger
        try await transaction { c in
            try await Self.bind(c, uid: uid.hex, deviceId: deviceId, at: at, logger: logger)
            let changed = try await Self.changed(c, """
                UPDATE devices SET is_nfc_registered = true WHERE id = \(deviceId) AND NOT is_nfc_registered RETURNING 1
                """, logger: logger)
            if changed == 1 {
                _ = try await Self.log(c, deviceId, .update, "isNFCRegistered", "false", "true", at, actor, logger: logger)
            }
        }
    }

    public func resolve(uid: TagUID) async throws -> UIDBinding? {
        let canonical = uid.hex
        let logger = self.logger
        return try await withConnection { c in
            if let record = try await Self.rows(c, """
                \(unescaped: Columns.deviceRecordSelect) JOIN tag_bindings t ON t.device_id = d.id WHERE t.uid = \(canonical)
                """, logger: logger, Decode.deviceRecord).first {
                return .device(record)
            }
            guard let badge = try await Self.rows(c, "SELECT \(unescaped: Columns.badge) FROM badges WHERE identifier = \(canonical)",
                                                  logger: logger, Decode.badge).first,
                  let user = try await Self.rows(c, "SELECT \(unescaped: Columns.user) FROM users WHERE id = \(badge.userId)",
                                                 logger: logger, Decode.user).first else { return nil }
            return .badge(badge, user)
        }
    }

    static func bind(_ c: PostgresConnection, uid: String, deviceId: DeviceID, at: Date, logger: Logger) async throws {
        guard try await exists(c, "SELECT 1 FROM devices WHERE id = \(deviceId) FOR KEY SHARE", logger: logger) else {
            throw LendingError.noSuchDevice(deviceId)
        }
        try await requireUIDFree(c, uid, exceptDevice: deviceId, logger: logger)
        if try await exists(c, "SELECT 1 FROM tag_bindings WHERE uid = \(uid)", logger: logger) { return }
        try await c.query("SAVEPOINT bind_tag", logger: logger)
        do {
            try await c.query("""
                INSERT INTO tag_bindings (uid, device_id, bound_at) VALUES (\(uid), \(deviceId), \(StoreConventions.millis(at)))
                """, logger: logger)
        } catch let error where isUniqueOrTriggerRefusal(error) {
            // Bound meanwhile (by another kiosk): to this device is fine, as when it was bound before.
            try await c.query("ROLLBACK TO SAVEPOINT bind_tag", logger: logger)
            try await requireUIDFree(c, uid, exceptDevice: deviceId, logger: logger)
            if try await !exists(c, "SELECT 1 FROM tag_bindings WHERE uid = \(uid) AND device_id = \(deviceId)", logger: logger) {
                throw error
            }
        }
    }

    /// A unique violation (23505) or a trigger's refusal (P0001).
    static func isUniqueOrTriggerRefusal(_ error: any Error) -> Bool {
        guard let state = serverError(error)?.state else { return false }
        return state == "23505" || state == "P0001"
    }
}
