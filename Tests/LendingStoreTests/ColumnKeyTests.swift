import GRDB
@testable import LendingStore
import Testing

/// The keys GRDB's own `convertFromSnakeCase` gives a row's columns.
private struct GRDBKeys: Decodable, FetchableRecord {
    static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
    let keys: Set<String>
    init(from decoder: any Decoder) throws {
        keys = Set(try decoder.container(keyedBy: ColumnKey.self).allKeys.map(\.stringValue))
    }
}

/// The keys the store's records give them (``SnakeCaseColumns``).
private struct StoreKeys: Decodable, FetchableRecord {
    static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy {
        .custom { ColumnKey(stringValue: SnakeCaseColumns.key(for: $0)) }
    }
    let keys: Set<String>
    init(from decoder: any Decoder) throws {
        keys = Set(try decoder.container(keyedBy: ColumnKey.self).allKeys.map(\.stringValue))
    }
}

@Suite struct ColumnKeyTests {
    @Test func everyColumnOfTheSchemaGetsTheKeyGRDBWouldGiveIt() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try await seededStore(dir)
        try store.close()
        let queue = try DatabaseQueue(path: dir.database)
        defer { try? queue.close() }
        let tables = try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        }
        #expect(tables.contains("rentals") && tables.contains("devices"))
        for table in tables {
            let (grdb, ours) = try await queue.read { db in
                // A row with every column of the table (all NULL) to decode.
                let columns = try db.columns(in: table).map(\.name)
                let select = "SELECT " + columns.map { "NULL AS \"\($0)\"" }.joined(separator: ", ")
                return (try GRDBKeys.fetchOne(db, sql: select)!.keys, try StoreKeys.fetchOne(db, sql: select)!.keys)
            }
            #expect(ours == grdb, "table \(table)")
        }
        #expect(SnakeCaseColumns.convert("is_nfc_registered") == "isNfcRegistered")
        #expect(SnakeCaseColumns.convert("id") == "id")
    }
}
