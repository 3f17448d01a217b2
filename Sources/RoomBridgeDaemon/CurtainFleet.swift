import BlueZClient
import CurtainProtocol
import Logging
import RoomBridgeConfig
import RoomBridgeCore
import RoomBridgeInterfaces
import ServiceLifecycle
import Synchronization

/// What one curtain is driven with: its configuration entry, the settings shared by every curtain and its
/// secrets. Two equal settings make the same client, so a reload restarts only curtains whose settings changed.
struct CurtainSettings: Sendable, Equatable {
    var entry: CurtainEntry
    var adapter: String
    var notify: String
    var password: String?
    var pin: UInt16?
    /// `curtain.hold`, seconds: how long an on-demand curtain's link is kept after the last command.
    var hold: Double = 8.5
    /// `curtain.connections`: the links at once on the adapter (``ConnectionBudget``).
    var connections: Int = 3

    /// The settings of every curtain a configuration asks for (none when `curtain.enabled` is false); the
    /// passwords and PINs come from their files or systemd credentials (``Secrets``).
    static func all(in config: DaemonConfig, environment: [String: String]) throws(ConfigError) -> [CurtainSettings] {
        var out: [CurtainSettings] = []
        for entry in CurtainEntry.all(in: config) {
            out.append(CurtainSettings(entry: entry, adapter: config[.curtainAdapter],
                                       notify: config[.curtainNotify],
                                       password: try Secrets.password(of: entry, in: config, environment: environment),
                                       pin: try Secrets.pin(of: entry, in: config, environment: environment),
                                       hold: config[.curtainHold], connections: config[.curtainConnections]))
        }
        return out
    }

    /// The name of the connection budget this curtain shares: the curtains of one adapter with the same limit share
    /// one.
    var budgetKey: String { "\(adapter)/\(connections)" }

    /// The BlueZ client's configuration, sharing `budget` with the other curtains of the adapter.
    func client(budget: ConnectionBudget?) -> CurtainClientConfiguration {
        var configuration = CurtainClientConfiguration(adapterName: adapter.isEmpty ? nil : adapter,
                                                       deviceAddress: entry.address)
        configuration.notifyMethod = CurtainNotifyMethod(rawValue: notify) ?? .startNotify
        configuration.profile = (CurtainProfile.named(entry.profile) ?? .roombridge).with(password: password ?? "")
        configuration.pin = pin
        configuration.profile = configuration.profile.with(hold: .milliseconds(Int((hold * 1000).rounded())))
        configuration.budget = budget
        return configuration
    }
}

/// Routes `io.roombridge.Curtain` requests to the controller of the curtain they name.
final class CurtainFleet: CurtainControlling {
    private let controllers = Mutex<[String: CurtainController]>([:])

    func controller(_ id: String) -> CurtainController? { controllers.withLock { $0[id] } }

    func add(_ controller: CurtainController) { controllers.withLock { $0[controller.id] = controller } }

    func remove(_ id: String) { controllers.withLock { $0[id] = nil } }

    func perform(_ request: CurtainControlRequest, on curtain: String) async throws(CurtainControlError) {
        guard let controller = controller(curtain) else {
            // Removed by a reload between the name check and now.
            throw CurtainControlError(.notConnected, "curtain \(curtain) is no longer configured: "
                                      + "roombridgectl curtain status lists the configured ones")
        }
        try await controller.perform(request)
    }
}

/// Runs one ``CurtainService`` per configured curtain, each with its own client and reconnection, and applies
/// reloads: a curtain no longer configured is disconnected and stopped, a new one starts, and one whose settings
/// changed starts again with them; the others are not touched. `SystemState` lists the curtains configured now.
struct CurtainFleetService: Service {
    let fleet: CurtainFleet
    let state: SystemState
    /// Where the schedules of curtains that keep none themselves are kept.
    let schedules: (any CurtainScheduleStore)?
    let settings: [CurtainSettings]
    var reconfigurations: AsyncStream<[CurtainSettings]> = AsyncStream { $0.finish() }
    /// Told when a curtain's battery falls to a threshold.
    var onBattery: (@Sendable (BatteryNotice) async -> Void)? = nil
    let logger: Logger

    /// A running curtain: its settings, where its reconfigurations go and its service's task.
    private struct Running {
        var settings: CurtainSettings
        let reconfigure: AsyncStream<CurtainClientConfiguration>.Continuation
        let task: Task<Void, any Error>
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            var running: [String: Running] = [:]
            var budgets: [String: ConnectionBudget] = [:]
            await apply(settings, to: &running, budgets: &budgets)
            for await next in reconfigurations {
                await apply(next, to: &running, budgets: &budgets)
            }
            for id in running.keys.sorted() { running[id]?.task.cancel() }
            for (_, r) in running { _ = await r.task.result }
        }
    }

    private func apply(_ wanted: [CurtainSettings], to running: inout [String: Running],
                       budgets: inout [String: ConnectionBudget]) async {
        // One budget per adapter and limit, kept across reloads while a curtain uses it.
        budgets = budgets.filter { key, _ in wanted.contains { $0.budgetKey == key } }
        for curtain in wanted where budgets[curtain.budgetKey] == nil {
            budgets[curtain.budgetKey] = ConnectionBudget(limit: curtain.connections)
        }
        let ids = Set(wanted.map(\.entry.name))
        for id in running.keys.sorted() where !ids.contains(id) {
            guard let gone = running.removeValue(forKey: id) else { continue }
            let client = fleet.controller(id)?.client
            fleet.remove(id)
            gone.reconfigure.finish()
            gone.task.cancel()
            _ = await gone.task.result
            await client?.disconnectDevice()
            logger.notice("curtain \(id): no longer configured; disconnected")
        }
        await state.declareCurtains(wanted.map(\.entry.name))
        for curtain in wanted {
            let id = curtain.entry.name
            if var current = running[id] {
                guard current.settings != curtain else { continue }
                current.settings = curtain
                current.reconfigure.yield(curtain.client(budget: budgets[curtain.budgetKey]))
                running[id] = current
                continue
            }
            let controller = CurtainController(id: id, state: state, schedules: schedules, onBattery: onBattery)
            fleet.add(controller)
            let (stream, continuation) = AsyncStream.makeStream(of: CurtainClientConfiguration.self,
                                                                bufferingPolicy: .bufferingNewest(1))
            let service = CurtainService(controller: controller, state: state,
                                         configuration: curtain.client(budget: budgets[curtain.budgetKey]),
                                         reconfigurations: stream, logger: logger)
            running[id] = Running(settings: curtain, reconfigure: continuation, task: Task { try await service.run() })
        }
    }
}
