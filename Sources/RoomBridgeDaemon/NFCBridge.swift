import Foundation
import Logging
import NFCReader
import RoomBridgeConfig
import RoomBridgeCore
import RoomBridgeInterfaces
import ServiceLifecycle

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

/// Runs the NFC readers (each on its own libnfc thread, inside `NFCReaderService`) and carries
/// their events into `SystemState`; taps then go to the tap handler.
struct NFCBridge: Service {
    typealias Reader = ReaderEntry

    let readers: [Reader]
    let service: NFCReaderService
    let state: SystemState
    let handler: (any TapHandler)?
    let logger: Logger

    func run() async throws {
        let names = Dictionary(uniqueKeysWithValues: zip(service.loops.map(\.configuration.readerID), readers.map(\.name)))
        service.start()
        logger.info("polling \(readers.count) NFC reader(s): \(readers.map { "\($0.name)=\($0.connstring ?? "libnfc default")" }.joined(separator: ", "))")
        await withGracefulShutdownHandler {
            var arrivals: [String: Date] = [:]
            var connected: Set<String> = []
            for await event in service.events {
                await handle(event, names: names, arrivals: &arrivals, connected: &connected)
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

    private func handle(_ event: ReaderEvent, names: [String: String], arrivals: inout [String: Date],
                        connected: inout Set<String>) async {
        let now = Date()
        switch event {
        case .connected(let id, let device):
            let name = names[id] ?? id
            connected.insert(id)
            logger.info("reader \(name) connected: \(device)")
            await state.updateReader(ReaderStatus(name: name, connstring: device, state: .connected, since: now))
        case .disconnected(let id, let reason):
            let name = names[id] ?? id
            logger.warning("reader \(name) disconnected: \(reason); retrying")
            await state.updateReader(ReaderStatus(name: name, connstring: readers.first { $0.name == name }?.connstring,
                                                  state: .disconnected, lastError: reason, since: now))
            connected.remove(id)
            if connected.isEmpty {
                await handler?.readersUnavailable(.readerUnavailable,
                                                  "reader \(name) was disconnected (\(reason)); reconnect it and run the write again")
            }
        case .tagArrived(let arrival):
            let name = names[arrival.reader] ?? arrival.reader
            let tap = arrival.tap(readerName: name, at: now)
            arrivals[arrival.reader] = now
            logger.info("tap on \(name): \(tap.uid) \(tap.tagType)\(tap.device.map { " device \($0.deviceId)" } ?? "")\(tap.readError.map { " (\($0))" } ?? "")")
            await state.recordTap(tap)
            await handler?.handle(tap, arrival: arrival)
        case .tagRemoved(let id, let uid):
            let name = names[id] ?? id
            let since = arrivals.removeValue(forKey: id) ?? now
            await state.recordRemoval(TagRemoval(reader: name, uid: hexString(uid).uppercased(),
                                                 presentMillis: now.timeIntervalSince(since) * 1000, at: now))
        case .tagReadFailed(let id, let uid, let reason):
            logger.warning("reader \(names[id] ?? id): tag \(hexString(uid).uppercased()) could not be read: \(reason)")
        }
    }
}
