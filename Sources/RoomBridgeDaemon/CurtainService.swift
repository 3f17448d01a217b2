import BlueZClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CurtainProtocol
import Logging
import RoomBridgeCore
import RoomBridgeInterfaces
import ServiceLifecycle
import Synchronization
import Retry

/// Routes one curtain's requests to its current BlueZ client (there is none while the system bus is
/// unavailable; a new one is made after every bus loss).
final class CurtainController: Sendable {
    /// The curtain's name (``CurtainState/id``).
    let id: String
    private let current = Mutex<CurtainClient?>(nil)
    private let state: SystemState
    /// Where the schedule of a curtain that keeps none itself is kept (nil: in memory only).
    let schedules: (any CurtainScheduleStore)?
    /// The battery's thresholds told so far, across clients (a bus loss makes a new one).
    let batteryWatch = Mutex(BatteryWatch())
    /// Told when the battery falls to a threshold (Watch and the outbox).
    let onBattery: (@Sendable (BatteryNotice) async -> Void)?

    init(id: String = "curtain", state: SystemState, schedules: (any CurtainScheduleStore)? = nil,
         onBattery: (@Sendable (BatteryNotice) async -> Void)? = nil) {
        self.id = id
        self.state = state
        self.schedules = schedules
        self.onBattery = onBattery
    }

    /// Sets the client that takes requests (nil while there is none).
    func attach(_ client: CurtainClient?) {
        current.withLock { $0 = client }
    }

    /// The client that takes requests now.
    var client: CurtainClient? { current.withLock { $0 } }

    func perform(_ request: CurtainControlRequest) async throws(CurtainControlError) {
        guard let client = current.withLock({ $0 }) else {
            // Between bus connections: the service is already retrying, which is what Reconnect asks for.
            if request == .reconnect { return }
            let curtain = await state.curtainState(id)
            throw CurtainControlError(.notConnected, "the curtain is not connected"
                                      + (curtain?.lastError.map { " (\($0))" } ?? "")
                                      + ": wait for the reconnection (roombridgectl curtain status) and try again")
        }
        if case .setSchedule(let open, let openEnabled, let close, let closeEnabled) = request, !client.profile.keepsSchedule {
            try await keep(CurtainSchedule(openTime: open, openEnabled: openEnabled, closeTime: close, closeEnabled: closeEnabled))
        }
        do throws(CurtainError) {
            switch request {
            case .open: try await client.open()
            case .close: try await client.close()
            case .stop: try await client.stop()
            case .moveTo(let position): try await client.move(to: position)
            case .setSchedule(let open, let openEnabled, let close, let closeEnabled):
                try await client.setSchedule(CurtainSchedule(openTime: open, openEnabled: openEnabled,
                                                             closeTime: close, closeEnabled: closeEnabled))
            case .sync: try await client.sync()
            case .reconnect: await client.reconnect()
            }
        } catch {
            throw Self.map(error)
        }
    }

    /// Stores the schedule the daemon keeps before it takes effect, so that it survives a restart; when the
    /// database refuses it, nothing changes.
    private func keep(_ schedule: CurtainSchedule) async throws(CurtainControlError) {
        guard let schedules else { return }
        do {
            try await schedules.keepSchedule(schedule, curtain: id)
        } catch {
            throw CurtainControlError(.scheduleNotStored, "the daemon keeps this curtain's schedule and could not store "
                                      + "the new one (\(error)); the old schedule stays in effect: check the database "
                                      + "(roombridgectl doctor) and try again")
        }
    }

    /// A client error as the interface's error (the message says what to do).
    static func map(_ error: CurtainError) -> CurtainControlError {
        switch error {
        case .invalidCommand(let e): CurtainControlError(.invalidParameter, e.description, parameter: nil)
        case .manualOperationActive: CurtainControlError(.manualOperationActive, error.description)
        case .notConnected: CurtainControlError(.notConnected, error.description)
        case .rejectedByDevice, .refusedByCurtain: CurtainControlError(.rejectedByDevice, error.description)
        case .busy, .timeout, .bluetoothServiceUnavailable, .bluetooth:
            CurtainControlError(.bluetoothFailed, error.description)
        }
    }
}

/// Keeps a BlueZ client for the curtain on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured by
/// libdbus): runs it, feeds its events into `SystemState`, and when the bus connection is lost or
/// cannot be opened shows `disconnected` with the reason and retries with bounded backoff. The
/// client itself handles BlueZ restarts, adapter power and link loss. Cancelled on graceful shutdown.
///
/// A configuration from `reconfigurations` (a reload) replaces the client: the current one disconnects
/// its curtain and stops, and a client with the new settings starts at once.
///
/// One runs per configured curtain, each with its own client, bus connection and reconnection (``CurtainFleet``);
/// it reports into the curtain named `controller.id` of `SystemState`.
struct CurtainService: Service {
    let controller: CurtainController
    let state: SystemState
    let configuration: CurtainClientConfiguration
    var reconfigurations: AsyncStream<CurtainClientConfiguration> = AsyncStream { $0.finish() }
    var backoff = Backoff(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(30))
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            // One task per configuration (a cancelled task group would cancel the next one at once); this task's
            // cancellation (graceful shutdown) ends the loop, then the current one is cancelled too.
            var current = Task { await self.supervise(configuration) }
            for await next in reconfigurations {
                let old = controller.client
                current.cancel()
                await current.value
                await old?.disconnectDevice()
                logger.notice("curtain \(controller.id): settings changed; starting again")
                current = Task { await self.supervise(next) }
            }
            // Shutting down: leave the curtain free for its own app or remote. bluetoothd keeps a link that a
            // D-Bus client asked for after that client has gone (bleak disconnects on exit for the same reason).
            // The call runs in a task of its own: this one is cancelled, and a cancelled call is not sent.
            let last = controller.client
            current.cancel()
            await current.value
            await Task { await last?.disconnectDevice() }.value
        }
        controller.attach(nil)
        logger.info("curtain \(controller.id) released")
    }

    /// The schedule the daemon kept for a curtain that keeps none itself (read anew for every client, so a
    /// schedule set before a bus loss carries over).
    private func keptSchedule(for configuration: CurtainClientConfiguration) async -> CurtainSchedule? {
        guard !configuration.profile.keepsSchedule, let store = controller.schedules else { return nil }
        do {
            return try await store.keptSchedule(curtain: controller.id)
        } catch {
            logger.warning("""
                curtain \(controller.id): cannot read its kept schedule (\(error)); it does not fire until the \
                database answers and the curtain reconnects (roombridgectl doctor)
                """)
            return nil
        }
    }

    private func supervise(_ configuration: CurtainClientConfiguration) async {
        await state.updateCurtain(controller.id) { $0 = CurtainState(connection: .searching, lastRequest: $0.lastRequest) }
        let target = configuration.deviceAddress ?? "the first curtain advertising the curtain service"
        let adapter = configuration.adapterName.map { " on \($0)" } ?? ""
        logger.info("curtain \(controller.id): looking for \(target)\(adapter) (profile \(configuration.profile.id.rawValue))")
        await superviseClients(configuration)
    }

    private func superviseClients(_ settings: CurtainClientConfiguration) async {
        var attempt = 0
        let clock = ContinuousClock()
        while !Task.isCancelled {
            var configuration = settings
            configuration.keptSchedule = await keptSchedule(for: configuration)
            let client: CurtainClient
            do {
                client = try await abandoningOnCancel { [configuration, logger] in
                    try await CurtainClient.onSystemBus(configuration: configuration, logger: logger)
                }
            } catch is CancellationError {
                return
            } catch {
                attempt += 1
                let delay = backoff.delay(attempt: attempt)
                await disconnected("cannot connect to the D-Bus system bus (\(error)): is dbus running "
                                   + "(systemctl status dbus)? retrying in \(Self.format(delay))")
                guard await sleep(delay) else { return }
                continue
            }
            controller.attach(client)
            let started = clock.now
            let failure: (any Error)? = await withTaskGroup(of: Void.self) { group in
                group.addTask { await forward(client) }
                let failure: (any Error)?
                do {
                    try await client.run()
                    failure = nil
                } catch {
                    failure = error
                }
                // run() normally ends the event stream itself, but not when it fails before starting.
                group.cancelAll()
                return failure
            }
            controller.attach(nil)
            if Task.isCancelled { return }
            let reason = failure.map { "\($0)" } ?? "the curtain client stopped"
            // A connection that lived a while starts the backoff afresh.
            attempt = clock.now - started > backoff.maximum ? 1 : attempt + 1
            let delay = backoff.delay(attempt: attempt)
            await disconnected("lost the connection to the D-Bus system bus (\(reason)); "
                               + "reconnecting in \(Self.format(delay))")
            guard await sleep(delay) else { return }
        }
    }

    /// Carries the client's events into `SystemState` until its stream ends. A link that comes up clears
    /// the last error, and so does an adapter that is usable again; a link that goes down records why.
    private func forward(_ client: CurtainClient) async {
        var adapterError: String? = nil
        let progress = Mutex(MotionProgress())
        for await event in client.events {
            if event == .commandAnswered {
                await state.announceCurtainRequests()
                continue
            }
            let resolvedAdapterError: String?
            switch event {
            case .adapter(.poweredOn):
                resolvedAdapterError = adapterError
                adapterError = nil
            case .adapter(let a) where a != .unknown:
                resolvedAdapterError = nil
                adapterError = a.description
            default:
                resolvedAdapterError = nil
            }
            switch event {
            case .connection(.connected, _):
                logger.info("curtain \(controller.id) connected")
            case .connection(.standby, let detail):
                logger.debug("curtain \(controller.id) in standby: \(detail ?? "")")
            case .connection(.disconnected, let detail?):
                logger.notice("curtain \(controller.id) disconnected: \(detail)")
            case .error(let e):
                logger.warning("curtain \(controller.id): \(e)")
            case .deviceError(let op, let code):
                logger.warning("curtain \(controller.id) controller refused opcode \(op): \(code)")
            default:
                logger.debug("curtain \(controller.id) event: \(event)")
            }
            await state.updateCurtain(controller.id) { curtain in
                let before = curtain.connection
                curtain.apply(event)
                curtain.finishesAt = progress.withLock { $0.estimate(curtain, now: Date()) }
                switch event {
                case .connection(.connected, _): curtain.lastError = nil
                // Standby after a loss or a restart is a recovery; after a release, a refusal shown stays.
                case .connection(.standby, _) where before != .connected: curtain.lastError = nil
                case .connection(.disconnected, let detail?) where detail != "stopped": curtain.lastError = detail
                case .adapter(.poweredOn) where resolvedAdapterError != nil && curtain.lastError == resolvedAdapterError:
                    curtain.lastError = nil
                default: break
                }
            }
            if case .levels(let battery?, _) = event,
               let threshold = controller.batteryWatch.withLock({ $0.observe(battery) }) {
                let notice = BatteryNotice(curtain: controller.id, battery: battery, threshold: threshold)
                logger.warning("\(notice.sentence) (at or below \(threshold) %): change or charge it soon")
                await controller.onBattery?(notice)
            }
        }
    }

    private func disconnected(_ message: String) async {
        logger.warning("curtain \(controller.id): \(message)")
        await state.updateCurtain(controller.id) {
            $0.connection = .disconnected
            $0.lastError = message
        }
    }

    /// Sleeps; false when cancelled.
    private func sleep(_ delay: Duration) async -> Bool {
        do {
            try await Task.sleep(for: delay)
            return true
        } catch {
            return false
        }
    }

    static func format(_ d: Duration) -> String {
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(Double(ms) / 1000) s"
    }
}

/// Awaits `operation` but throws `CancellationError` as soon as the calling task is cancelled,
/// leaving the operation to finish on its own (for calls that cannot be cancelled, such as
/// opening a D-Bus connection, which libdbus does synchronously).
func abandoningOnCancel<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let slot = ContinuationSlot<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            slot.set(continuation)
            Task {
                do {
                    slot.resume(with: .success(try await operation()))
                } catch {
                    slot.resume(with: .failure(error))
                }
            }
        }
    } onCancel: {
        slot.resume(with: .failure(CancellationError()))
    }
}

/// A continuation resumed once, by whoever comes first (also before it is set).
private final class ContinuationSlot<T: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<T, any Error>)
        case done(Result<T, any Error>)
        case resumed
    }
    private let state = Mutex<State>(.empty)

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = state.withLock { s in
            if case .done(let r) = s {
                s = .resumed
                return r
            }
            s = .waiting(continuation)
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func resume(with result: Result<T, any Error>) {
        let waiting: CheckedContinuation<T, any Error>? = state.withLock { s in
            switch s {
            case .empty:
                s = .done(result)
                return nil
            case .waiting(let c):
                s = .resumed
                return c
            case .done, .resumed:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
