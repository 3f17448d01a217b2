import Foundation
import GRDB
import Lending
@testable import LendingStore

/// A fresh temporary directory, removed by `cleanup()`.
struct TempDir {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/roombridge-store-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var database: String { path + "/lending.sqlite" }

    func cleanup() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

let base = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28
func at(_ seconds: TimeInterval) -> Date { base.addingTimeInterval(seconds) }

func config(_ path: String) -> StoreConfiguration {
    StoreConfiguration(path: path, busyTimeout: 10, integrityCheck: .full)
}

func makeDevice(_ id: String, group: String = "iphone", status: DeviceStatus = .normal, model: String? = nil) -> Device {
    Device(id: id, groupId: group, model: model ?? "Model \(id)", serialNumber: "SN-\(id)", osVersion: "1.0",
           status: status, connectorType: "USB-C", registeredAt: base, note: nil)
}

/// A store with users U-1…U-n and devices D-001…D-m.
func seededStore(_ dir: TempDir, devices: Int = 3, users: Int = 2) async throws -> SQLiteInventoryStore {
    let store = try await SQLiteInventoryStore.open(config(dir.database))
    for u in 1...max(users, 1) where users > 0 {
        try await store.addUser(User(id: "U-\(u)", name: "User \(u)", registeredAt: base))
    }
    for d in 0..<devices {
        try await store.addDevice(makeDevice(String(format: "D-%03d", d + 1)), at: base)
    }
    return store
}

/// Runs a program, returning its exit status.
@discardableResult
func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Makes a file or directory unwritable even for root (immutable attribute), or with mode
/// bits when not root. Returns the undo action.
func makeUnwritable(_ path: String) throws -> () -> Void {
    if geteuid() == 0 {
        guard try run("/usr/bin/chattr", ["+i", path]) == 0 else { throw CocoaError(.fileWriteNoPermission) }
        return { _ = try? run("/usr/bin/chattr", ["-i", path]) }
    }
    var isDir: ObjCBool = false
    _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDir)
    try FileManager.default.setAttributes([.posixPermissions: isDir.boolValue ? 0o555 : 0o444], ofItemAtPath: path)
    return { try? FileManager.default.setAttributes([.posixPermissions: isDir.boolValue ? 0o755 : 0o644], ofItemAtPath: path) }
}

func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

/// A database file written by an earlier schema: migrated up to `version` and given `rows`, then
/// closed, for a store to open and migrate the rest of the way.
func databaseAtSchema(_ version: String, in dir: TempDir, rows: @escaping @Sendable (Database) throws -> Void) async throws {
    let queue = try DatabaseQueue(path: dir.database)
    try Schema.migrator.migrate(queue, upTo: version)
    try await queue.write(rows)
    try queue.close()
}
