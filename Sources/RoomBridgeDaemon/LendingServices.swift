import Dispatch
import Logging
import LendingStore
import NFCReader
import RoomBridgeCore
import RoomBridgeInterfaces
import ServiceLifecycle

/// Taps go to lending: a badge arms, a device tap lends or returns (see `LendingCoordinator`).
struct LendingTapHandler: TapHandler {
    let lending: LendingCoordinator

    func handle(_ tap: Tap, arrival: TagArrival) async {
        await lending.handleTap(uid: tap.uid, deviceIDOnTag: tap.device?.deviceId, reader: tap.reader)
    }
}

/// Keeps the database open for the daemon's life and closes it last at shutdown (every write
/// is already durable: WAL with synchronous=FULL; closing checkpoints the WAL).
struct StoreService: Service {
    let store: SQLiteInventoryStore
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        // Closing checkpoints the WAL: blocking file I/O, so off the cooperative pool.
        let (store, logger) = (store, logger)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                do {
                    try store.close()
                    logger.info("database closed")
                } catch {
                    logger.error("closing the database failed: \(error)")
                }
                done.resume()
            }
        }
    }
}
