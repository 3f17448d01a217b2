import GRDB
import Lending

/// The schema's versioned migrations. Identifiers are never renamed or removed: a database
/// holding an identifier this list lacks was written by a newer binary and is refused.
enum Schema {
    /// `PRAGMA application_id` of a RoomBridge database ("RBDG").
    static let applicationID: Int32 = 0x5242_4447

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: v1) }
        migrator.registerMigration("v2") { db in try migrateToV2(db) }
        migrator.registerMigration("v3") { db in try db.execute(sql: v3) }
        migrator.registerMigration("v4") { db in try db.execute(sql: v4) }
        migrator.registerMigration("v5") { db in try db.execute(sql: v5) }
        migrator.registerMigration("v6") { db in try db.execute(sql: v6) }
        migrator.registerMigration("v7") { db in try db.execute(sql: v7) }
        migrator.registerMigration("v8") { db in try db.execute(sql: v8) }
        migrator.registerMigration("v9") { db in try db.execute(sql: v9) }
        migrator.registerMigration("v10") { db in try db.execute(sql: v10) }
        migrator.registerMigration("v11") { db in try db.execute(sql: v11) }
        migrator.registerMigration("v12") { db in try db.execute(sql: v12) }
        migrator.registerMigration("v13") { db in try db.execute(sql: v13) }
        migrator.registerMigration("v14") { db in try db.execute(sql: v14) }
        migrator.registerMigration("v15") { db in try db.execute(sql: v15) }
        return migrator
    }

    /// Version 1: the data model as first shipped (group as free text, a stored
    /// `is_rental` flag, no badges or tag bindings, no unique active rental).
    static let v1 = """
        CREATE TABLE devices (
            id TEXT PRIMARY KEY NOT NULL,
            "group" TEXT NOT NULL,
            model TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            os_version TEXT NOT NULL,
            status TEXT NOT NULL,
            connector_type TEXT NOT NULL,
            registered_at INTEGER NOT NULL,
            is_rental INTEGER NOT NULL DEFAULT 0,
            note TEXT,
            is_nfc_registered INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE device_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            device_id TEXT NOT NULL,
            operation_type TEXT NOT NULL,
            field TEXT NOT NULL,
            old_value TEXT,
            new_value TEXT,
            registered_at INTEGER NOT NULL
        );
        CREATE INDEX device_log_by_device ON device_log(device_id);
        CREATE TABLE users (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL,
            registered_at INTEGER
        );
        CREATE TABLE rentals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            device_id TEXT NOT NULL,
            model TEXT NOT NULL,
            os_version TEXT NOT NULL,
            serial_number TEXT NOT NULL,
            user_id TEXT NOT NULL,
            user_name TEXT NOT NULL,
            rented_at INTEGER NOT NULL,
            returned_at INTEGER
        );
        CREATE INDEX rentals_by_device ON rentals(device_id);
        """

    /// Version 2: device groups as a table with stable IDs, badges, tag bindings, due dates,
    /// return details, the one-active-rental-per-device unique index, range-query indexes,
    /// and triggers that keep the invariants even against raw SQL.
    static func migrateToV2(_ db: Database) throws {
        try db.execute(sql: "PRAGMA application_id = \(applicationID)")

        // Groups: stable IDs; legacy free-text groups keep their text as ID.
        try db.execute(sql: """
            CREATE TABLE device_groups (
                id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
                name TEXT NOT NULL,
                sort_order INTEGER NOT NULL DEFAULT 0
            );
            """)
        for group in DeviceGroup.defaults {
            try db.execute(sql: "INSERT INTO device_groups (id, name, sort_order) VALUES (?, ?, ?)",
                           arguments: [group.id, group.name, group.sortOrder])
        }
        try db.execute(sql: """
            INSERT OR IGNORE INTO device_groups (id, name, sort_order)
                SELECT DISTINCT "group", "group", 100 FROM devices;
            """)

        // Device log: names of the domain; survives device deletion (no foreign key).
        try db.execute(sql: """
            ALTER TABLE device_log RENAME COLUMN operation_type TO operation;
            ALTER TABLE device_log RENAME COLUMN registered_at TO at;
            DROP INDEX device_log_by_device;
            CREATE INDEX device_log_by_device ON device_log(device_id, id);
            """)

        // Statuses: v1 stored free text (the earlier lending app wrote 正常 / 故障 / 廃棄). Unknown
        // values become `broken` — not lendable until an administrator looks — and every
        // mapped value is logged with its original text.
        let mappedStatus = """
            CASE
                WHEN lower(trim(status)) IN ('normal', '正常') THEN 'normal'
                WHEN lower(trim(status)) IN ('broken', '故障') THEN 'broken'
                WHEN lower(trim(status)) IN ('disposed', '廃棄') THEN 'disposed'
                ELSE 'broken'
            END
            """
        try db.execute(sql: """
            INSERT INTO device_log (device_id, operation, field, old_value, new_value, at)
                SELECT id, 'update', 'status', status, \(mappedStatus), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
                FROM devices WHERE status NOT IN ('normal', 'broken', 'disposed');
            """)

        // Devices: group becomes a reference; is_rental is dropped (derived from rentals).
        try db.execute(sql: """
            CREATE TABLE devices_v2 (
                id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
                group_id TEXT NOT NULL REFERENCES device_groups(id) ON DELETE RESTRICT,
                model TEXT NOT NULL,
                serial_number TEXT NOT NULL,
                os_version TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('normal', 'broken', 'disposed')),
                connector_type TEXT NOT NULL,
                registered_at INTEGER NOT NULL,
                note TEXT,
                is_nfc_registered INTEGER NOT NULL DEFAULT 0 CHECK (is_nfc_registered IN (0, 1))
            );
            INSERT INTO devices_v2
                SELECT id, "group", model, serial_number, os_version,
                       \(mappedStatus),
                       connector_type, registered_at, note, is_nfc_registered != 0
                FROM devices;
            DROP TABLE devices;
            ALTER TABLE devices_v2 RENAME TO devices;
            CREATE INDEX devices_by_group ON devices(group_id, id);
            CREATE INDEX devices_by_status ON devices(status, id);
            """)

        // Users: registration date becomes mandatory (unknown legacy dates become 0 = 1970).
        try db.execute(sql: """
            UPDATE users SET registered_at = 0 WHERE registered_at IS NULL;
            CREATE TABLE badges (
                identifier TEXT PRIMARY KEY NOT NULL CHECK (length(identifier) > 0),
                kind TEXT NOT NULL CHECK (kind IN ('iso14443a', 'felica')),
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                registered_at INTEGER NOT NULL,
                label TEXT
            );
            CREATE INDEX badges_by_user ON badges(user_id);
            CREATE TABLE tag_bindings (
                uid TEXT PRIMARY KEY NOT NULL CHECK (length(uid) > 0),
                device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                bound_at INTEGER NOT NULL
            );
            CREATE INDEX tag_bindings_by_device ON tag_bindings(device_id);
            """)

        // Rentals: v1 had no uniqueness, so it may hold several open rentals of one device.
        // Keep the newest open; close older ones at the moment the device was lent again.
        try db.execute(sql: """
            ALTER TABLE rentals ADD COLUMN due_at INTEGER;
            ALTER TABLE rentals ADD COLUMN returned_by TEXT;
            ALTER TABLE rentals ADD COLUMN location TEXT;
            ALTER TABLE rentals ADD COLUMN return_location TEXT;
            UPDATE rentals AS old
               SET returned_at = (SELECT MIN(newer.rented_at) FROM rentals AS newer
                                   WHERE newer.device_id = old.device_id AND newer.returned_at IS NULL
                                     AND (newer.rented_at, newer.id) > (old.rented_at, old.id)),
                   return_location = 'closed by migration v2: lent again while open'
             WHERE old.returned_at IS NULL
               AND EXISTS (SELECT 1 FROM rentals AS newer
                            WHERE newer.device_id = old.device_id AND newer.returned_at IS NULL
                              AND (newer.rented_at, newer.id) > (old.rented_at, old.id));
            UPDATE rentals SET returned_at = rented_at WHERE returned_at < rented_at;
            DROP INDEX rentals_by_device;
            CREATE UNIQUE INDEX rentals_one_active_per_device ON rentals(device_id) WHERE returned_at IS NULL;
            CREATE INDEX rentals_active_by_user ON rentals(user_id, rented_at, id) WHERE returned_at IS NULL;
            CREATE INDEX rentals_active_by_time ON rentals(rented_at, id) WHERE returned_at IS NULL;
            CREATE INDEX rentals_by_user ON rentals(user_id, rented_at, id);
            CREATE INDEX rentals_by_device ON rentals(device_id, rented_at, id);
            CREATE INDEX rentals_by_time ON rentals(rented_at, id);
            CREATE INDEX rentals_overdue ON rentals(due_at, id) WHERE returned_at IS NULL AND due_at IS NOT NULL;
            """)

        // Invariants that raw SQL must not break either.
        try db.execute(sql: """
            CREATE TRIGGER rentals_check_insert BEFORE INSERT ON rentals
            BEGIN
                SELECT RAISE(ABORT, 'rental returned before it started') WHERE NEW.returned_at < NEW.rented_at;
                SELECT RAISE(ABORT, 'rental due before it started') WHERE NEW.due_at < NEW.rented_at;
            END;
            CREATE TRIGGER rentals_check_update BEFORE UPDATE OF returned_at, due_at, rented_at ON rentals
            BEGIN
                SELECT RAISE(ABORT, 'rental returned before it started') WHERE NEW.returned_at < NEW.rented_at;
                SELECT RAISE(ABORT, 'rental due before it started') WHERE NEW.due_at < NEW.rented_at;
            END;
            CREATE TRIGGER devices_keep_lent BEFORE DELETE ON devices
            WHEN EXISTS (SELECT 1 FROM rentals WHERE device_id = OLD.id AND returned_at IS NULL)
            BEGIN
                SELECT RAISE(ABORT, 'device is lent');
            END;
            CREATE TRIGGER users_keep_borrowers BEFORE DELETE ON users
            WHEN EXISTS (SELECT 1 FROM rentals WHERE user_id = OLD.id AND returned_at IS NULL)
            BEGIN
                SELECT RAISE(ABORT, 'user has devices');
            END;
            CREATE TRIGGER badges_not_tags BEFORE INSERT ON badges
            WHEN EXISTS (SELECT 1 FROM tag_bindings WHERE uid = NEW.identifier)
            BEGIN
                SELECT RAISE(ABORT, 'uid is bound to a device');
            END;
            CREATE TRIGGER tags_not_badges BEFORE INSERT ON tag_bindings
            WHEN EXISTS (SELECT 1 FROM badges WHERE identifier = NEW.uid)
            BEGIN
                SELECT RAISE(ABORT, 'uid is a badge');
            END;
            """)
    }

    /// Version 3: "only a normal device can be lent" becomes a constraint of the schema, next to
    /// the unique index that says "a device has at most one active rental". The store inserts
    /// a rental in one statement and maps a violation to `LendingError`, so the rules live in
    /// `Lending` and the schema alone guards the data.
    static let v3 = """
        CREATE TRIGGER rentals_only_normal_devices BEFORE INSERT ON rentals
        WHEN EXISTS (SELECT 1 FROM devices WHERE id = NEW.device_id AND status != 'normal')
        BEGIN
            SELECT RAISE(ABORT, 'device is not lendable');
        END;
        """

    /// Version 4: who acted. `rentals.lent_by` (who lent; `returned_by` already says who
    /// returned) and `device_log.actor`, as `ChangeActor` text; null for rows written before.
    static let v4 = """
        ALTER TABLE rentals ADD COLUMN lent_by TEXT;
        ALTER TABLE device_log ADD COLUMN actor TEXT;
        """

    /// Version 5: the return note (the device's condition when it came back).
    static let v5 = """
        ALTER TABLE rentals ADD COLUMN return_note TEXT;
        """

    /// Version 6: which overdue rentals were announced, per due date (a renewal moves the due
    /// date, so a renewed rental that falls overdue again is announced again). Kept across
    /// restarts, and the primary key lets only one of two daemons sharing the file announce.
    static let v6 = """
        CREATE TABLE overdue_announcements (
            rental_id INTEGER NOT NULL REFERENCES rentals(id) ON DELETE CASCADE,
            due_at INTEGER NOT NULL,
            announced_at INTEGER NOT NULL,
            PRIMARY KEY (rental_id, due_at)
        ) WITHOUT ROWID;
        """

    /// The schedules the daemon keeps for curtains that keep none themselves, by curtain name:
    /// times as minutes after midnight in the kiosk's zone.
    static let v7 = """
        CREATE TABLE curtain_schedules (
            curtain TEXT PRIMARY KEY NOT NULL,
            open_minute INTEGER NOT NULL CHECK (open_minute BETWEEN 0 AND 1439),
            open_enabled INTEGER NOT NULL,
            close_minute INTEGER NOT NULL CHECK (close_minute BETWEEN 0 AND 1439),
            close_enabled INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// Version 8: the outbox. One row per lending event and delivery target, written in the
    /// transaction of the change; `seq` orders delivery, `event_id` (a UUID, the same for every
    /// target) is the receivers' idempotency key.
    static let v8 = """
        CREATE TABLE outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL,
            target TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('lend', 'return', 'renew', 'overdue')),
            device_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dropped')),
            last_error TEXT,
            delivered_at INTEGER,
            UNIQUE (event_id, target)
        );
        CREATE INDEX outbox_pending ON outbox(target, device_id, seq) WHERE state = 'pending';
        CREATE INDEX outbox_by_state ON outbox(state, seq);
        """

    /// Version 9: reminders in the outbox (kinds `due` and `digest`; a digest's `device_id` is
    /// empty). SQLite cannot change a CHECK, so the table is rebuilt with its rows and numbering
    /// (its own DDL, not v8's: migrations are frozen).
    static let v9 = """
        CREATE TABLE outbox_v9 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL,
            target TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('lend', 'return', 'renew', 'overdue', 'due', 'digest')),
            device_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dropped')),
            last_error TEXT,
            delivered_at INTEGER,
            UNIQUE (event_id, target)
        );
        INSERT INTO outbox_v9 SELECT * FROM outbox;
        -- AUTOINCREMENT's high-water mark goes along: a seq handed out and since pruned is never reused.
        DELETE FROM sqlite_sequence WHERE name = 'outbox_v9';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_v9', seq FROM sqlite_sequence WHERE name = 'outbox';
        DROP TABLE outbox;
        ALTER TABLE outbox_v9 RENAME TO outbox;
        CREATE INDEX outbox_pending ON outbox(target, device_id, seq) WHERE state = 'pending';
        CREATE INDEX outbox_by_state ON outbox(state, seq);
        """

    /// The messages the schema's triggers raise, as the store recognises them (migrations are
    /// frozen: these texts never change).
    enum Constraint {
        static let deviceNotLendable = "device is not lendable"
        static let deviceIsLent = "device is lent"
        static let userHasDevices = "user has devices"
    }

    /// Version 10: a device with a bound tag is NFC-registered (glossary "registered tag"):
    /// binding sets the flag from now on (``SQLiteInventoryStore/bindTag(_:)``); this sets it
    /// for the devices bound before.
    static let v10 = """
        UPDATE devices SET is_nfc_registered = 1
         WHERE is_nfc_registered = 0 AND EXISTS (SELECT 1 FROM tag_bindings t WHERE t.device_id = devices.id);
        """

    /// Version 11: bookings. The device's model and the user's name are kept by value (no foreign
    /// keys: a booking's history outlives both, as a rental's does). "No overlap" is checked in
    /// the write transaction (``SQLiteInventoryStore/book(_:)``): SQLite has one writer at a time.
    static let v11 = """
        CREATE TABLE bookings (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            device_id TEXT NOT NULL,
            model TEXT NOT NULL,
            user_id TEXT NOT NULL,
            user_name TEXT NOT NULL,
            starts_at INTEGER NOT NULL,
            ends_at INTEGER NOT NULL CHECK (ends_at > starts_at),
            state TEXT NOT NULL DEFAULT 'booked' CHECK (state IN ('booked', 'fulfilled', 'cancelled')),
            booked_at INTEGER NOT NULL,
            booked_by TEXT,
            cancelled_at INTEGER,
            cancelled_by TEXT,
            rental_id INTEGER
        );
        CREATE INDEX bookings_by_device ON bookings(device_id, ends_at);
        CREATE INDEX bookings_by_user ON bookings(user_id, ends_at);
        CREATE INDEX bookings_by_start ON bookings(starts_at, id);
        """

    /// Version 12: booking reminders in the outbox (kind `booking`); the table is rebuilt with its
    /// rows and numbering, as in v9.
    static let v12 = """
        CREATE TABLE outbox_v12 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL,
            target TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('lend', 'return', 'renew', 'overdue', 'due', 'digest', 'booking')),
            device_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dropped')),
            last_error TEXT,
            delivered_at INTEGER,
            UNIQUE (event_id, target)
        );
        INSERT INTO outbox_v12 SELECT * FROM outbox;
        DELETE FROM sqlite_sequence WHERE name = 'outbox_v12';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_v12', seq FROM sqlite_sequence WHERE name = 'outbox';
        DROP TABLE outbox;
        ALTER TABLE outbox_v12 RENAME TO outbox;
        CREATE INDEX outbox_pending ON outbox(target, device_id, seq) WHERE state = 'pending';
        CREATE INDEX outbox_by_state ON outbox(state, seq);
        """

    /// Version 13: stocktakes. `is_open` is 1 while open and NULL once closed: its UNIQUE lets one
    /// stocktake be open at a time, also with two daemons on the file. The taps keep the first tap
    /// of each UID; the entries are the report, stored by value at the close.
    static let v13 = """
        CREATE TABLE stocktakes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope TEXT NOT NULL CHECK (scope IN ('all', 'group', 'location')),
            scope_value TEXT,
            started_at INTEGER NOT NULL,
            started_by TEXT,
            closed_at INTEGER,
            closed_by TEXT,
            is_open INTEGER UNIQUE CHECK (is_open = 1)
        );
        CREATE TABLE stocktake_taps (
            stocktake_id INTEGER NOT NULL REFERENCES stocktakes(id),
            uid TEXT NOT NULL,
            device_id TEXT,
            at INTEGER NOT NULL,
            location TEXT,
            PRIMARY KEY (stocktake_id, uid)
        ) WITHOUT ROWID;
        CREATE INDEX stocktake_taps_by_device ON stocktake_taps(stocktake_id, device_id);
        CREATE TABLE stocktake_entries (
            stocktake_id INTEGER NOT NULL REFERENCES stocktakes(id),
            list TEXT NOT NULL CHECK (list IN ('found', 'missing', 'lent', 'unexpected')),
            device_id TEXT,
            model TEXT,
            serial_number TEXT,
            user_id TEXT,
            user_name TEXT,
            uid TEXT,
            tapped_at INTEGER,
            location TEXT
        );
        CREATE INDEX stocktake_entries_by_stocktake ON stocktake_entries(stocktake_id);
        """

    /// Version 14: the dashboard's ranges over every rental, not only the active ones: by due
    /// date (what fell overdue each day) and by return (how long rentals were out).
    static let v14 = """
        CREATE INDEX rentals_by_due ON rentals(due_at) WHERE due_at IS NOT NULL;
        CREATE INDEX rentals_by_return ON rentals(returned_at) WHERE returned_at IS NOT NULL;
        """

    /// Version 15: a curtain's low battery in the outbox (kind `battery`); the table is rebuilt with its rows and
    /// numbering, as in v12.
    static let v15 = """
        CREATE TABLE outbox_v15 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL,
            target TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('lend', 'return', 'renew', 'overdue', 'due', 'digest', 'booking', 'battery')),
            device_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dropped')),
            last_error TEXT,
            delivered_at INTEGER,
            UNIQUE (event_id, target)
        );
        INSERT INTO outbox_v15 SELECT * FROM outbox;
        DELETE FROM sqlite_sequence WHERE name = 'outbox_v15';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_v15', seq FROM sqlite_sequence WHERE name = 'outbox';
        DROP TABLE outbox;
        ALTER TABLE outbox_v15 RENAME TO outbox;
        CREATE INDEX outbox_pending ON outbox(target, device_id, seq) WHERE state = 'pending';
        CREATE INDEX outbox_by_state ON outbox(state, seq);
        """
}
