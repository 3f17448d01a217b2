import Foundation
import GRDB
import Lending
import struct RoomBridgeCore.TagUID

// Users, their badges, and the tag UIDs bound to devices.
extension SQLiteInventoryStore {
    // MARK: Users

    public func addUser(_ user: User) async throws {
        try Validation.user(user, isNew: true)
        try await write { db in try Self.insertUser(db, user) }
    }

    /// Inserts a validated user (``Validation/user(_:isNew:)``).
    static func insertUser(_ db: Database, _ user: User) throws {
        if try exists(db, "SELECT 1 FROM users WHERE id = ?", [user.id]) {
            throw LendingError.userAlreadyExists(user.id)
        }
        try requireNoCaseTwin(db, "users", user.id, field: "user ID")
        try user.insert(db)
    }

    public func updateUser(_ user: User) async throws {
        try Validation.user(user, isNew: false)
        try await write { db in
            do {
                try user.update(db)
            } catch is RecordError {
                throw LendingError.noSuchUser(user.id)
            }
        }
    }

    public func deleteUser(id: UserID, at: Date, by actor: ChangeActor?) async throws {
        try await write { db in
            do {
                // The trigger users_keep_borrowers refuses deleting a user who has devices.
                try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
            } catch let error as DatabaseError where error.message == Schema.Constraint.userHasDevices {
                let lent = try String.fetchAll(db, sql: """
                    SELECT device_id FROM rentals WHERE user_id = ? AND returned_at IS NULL ORDER BY device_id
                    """, arguments: [id])
                throw LendingError.userHasDevices(id, deviceIds: lent)
            }
            if db.changesCount == 0 { throw LendingError.noSuchUser(id) }
            try Self.cancelBookingsToCome(db, column: "user_id", id, at: at, by: actor)
        }
    }

    public func user(id: UserID) async throws -> User? {
        try await read { db in try Self.fetchUser(db, id: id) }
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
        let users = try await read { [arguments] db in
            try User.fetchAll(db, sql: sql, arguments: arguments)
        }
        return Self.page(users, limit: page.limit) { $0.id }
    }

    // MARK: Badges and tags

    public func addBadge(_ badge: Badge) async throws {
        var canonical = badge
        canonical.identifier = try CardIdentifier.normalize(badge.identifier, kind: badge.kind)
        try await write { [canonical] db in try Self.insertBadge(db, canonical) }
    }

    /// Inserts a badge whose identifier is canonical (``CardIdentifier/normalize(_:kind:)``).
    static func insertBadge(_ db: Database, _ badge: Badge) throws {
        guard try fetchUser(db, id: badge.userId) != nil else { throw LendingError.noSuchUser(badge.userId) }
        try requireUIDFree(db, badge.identifier)
        try badge.insert(db)
    }

    public func deleteBadge(identifier: TagUID) async throws {
        let canonical = identifier.hex
        try await write { db in
            try db.execute(sql: "DELETE FROM badges WHERE identifier = ?", arguments: [canonical])
            if db.changesCount == 0 { throw LendingError.noSuchBadge(identifier.hex) }
        }
    }

    public func badges(userId: UserID) async throws -> [Badge] {
        try await read { db in
            try Badge.filter(Column("user_id") == userId).order(Column("identifier")).fetchAll(db)
        }
    }

    public func allBadges(page: PageRequest) async throws -> Page<Badge> {
        let badges = try await read { db in
            var query = Badge.order(Column("identifier")).limit(page.limit + 1)
            if let cursor = page.cursor { query = query.filter(Column("identifier") > cursor) }
            return try query.fetchAll(db)
        }
        return Self.page(badges, limit: page.limit) { $0.identifier }
    }

    /// Binds a tag's UID to a device, which makes the device NFC-registered (as writing its tag
    /// does, ``registerTag(uid:deviceId:at:by:)``): a bound UID is a registered tag.
    public func bindTag(_ binding: TagBinding) async throws {
        try await registerTag(uid: binding.uid, deviceId: binding.deviceId, at: binding.boundAt, by: nil)
    }

    public func unbindTag(uid: TagUID, by actor: ChangeActor?) async throws {
        let canonical = uid.hex
        try await write { db in
            guard let deviceId = try String.fetchOne(db, sql: "DELETE FROM tag_bindings WHERE uid = ? RETURNING device_id",
                                                     arguments: [canonical]) else { throw LendingError.noSuchTagBinding(uid.hex) }
            // Its last tag gone, the device is no longer NFC-registered.
            if try !Self.exists(db, "SELECT 1 FROM tag_bindings WHERE device_id = ?", [deviceId]) {
                try db.execute(sql: "UPDATE devices SET is_nfc_registered = 0 WHERE id = ? AND is_nfc_registered = 1", arguments: [deviceId])
                if db.changesCount == 1 { _ = try Self.log(db, deviceId, .update, "isNFCRegistered", "true", "false", Date(), actor) }
            }
        }
    }

    public func tagBindings(deviceId: DeviceID) async throws -> [TagBinding] {
        try await read { db in try Self.tagBindings(db, deviceId: deviceId) }
    }

    static func tagBindings(_ db: Database, deviceId: DeviceID) throws -> [TagBinding] {
        try TagBinding.fetchAll(db.cachedStatement(sql: "SELECT uid, device_id, bound_at FROM tag_bindings WHERE device_id = ? ORDER BY uid"),
                                arguments: [deviceId])
    }

    public func registerTag(uid: TagUID, deviceId: DeviceID, at: Date, by actor: ChangeActor?) async throws {
        try await write { db in
            try Self.bind(db, uid: uid.hex, deviceId: deviceId, at: at)
            let wasRegistered = try Bool.fetchOne(db, sql: "SELECT is_nfc_registered FROM devices WHERE id = ?",
                                                  arguments: [deviceId]) ?? false
            if !wasRegistered {
                try db.execute(sql: "UPDATE devices SET is_nfc_registered = 1 WHERE id = ?", arguments: [deviceId])
                _ = try Self.log(db, deviceId, .update, "isNFCRegistered", "false", "true", at, actor)
            }
        }
    }

    public func resolve(uid: TagUID) async throws -> UIDBinding? {
        let canonical = uid.hex
        return try await read { db in
            if let row = try Row.fetchOne(db.cachedStatement(sql: """
                \(Self.deviceRecordSelect) JOIN tag_bindings t ON t.device_id = d.id WHERE t.uid = ?
                """), arguments: [canonical]) {
                return .device(try Self.decodeDeviceRecord(row))
            }
            guard let badge = try Badge.fetchOne(db, key: canonical),
                  let user = try User.fetchOne(db, key: badge.userId) else { return nil }
            return .badge(badge, user)
        }
    }
}
