import GRDB
import Lending

// The lending domain's types as GRDB records: rows decode by column name through the types'
// Codable conformance (snake_case columns, dates as INTEGER milliseconds since 1970 UTC), and
// the plain tables are written the same way. `Lending` knows nothing of SQLite; this module
// is the only one that adds the conformances.

/// The column and date conventions of every table.
protocol LendingRecord: FetchableRecord, PersistableRecord, Codable {}

extension LendingRecord {
    public static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { .convertToSnakeCase }
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .millisecondsSince1970
    }
    /// Rounded like the store's own query arguments (``Millis``), so a value reads back equal.
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .custom { Millis.from($0) }
    }
}

extension DeviceGroup: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "device_groups" }
}

extension Device: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "devices" }
}

extension User: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "users" }
}

extension Badge: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "badges" }
}

extension TagBinding: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "tag_bindings" }
}

extension DeviceLogEntry: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "device_log" }
}

extension Rental: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "rentals" }
}
