#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RoomBridgeCore

/// Overdue rentals: each is announced once (per due date) as an `overdue` event, and the state
/// carries how many are overdue. The store remembers what was announced, so a restart does not
/// announce again; checks run at the next due date (woken by every lend, return and renewal),
/// and the clock is the coordinator's (injected in tests, which call ``checkOverdue()``).
extension LendingCoordinator {
    /// The longest wait between two checks, so that a wall clock set forward is noticed.
    static let longestOverdueWait: TimeInterval = 3600
    /// The wait before trying again after the store failed.
    static let overdueRetryWait: TimeInterval = 60

    /// Checks now, then at each next due date; the daemon calls it once at start (announcing
    /// what fell due while it was stopped).
    public func startOverdueWatch() async {
        watchingOverdue = true
        do {
            try await checkOverdue()
        } catch {
            scheduleOverdueCheck(in: Self.overdueRetryWait)
        }
    }

    /// Announces the rentals that passed their due time and were not announced yet, updates
    /// the overdue count, and schedules the next check. Returns the announcements.
    @discardableResult
    public func checkOverdue() async throws -> [OverdueNotice] {
        let due = try await store.claimOverdueAnnouncements(at: now())
        // The count first, so that the events' snapshot includes it.
        await refreshOverdue()
        let notices = due.map(OverdueNotice.init(rental:))
        for notice in notices { await state.recordOverdue(notice) }
        return notices
    }

    /// Updates the state's overdue count and schedules a check at the next due date.
    func refreshOverdue() async {
        let t = now()
        do {
            await state.setOverdueCount(try await store.overdueCount(at: t))
            guard watchingOverdue else { return }
            let next = try await store.nextOverdueAnnouncement()
            // Due at `next` is overdue just after it; nothing due: nothing to wait for.
            guard let next else { return scheduleOverdueCheck(in: nil) }
            scheduleOverdueCheck(in: next.timeIntervalSince(t) + 0.001)
        } catch {
            scheduleOverdueCheck(in: Self.overdueRetryWait)
        }
    }

    private func scheduleOverdueCheck(in seconds: TimeInterval?) {
        overdueTimer?.cancel()
        overdueTimer = nil
        guard watchingOverdue, let seconds else { return }
        let wait = min(max(0, seconds), Self.longestOverdueWait)
        let clock = self.clock
        let deadline = clock.now().addingTimeInterval(wait)
        overdueTimer = Task { [weak self] in
            guard (try? await clock.sleep(until: deadline)) != nil, !Task.isCancelled else { return }
            await self?.overdueTimerFired()
        }
    }

    private func overdueTimerFired() async {
        overdueTimer = nil  // this task is running: a check's rescheduling must not cancel it
        do {
            try await checkOverdue()
        } catch {
            scheduleOverdueCheck(in: Self.overdueRetryWait)
        }
    }
}

extension OverdueNotice {
    /// The announcement of an overdue rental.
    public init(rental: Rental) {
        let due = rental.dueAt ?? rental.rentedAt
        self.init(rentalId: rental.id, deviceId: rental.deviceId, model: rental.model, userId: rental.userId,
                  userName: rental.userName, dueAt: due,
                  message: "\(rental.deviceId) (\(rental.model)) lent to \(rental.userName) (\(rental.userId)) was due back "
                      + "\(LendingFormat.iso8601(due)); ask for it back, or renew it: roombridgectl renew \(rental.deviceId) --due DATE")
    }
}
