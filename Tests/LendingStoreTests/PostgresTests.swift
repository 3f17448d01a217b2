import Foundation
import Lending
@testable import PostgresStore
import PostgresNIO
import Testing

/// What only the PostgreSQL store does: its URL, its migrations table.
@Suite("PostgreSQL store")
struct PostgresTests {
    @Test func urlsParseLikeLibpq() throws {
        let full = try PostgresStoreConfiguration(url: "postgresql://kiosk@db.example:6543/inventory?sslmode=require", password: "pw")
        #expect(full.host == "db.example" && full.port == 6543 && full.username == "kiosk" && full.database == "inventory")
        #expect(full.sslMode == .require && full.password == "pw" && full.unixSocketDirectory == nil)
        let defaults = try PostgresStoreConfiguration(url: "postgres://", password: nil)
        #expect(defaults.host == "localhost" && defaults.port == 5432 && defaults.username == "roombridge")
        #expect(defaults.database == "roombridge" && defaults.sslMode == .prefer)
        let socket = try PostgresStoreConfiguration(url: "postgresql://rb@/rb?host=/run/postgresql", password: nil)
        #expect(socket.unixSocketDirectory == "/run/postgresql" && socket.host == nil)
        #expect(socket.unixSocketPath == "/run/postgresql/.s.PGSQL.5432")
        let encoded = try PostgresStoreConfiguration(url: "postgresql://r%40b@[::1]:5433/d%20b", password: nil)
        #expect(encoded.username == "r@b" && encoded.host == "::1" && encoded.port == 5433 && encoded.database == "d b")
        #expect(full.displayURL == "postgresql://kiosk@db.example:6543/inventory?sslmode=require")

        for (url, reason) in [
            ("mysql://x/y", "must start with postgresql://"),
            ("postgresql://u:secret@h/d", "contains a password"),
            ("postgresql://u@h/d?password=secret", "contains a password"),
            ("postgresql://u@h:99999/d", "port"),
            ("postgresql://u@h/d?sslmode=verify-full", "sslmode must be one of"),
            ("postgresql://u@h/d?application_name=x", "unknown parameter"),
        ] {
            #expect {
                try PostgresStoreConfiguration(url: url, password: nil)
            } throws: { error in
                guard let error = error as? PostgresURLError else { return false }
                return error.reason.contains(reason) && !error.description.contains("secret")
            }
        }
    }

    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func aNewerSchemaIsRefusedAndLeftAsItWas() async throws {
        let database = try await PostgresTestServer.createDatabase()
        let configuration = try PostgresTestServer.configuration(database: database)
        try await PostgresInventoryStore.open(configuration).close()
        try await PostgresTestServer.execute("INSERT INTO schema_migrations (identifier) VALUES ('v99-from-the-future')",
                                             database: database)
        await #expect(throws: PostgresOpenError.newerThanBinary(database: configuration.displayURL,
                                                                unknownMigrations: ["v99-from-the-future"])) {
            try await PostgresInventoryStore.open(configuration)
        }
        #expect(PostgresOpenError.newerThanBinary(database: "d", unknownMigrations: ["v9"]).description
            .contains("upgrade roombridged"))
    }

    /// "Who has device X" finds the active rental through an index on the rental's device: IDs
    /// compare byte by byte in every column (v8), so the join with `devices.id` can use the
    /// rentals' indexes (before, it scanned every active rental: 8 ms a lookup at 1M rentals).
    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func theDeviceLookupUsesTheActiveRentalIndex() async throws {
        let fixture = try await StoreFixture(.postgresql, devices: 3, users: 1)
        defer { fixture.close() }
        let store = try #require(fixture.store as? PostgresInventoryStore)
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0)))
        // Enough active rentals (of devices the store no longer has) for the planner to prefer an index.
        try await fixture.execute("""
            INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at)
              SELECT 'X-' || n, 'M', '1', 'S', 'U-1', 'Ada', 1000 + n FROM generate_series(1, 5000) n
            """)
        try await fixture.execute("ANALYZE rentals")
        let logger = store.logger
        let plan = try await store.withConnection { c in
            // A tiny table is read whole; without sequential scans the planner shows which indexes fit.
            _ = try await PostgresInventoryStore.rows(c, "SET enable_seqscan = off", logger: logger) { _ in 0 }
            let sql = "EXPLAIN \(Columns.deviceRecordSelect) WHERE d.id = $1"
            return try await PostgresInventoryStore.rows(c, PostgresQuery(unsafeSQL: sql, binds: {
                var b = PostgresBindings(); b.append("D-001"); return b }()), logger: logger) { try $0[0].decode(String.self) }
        }
        #expect(plan.contains { $0.contains("Index Cond: (device_id = ") }, "\(plan.joined(separator: " | "))")
        #expect(try await store.device(id: "D-001")?.activeRental?.userId == "U-1")
    }

    /// A database written before return notes and overdue announcements (migrations v1 and v2)
    /// keeps its rentals and gains both.
    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func aVersion2DatabaseMigratesAndKeepsItsRentals() async throws {
        let database = try await PostgresTestServer.createDatabase()
        func execute(_ sql: String) async throws { try await PostgresTestServer.execute(sql, database: database) }
        try await execute("""
            CREATE TABLE schema_migrations (identifier TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())
            """)
        for migration in PostgresSchema.migrations where ["v1", "v2"].contains(migration.id) {
            for statement in PostgresSchema.statements(migration.sql) { try await execute(statement) }
            try await execute("INSERT INTO schema_migrations (identifier) VALUES ('\(migration.id)')")
        }
        try await execute("INSERT INTO users (id, name, registered_at) VALUES ('U-1', 'Ada', 0)")
        try await execute("""
            INSERT INTO devices (id, group_id, model, serial_number, os_version, status, connector_type, registered_at, is_nfc_registered)
            VALUES ('D-1', 'iphone', 'iPhone 15', 'SN1', '18', 'normal', 'USB-C', 0, false)
            """)
        try await execute("""
            INSERT INTO rentals (device_id, model, os_version, serial_number, user_id, user_name, rented_at, due_at, returned_at, lent_by)
            VALUES ('D-1', 'iPhone 15', '18', 'SN1', 'U-1', 'Ada', 0, 10, 1000, 'U-1')
            """)

        let store = try await PostgresInventoryStore.open(try PostgresTestServer.configuration(database: database))
        defer { store.close() }
        #expect(try await store.appliedMigrations() == PostgresInventoryStore.knownMigrations)
        let old = try #require(try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.first)
        #expect(old.returnNote == nil && old.lentBy == "U-1")
        _ = try await store.lend(LendRequest(deviceId: "D-1", userId: "U-1", at: at(10), dueAt: at(20)))
        #expect(try await store.claimOverdueAnnouncements(at: at(30)).map(\.deviceId) == ["D-1"])
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-1", at: at(40), note: "scratched"))
        let notes = try await store.history(HistoryQuery(deviceId: "D-1"), page: .first).items.map(\.returnNote)
        #expect(notes == ["scratched", nil])
    }

    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func aDatabaseOfAnotherApplicationIsRefused() async throws {
        let database = try await PostgresTestServer.createDatabase()
        let configuration = try PostgresTestServer.configuration(database: database)
        try await PostgresTestServer.execute("CREATE TABLE invoices (id int)", database: database)
        await #expect(throws: PostgresOpenError.foreignDatabase(database: configuration.displayURL, tables: ["invoices"])) {
            try await PostgresInventoryStore.open(configuration)
        }
    }

    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func twoDaemonsMigratingAnEmptyDatabaseTogetherApplyEachMigrationOnce() async throws {
        let database = try await PostgresTestServer.createDatabase()
        let configuration = try PostgresTestServer.configuration(database: database)
        let stores = try await withThrowingTaskGroup(of: PostgresInventoryStore.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresInventoryStore.open(configuration) } }
            var all: [PostgresInventoryStore] = []
            for try await store in group { all.append(store) }
            return all
        }
        defer { stores.forEach { $0.close() } }
        #expect(try await stores[0].appliedMigrations() == PostgresInventoryStore.knownMigrations)
        #expect(try await stores[1].groups() == DeviceGroup.defaults)
    }

    /// The test server has no TLS: `prefer` falls back to plain text like libpq's, `require`
    /// refuses to connect, `disable` never asks.
    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func sslModesBehaveLikeLibpqs() async throws {
        var configuration = try PostgresTestServer.configuration(database: try await PostgresTestServer.createDatabase())
        for mode in [PostgresStoreConfiguration.SSLMode.disable, .prefer] {
            configuration.sslMode = mode
            let store = try await PostgresInventoryStore.open(configuration)
            #expect(try await store.groups() == DeviceGroup.defaults, "sslmode=\(mode)")
            store.close()
        }
        configuration.sslMode = .require
        await #expect {
            try await PostgresInventoryStore.open(configuration)
        } throws: { error in
            guard case PostgresOpenError.connectFailed(_, let detail, _) = error else { return false }
            return detail.lowercased().contains("ssl")
        }
    }

    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func aWrongPasswordIsAConnectFailureNamingTheFix() async throws {
        var configuration = try PostgresTestServer.configuration(database: "roombridge")
        configuration.password = "wrong"
        await #expect {
            try await PostgresInventoryStore.open(configuration)
        } throws: { error in
            guard case PostgresOpenError.connectFailed(_, let detail, let problem) = error else { return false }
            return detail.contains("password") && "\(error)".contains("password file") && problem == .loginRefused
        }
    }

    /// Without a password the server (scram over TCP) asks for one: a problem of its own, not a string.
    @Test(.enabled(if: PostgresTestServer.url != nil || PostgresTestServer.required))
    func noPasswordWhereTheServerWantsOneIsPasswordRequired() async throws {
        var configuration = try PostgresTestServer.configuration(database: "roombridge")
        configuration.password = nil
        await #expect {
            try await PostgresInventoryStore.open(configuration)
        } throws: { error in
            guard case PostgresOpenError.connectFailed(_, _, let problem) = error else { return false }
            return problem == .passwordRequired
        }
    }

    /// Nothing listening at the address: unreachable, in the system's word.
    @Test func aClosedPortIsUnreachableConnectionRefused() async throws {
        let configuration = PostgresStoreConfiguration(host: "127.0.0.1", port: 1, username: "roombridge",
                                                       database: "roombridge", sslMode: .disable)
        await #expect {
            try await PostgresInventoryStore.open(configuration)
        } throws: { error in
            guard case PostgresOpenError.connectFailed(_, _, let problem) = error else { return false }
            return problem == .unreachable(reason: "connection refused")
        }
    }
}
