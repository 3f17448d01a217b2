import CurtainProtocol

extension CurtainClient {
    /// For curtains that keep no schedule: fires the schedule set through ``setSchedule(_:)`` at its local times
    /// (open or close, like the controller's own schedule; refused like any command while a manual motion runs or
    /// while not connected). The wait is re-evaluated at least every 30 s, so a changed schedule or clock counts.
    func runDaemonSchedule() async {
        while !Task.isCancelled {
            var wait = 30.0
            if let schedule = snapshot.schedule, let next = schedule.nextFiring(afterSecondsOfDay: configuration.clock.secondsOfDay()) {
                if next.delay <= 0.5 {
                    logger.info("daemon-kept schedule fires: \(next.command)")
                    do throws(CurtainError) { try await send(next.command) } catch {
                        logger.warning("the scheduled \(next.command) failed: \(error)")
                    }
                    wait = 1
                } else {
                    wait = min(next.delay - 0.25, 30)
                }
            }
            do { try await configuration.clock.sleep(for: .seconds(wait)) } catch { return }
        }
    }
}
