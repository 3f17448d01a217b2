/// A database as schema version 1 left it (a frozen copy, independent of the migrations in
/// the product): the first data model, with free-text groups, a stored `is_rental` flag, no
/// badges, and — because v1 had no unique index — two open rentals of D-2.
let schemaV1FixtureSQL = """
    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
    INSERT INTO grdb_migrations VALUES ('v1');
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

    INSERT INTO devices VALUES ('D-1', 'Androidスマホ', 'Pixel 7', 'SN1', '14', '正常', 'USB-C', 1700000000000, 1, NULL, 1);
    INSERT INTO devices VALUES ('D-2', 'iPhone', 'iPhone 12', 'SN2', '17.0', 'normal', 'Lightning', 1700000000000, 1, 'scratched', 0);
    INSERT INTO devices VALUES ('D-3', 'iPhone', 'iPhone 8', 'SN3', '16.7', '故障', 'Lightning', 1700000000000, 0, NULL, 0);
    INSERT INTO devices VALUES ('D-4', 'iPhone', 'iPhone SE', 'SN4', '15.0', '紛失', 'Lightning', 1700000000000, 0, NULL, 0);
    INSERT INTO device_log (device_id, operation_type, field, old_value, new_value, registered_at)
        VALUES ('D-2', 'update', 'osVersion', '16.0', '17.0', 1700000100000);
    INSERT INTO users VALUES ('U-1', '山田', 1700000000000);
    INSERT INTO users VALUES ('U-2', 'Suzuki', NULL);
    INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at)
        VALUES ('D-1', 'Pixel 7', '14', 'SN1', 'U-1', '山田', 1700000200000, 1700000300000);
    INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at)
        VALUES ('D-1', 'Pixel 7', '14', 'SN1', 'U-2', 'Suzuki', 1700000400000, NULL);
    INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at)
        VALUES ('D-2', 'iPhone 12', '17.0', 'SN2', 'U-1', '山田', 1700000500000, NULL);
    INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, returned_at)
        VALUES ('D-2', 'iPhone 12', '17.0', 'SN2', 'U-2', 'Suzuki', 1700000600000, NULL);
    """
