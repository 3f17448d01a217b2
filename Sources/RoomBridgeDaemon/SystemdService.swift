import Logging
import RoomBridgeCore
import ServiceLifecycle

/// Talks to systemd for the daemon's whole life: `READY=1` when it starts running (the socket is
/// bound and the database open before the service group starts), `STATUS=` whenever the summary
/// changes, `WATCHDOG=1` at half the watchdog interval while `SystemState` answers, and
/// `STOPPING=1` when shutdown begins.
struct SystemdService: Service {
    let notifier: SystemdNotifier
    let state: SystemState
    let watchdogInterval: Duration?
    let logger: Logger

    func run() async throws {
        let status = await state.snapshot().statusLine
        notifier.ready(status: status)
        logger.info("ready: \(status)")
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await publishStatus() }
                if let interval = watchdogInterval {
                    group.addTask { await feedWatchdog(every: interval) }
                }
            }
        } onGracefulShutdown: {
            notifier.stopping()
        }
    }

    /// Sends `STATUS=` each time the one-line summary changes, until cancelled.
    private func publishStatus() async {
        var last = ""
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let subscription = await state.subscribe(counted: false)
            do {
                last = send(subscription.snapshot.statusLine, last)
                for try await _ in subscription.events.cancelOnGracefulShutdown() {
                    last = send(await state.snapshot().statusLine, last)
                }
                return
            } catch SubscriptionError.tooSlow {
                continue  // fell behind during a burst: resubscribe and send the current line
            } catch {
                return
            }
        }
    }

    private func send(_ line: String, _ last: String) -> String {
        if line != last { notifier.status(line) }
        return line
    }

    /// Sends `WATCHDOG=1` only when `SystemState` answers within the interval.
    private func feedWatchdog(every interval: Duration) async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if await responds(within: interval) {
                notifier.watchdog()
            } else {
                logger.error("SystemState did not answer within \(interval); withholding WATCHDOG=1")
            }
            try? await Task.sleep(for: interval)
        }
    }

    private func responds(within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = await state.ping(); return true }
            group.addTask { try? await Task.sleep(for: limit); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
