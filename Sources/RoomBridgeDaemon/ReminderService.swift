import Foundation
import Lending
import Logging
import ServiceLifecycle

/// Sends the reminders (`[reminders]`) through the outbox at their times of the kiosk's day. At
/// start it sends today's whose time has passed and that were not sent yet (the outbox keeps
/// each reminder once), so a daemon restarted after 09:00 still sends the 09:00 digest.
struct ReminderService: Service {
    let store: any InventoryStore
    let schedule: ReminderSchedule
    let logger: Logger
    /// The longest sleep, so that a wall clock set forward is noticed.
    static let longestWait: TimeInterval = 3600
    /// The wait before trying again after the store failed.
    static let retryWait: TimeInterval = 60

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let now = Date()
            var wait: TimeInterval
            do {
                let kinds = schedule.due(at: now)
                // The store's routes: the outbox targets of the configuration now in effect.
                let added = try await store.sendReminders(kinds, schedule: schedule, routes: store.outboxRoutes, now: now)
                if !kinds.isEmpty {
                    logger.log(level: added > 0 ? .info : .debug, "reminders of \(schedule.day(of: now).key) (\(kinds.map(\.rawValue).joined(separator: ", "))): \(added) new outbox entries")
                }
                wait = (schedule.nextTime(after: now)?.timeIntervalSince(now) ?? Self.longestWait)
            } catch {
                logger.warning("reminders could not be written: \(error); trying again in \(Int(Self.retryWait)) s")
                wait = Self.retryWait
            }
            wait = min(max(wait, 0.001), Self.longestWait)
            let pause = Duration.milliseconds(Int64(wait * 1000) + 1)
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
        }
    }
}
