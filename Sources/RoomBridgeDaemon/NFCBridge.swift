#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NFCReader
import RoomBridgeConfig
import RoomBridgeCore
import RoomBridgeInterfaces
import ServiceLifecycle
import Synchronization

/// Something that acts on taps after they are recorded (lending, tag registration).
protocol TapHandler: Sendable {
    func handle(_ tap: Tap, arrival: TagArrival) async
    /// No reader can take a tap any more: every reader is disconnected (`reason`
    /// `.readerUnavailable`) or the readers are being stopped (`.cancelled`).
    func readersUnavailable(_ reason: TagRegistrationError.Reason, _ message: String) async
}

extension TapHandler {
    func readersUnavailable(_ reason: TagRegistrationError.Reason, _ message: String) async {}
}

/// The readers the bridge serves: names by reader ID, which are connected, and which a
/// configuration reload removed (their late events are ignored).
final class ReaderRegistry: Sendable {
    private struct Entries {
        var byID: [String: ReaderEntry] = [:]
        var connected: Set<String> = []
        var removed: Set<String> = []
    }
    private let entries = Mutex(Entries())

    init(_ readers: [ReaderEntry]) { add(readers) }

    static func id(of entry: ReaderEntry) -> String { entry.connstring ?? "default" }

    /// Adds (or renames) readers; an ID removed earlier is served again.
    func add(_ readers: [ReaderEntry]) {
        entries.withLock { e in
            for r in readers {
                e.byID[Self.id(of: r)] = r
                e.removed.remove(Self.id(of: r))
            }
        }
    }

    func name(_ id: String) -> String { entries.withLock { $0.byID[id]?.name ?? id } }
    func connstring(_ id: String) -> String? { entries.withLock { $0.byID[id]?.connstring } }
    func isRemoved(_ id: String) -> Bool { entries.withLock { $0.removed.contains(id) } }

    /// Records a connection change; returns true when no reader is connected any more.
    @discardableResult
    func setConnected(_ id: String, _ connected: Bool) -> Bool {
        entries.withLock { e in
            if connected { e.connected.insert(id) } else { e.connected.remove(id) }
            return e.connected.isEmpty
        }
    }

    /// Marks a reader removed; returns true when no reader is connected any more.
    func remove(_ id: String) -> Bool {
        entries.withLock { e in
            e.removed.insert(id)
            e.connected.remove(id)
            return e.connected.isEmpty
        }
    }
}

/// Runs the NFC readers (each on its own libnfc thread, inside `NFCReaderService`) and carries
/// their events into `SystemState`; taps then go to the tap handler. ``reconfigure(_:)`` changes
/// the set of readers while running (SIGHUP).
struct NFCBridge: Service {
    typealias Reader = ReaderEntry

    let registry: ReaderRegistry
    let service: NFCReaderService
    let state: SystemState
    let handler: (any TapHandler)?
    let logger: Logger

    init(readers: [Reader], service: NFCReaderService, state: SystemState, handler: (any TapHandler)?, logger: Logger) {
        self.registry = ReaderRegistry(readers)
        self.service = service
        self.state = state
        self.handler = handler
        self.logger = logger
        self.initialReaders = readers
    }

    private let initialReaders: [Reader]

    func run() async throws {
        let readers = initialReaders
        service.start()
        logger.info("polling \(readers.count) NFC reader(s): \(readers.map { "\($0.name)=\($0.connstring ?? "libnfc default")" }.joined(separator: ", "))")
        await withGracefulShutdownHandler {
            var arrivals: [String: Date] = [:]
            for await event in service.events {
                await handle(event, arrivals: &arrivals)
            }
        } onGracefulShutdown: { [handler] in
            Task {
                // A tag write waiting for a tag answers its caller before the socket closes.
                await handler?.readersUnavailable(.cancelled, "roombridged is stopping; run the write again once it is back")
                // Aborts blocked libnfc calls and closes the devices; the event stream then ends.
                await service.stop()
            }
        }
        logger.info("NFC readers released")
    }

    /// Serves `readers` from now on: new ones are opened, removed ones released (they stay listed
    /// as disconnected until the next restart), the others keep running untouched.
    func reconfigure(_ readers: [Reader]) async {
        let modulations = service.loops.first?.configuration.modulations ?? [.iso14443a, .felica212]
        registry.add(readers)
        await state.declareReaders(readers.map(\.name))
        let (started, stopped) = await service.reconfigure(
            readers.map { ReaderConfiguration(connstring: $0.connstring, modulations: modulations) })
        for id in stopped {
            let name = registry.name(id)
            let noneLeft = registry.remove(id)
            await state.updateReader(ReaderStatus(name: name, connstring: registry.connstring(id), state: .disconnected,
                                                  lastError: "removed from nfc.readers (listed until the next restart)", since: Date()))
            if noneLeft {
                await handler?.readersUnavailable(.readerUnavailable,
                                                  "reader \(name) was removed from the configuration; run the write again on another reader")
            }
        }
        if !started.isEmpty || !stopped.isEmpty {
            logger.notice("NFC readers changed: opened \(started.map(registry.name).joined(separator: ", ")); released \(stopped.map(registry.name).joined(separator: ", "))")
        }
    }

    private func handle(_ event: ReaderEvent, arrivals: inout [String: Date]) async {
        let now = Date()
        switch event {
        case .connected(let id, let device):
            guard !registry.isRemoved(id) else { return }
            let name = registry.name(id)
            registry.setConnected(id, true)
            logger.info("reader \(name) connected: \(device)")
            await state.updateReader(ReaderStatus(name: name, connstring: device, state: .connected, since: now))
        case .disconnected(let id, let reason):
            guard !registry.isRemoved(id) else { return }
            let name = registry.name(id)
            logger.warning("reader \(name) disconnected: \(reason); retrying")
            await state.updateReader(ReaderStatus(name: name, connstring: registry.connstring(id),
                                                  state: .disconnected, lastError: reason, since: now))
            if registry.setConnected(id, false) {
                await handler?.readersUnavailable(.readerUnavailable,
                                                  "reader \(name) was disconnected (\(reason)); reconnect it and run the write again")
            }
        case .tagArrived(let arrival):
            guard !registry.isRemoved(arrival.reader) else { return }
            let name = registry.name(arrival.reader)
            guard let tap = arrival.tap(readerName: name, at: now) else {
                logger.warning("reader \(name) reported a tag without a UID; ignored")
                return
            }
            arrivals[arrival.reader] = now
            logger.info("tap on \(name): \(tap.uid) \(tap.tagType)\(tap.device.map { " device \($0.deviceId)" } ?? "")\(tap.readError.map { " (\($0))" } ?? "")")
            await state.recordTap(tap)
            await handler?.handle(tap, arrival: arrival)
        case .tagRemoved(let id, let uid):
            let name = registry.name(id)
            let since = arrivals.removeValue(forKey: id) ?? now
            guard let uid = TagUID(bytes: uid) else { return }
            await state.recordRemoval(TagRemoval(reader: name, uid: uid, presentMillis: now.timeIntervalSince(since) * 1000, at: now))
        case .tagReadFailed(let id, let uid, let reason):
            logger.warning("reader \(registry.name(id)): tag \(hexString(uid).uppercased()) could not be read: \(reason)")
        }
    }
}
