import Foundation
import GRDB
import Lending
import LendingStore
import struct RoomBridgeCore.TagUID

/// `lending-bench --stocktake N DIR`: a stocktake of N devices (every 20th lent, nine in ten of the
/// rest tapped, a few unknown tags) closed `rounds` times on SQLite, next to a plain `SELECT` of the
/// same rows from the same file. Prints `stocktake-close-ms:` and `plain-select-ms:` sample lists.
func runStocktakeBench(devices: Int, directory: String, rounds: Int = 20) async throws {
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/stocktake.sqlite"
    let store = try await SQLiteInventoryStore.open(StoreConfiguration(path: path))
    let now = Date()
    try await store.addUser(User(id: "U-1", name: "Ada Lovelace", registeredAt: now))
    let group = DeviceGroup.defaults[0].id
    for d in 1...devices {
        try await store.addDevice(Device(id: String(format: "D-%05d", d), groupId: group, model: "Model \(d % 40)",
                                         serialNumber: "SN\(d)", osVersion: "1", status: .normal, connectorType: "USB-C",
                                         registeredAt: now, note: nil), at: now)
        if d % 20 == 0 { _ = try await store.lend(LendRequest(deviceId: String(format: "D-%05d", d), userId: "U-1", at: now)) }
    }
    let reader = try DatabaseQueue(path: path)
    var close: [Double] = []
    var select: [Double] = []
    var rows = 0
    for round in 0..<rounds {
        let stocktake = try await store.startStocktake(.all, at: now, by: nil)
        for d in 1...devices where d % 20 != 0 && d % 10 != 3 {
            _ = try await store.recordStocktakeTap(stocktake: stocktake.id, uid: TagUID(String(format: "04%012X", d))!,
                                                   deviceId: String(format: "D-%05d", d), at: now, location: "bench")
        }
        for u in 0..<5 {
            _ = try await store.recordStocktakeTap(stocktake: stocktake.id, uid: TagUID(String(format: "05%012X", round * 10 + u))!,
                                                   deviceId: nil, at: now, location: "bench")
        }
        // The rows the close writes, read by one plain query: the peer.
        let id = stocktake.id
        let began = DispatchTime.now().uptimeNanoseconds
        rows = try await reader.read { db in
            try Row.fetchAll(db, sql: """
                SELECT d.id, d.model, d.serial_number, r.user_id, r.user_name, t.uid, t.at, t.location
                FROM devices d LEFT JOIN stocktake_taps t ON t.stocktake_id = ? AND t.device_id = d.id
                     LEFT JOIN rentals r ON r.device_id = d.id AND r.returned_at IS NULL
                WHERE d.status <> 'disposed'
                UNION ALL
                SELECT t.device_id, NULL, NULL, NULL, NULL, t.uid, t.at, t.location FROM stocktake_taps t
                WHERE t.stocktake_id = ? AND t.device_id IS NULL
                """, arguments: [id, id]).count
        }
        select.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
        let closing = DispatchTime.now().uptimeNanoseconds
        let report = try await store.closeStocktake(id: id, at: now, by: nil)
        close.append(Double(DispatchTime.now().uptimeNanoseconds - closing) / 1e6)
        precondition(report.entries.count == rows, "the close wrote \(report.entries.count) entries, the select read \(rows)")
    }
    try store.close()
    print("stocktake of \(devices) devices, \(rows) report rows, \(rounds) rounds")
    print("stocktake-close-ms: " + close.map { String(format: "%.3f", $0) }.joined(separator: ","))
    print("plain-select-ms: " + select.map { String(format: "%.3f", $0) }.joined(separator: ","))
}
