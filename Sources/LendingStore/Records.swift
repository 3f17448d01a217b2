import GRDB
import Lending
import Synchronization

// The lending domain's types as GRDB records: rows decode by column name through the types'
// Codable conformance (snake_case columns, dates as INTEGER milliseconds since 1970 UTC), and
// the plain tables are written the same way. `Lending` knows nothing of SQLite; this module
// is the only one that adds the conformances.

/// The column and date conventions of every table.
protocol LendingRecord: FetchableRecord, PersistableRecord, Codable {}

extension LendingRecord {
    public static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy {
        .custom { column in ColumnKey(stringValue: SnakeCaseColumns.key(for: column)) }
    }
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

extension Booking: FetchableRecord, PersistableRecord, LendingRecord {
    public static var databaseTableName: String { "bookings" }
}

/// The coding key of a snake_case column (`group_id` → `groupId`), converted once per column name.
/// GRDB maps every column of every fetched row to its key; its own `convertFromSnakeCase` redid
/// the conversion each time, a fifth of a single-row lookup's CPU (profiled with perf).
enum SnakeCaseColumns {
    private static let cache = Mutex<[String: String]>([:])

    static func key(for column: String) -> String {
        if let hit = cache.withLock({ $0[column] }) { return hit }
        let key = convert(column)
        cache.withLock { $0[column] = key }
        return key
    }

    /// GRDB's (and Foundation's) rule: the first word lowercased, the others capitalized
    /// (`is_nfc_registered` → `isNfcRegistered`); a name without `_` (or, unlike GRDB, with a leading
    /// or trailing one: this schema has none) stays as it is.
    static func convert(_ column: String) -> String {
        let words = column.split(separator: "_")
        guard words.count > 1, !column.hasPrefix("_"), !column.hasSuffix("_") else { return column }
        return words[0].lowercased() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined()
    }
}

/// A coding key named by a string.
struct ColumnKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
