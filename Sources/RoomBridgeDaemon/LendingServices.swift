import Dispatch
import Lending
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
        await lending.handle(tap)
    }
}

/// Reads the open stocktake into `SystemState` every ``interval``: one started, counted or closed
/// at another kiosk on the same database shows on this kiosk's screen without waiting for a tap
/// here (a tap reads it too). A failed read (database offline) is left to the database's own
/// state; the next read catches up.
struct StocktakeWatch: Service {
    let lending: LendingCoordinator
    static let interval = Duration.seconds(5)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await lending.refreshStocktake()
                try? await Task.sleep(for: Self.interval)
            }
        }
    }
}

/// Keeps the database open for the daemon's life and closes it last at shutdown (every write
/// is already durable: WAL with synchronous=FULL; closing checkpoints the WAL).
///
/// Meanwhile it runs the full integrity check (see `SQLiteInventoryStore.checkIntegrity`) once
/// right after start — so a file left by an unclean shutdown is checked — and then every
/// `integrityCheckInterval`, on a reader connection so that calls are served meanwhile. Health
/// events (disk full, integrity) are logged once per episode.
struct StoreService: Service {
    let store: SQLiteInventoryStore
    let integrityCheckInterval: Duration
    let logger: Logger

    init(store: SQLiteInventoryStore, integrityCheckInterval: Duration = .seconds(86400), logger: Logger) {
        self.store = store
        self.integrityCheckInterval = integrityCheckInterval
        self.logger = logger
        let path = store.path
        store.observeHealth { [logger] event in
            switch event {
            case .diskFull(let directory):
                logger.error("the disk holding \(directory) is full: changes are refused (nothing is recorded) until space is freed there")
            case .diskSpaceAvailable(let directory):
                logger.notice("the disk holding \(directory) has space again: changes are recorded again")
            case .integrityConfirmed:
                logger.info("database integrity check passed", metadata: ["path": "\(path)"])
            case .integrityFailed(let error):
                logger.critical("\(error)")
            }
        }
    }

    func run() async throws {
        let (store, interval, logger) = (store, integrityCheckInterval, logger)
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await store.checkIntegrity()
                } catch {
                    if Task.isCancelled { break }
                    logger.error("the database integrity check could not run: \(error)")
                }
                // A failed check refuses writes until an operator has repaired the file and
                // restarted; checking again cannot change that.
                if store.writeRefusal != nil { break }
                try? await Task.sleep(for: interval)
            }
        }
        try? await gracefulShutdown()
        // Closing checkpoints the WAL: blocking file I/O, so off the cooperative pool.
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
