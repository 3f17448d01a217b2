import CurtainProtocol

/// Waiting for the cache or state to change, with deadlines on the injected clock.
extension CurtainClient {
    func changed() {
        let waiters = changeWaiters
        changeWaiters.removeAll()
        for w in waiters { w.resume() }
    }

    /// Re-evaluates `check` after every cache/state change until it returns a value or throws; throws
    /// ``CurtainError/timeout(_:)`` after `timeout`.
    @discardableResult
    func until<T>(timeout: Duration?, _ check: () throws -> T?) async throws -> T {
        let clock = configuration.clock
        let deadline = timeout.map { clock.elapsed() + $0 }
        let timer = startTimer(deadline)
        defer { timer?.cancel() }
        while true {
            try Task.checkCancellation()
            if let value = try check() { return value }
            if let deadline, clock.elapsed() >= deadline { throw CurtainError.timeout("no answer from BlueZ in time") }
            await nextChange()
        }
    }

    /// Waits `delay`, returning early when `wake` becomes true.
    func pause(_ delay: Duration, wake: () -> Bool) async throws {
        let clock = configuration.clock
        let deadline = clock.elapsed() + delay
        let timer = startTimer(deadline)
        defer { timer?.cancel() }
        while clock.elapsed() < deadline, !wake() {
            try Task.checkCancellation()
            await nextChange()
        }
    }

    /// Wakes the waiters at `deadline` (on the injected clock), so that they see it has passed.
    func startTimer(_ deadline: Duration?) -> Task<Void, Never>? {
        deadline.map { d in
            Task { [weak self, clock = configuration.clock] in
                try? await clock.sleep(for: d - clock.elapsed())
                await self?.changed()
            }
        }
    }

    func nextChange() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { changeWaiters.append($0) }
        } onCancel: {
            Task { [weak self] in await self?.changed() }
        }
    }
}
