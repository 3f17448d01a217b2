#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO
import Synchronization
import Retry

/// Online or offline, honestly: every call leases a pooled connection within the connect timeout
/// or reports the database offline; while offline, calls fail at once with
/// ``LendingError/storageOffline(since:)`` (nothing is sent, so nothing is recorded) and one
/// background task probes the server with backoff (0.25 s doubling to 5 s) until it answers.
///
/// A connection lost before COMMIT was sent leaves nothing behind (the server rolls the
/// transaction back), so such a call is tried once more on a new connection before the database
/// is declared offline.
final class Connectivity: Sendable {
    private struct State {
        var availability = DatabaseAvailability.online
        var observers: [@Sendable (DatabaseAvailability) -> Void] = []
        var probe: Task<Void, Never>?
        var stopped = false
    }

    private let state = Mutex(State())
    /// When the server last answered a call (a result or a refusal).
    private let lastAnswer = InstantBox()
    private let client: PostgresClient
    private let timeout: Duration
    private let callTimeout: Duration
    private let logger: Logger

    /// `timeout` bounds the wait for a connection, `callTimeout` a call's statements on it.
    init(client: PostgresClient, timeout: Duration, callTimeout: Duration = .seconds(5), logger: Logger) {
        self.client = client
        self.timeout = timeout
        self.callTimeout = callTimeout
        self.logger = logger
    }

    var availability: DatabaseAvailability { state.withLock { $0.availability } }

    func observe(_ observer: @escaping @Sendable (DatabaseAvailability) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    func stop() {
        let probe = state.withLock { s in
            s.stopped = true
            defer { s.probe = nil }
            return s.probe
        }
        probe?.cancel()
    }

    /// Runs `body` on a leased connection (see the type's description).
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        if case .offline(let since, _) = availability { throw LendingError.storageOffline(since: since) }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await leased(body)
            } catch let failure as LeaseFailure {
                throw goOffline(reason: failure.reason)
            } catch let error as PSQLError where Self.isConnectionLoss(error) {
                if attempt < 2 { continue }
                throw goOffline(reason: Self.describe(error))
            } catch LendingError.storageOutcomeUnknown(let detail) {
                _ = goOffline(reason: detail)
                throw LendingError.storageOutcomeUnknown(detail: detail)
            }
        }
    }

    /// A connection from the pool within the timeout, else ``LeaseFailure``. Once leased, `body`
    /// gets `callTimeout`: a connection that stops answering (seen when the server shuts down
    /// under load: a statement then waited without end) is closed, which fails its statement, and
    /// the call reports the database offline, or ``LendingError/storageOutcomeUnknown(detail:)``
    /// when it was committing or still does not end.
    ///
    /// While other calls get answers the pool is only busy, and a lease waits on. The caller is
    /// answered by whichever comes first, and never waits for the pool: a lease
    /// still pending when its time is up (the pool may be in a connect attempt that does not
    /// heed cancellation) is cancelled and left to end by itself, and then runs no `body`.
    private func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let phase = LeasePhaseBox()
        let (client, timeout, callTimeout, lastAnswer) = (client, timeout, callTimeout, lastAnswer)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let answer = AnswerOnce(continuation)
            let work = Task {
                do {
                    let value = try await client.withConnection { connection in
                        let won = phase.value.withLock { p in
                            guard p == .waiting else { return false }
                            p = .leased
                            return true
                        }
                        guard won else { throw LeaseFailure(reason: "no connection within \(timeout)") }
                        let stalled = FlagBox()
                        let watchdog = Task {
                            try await Task.sleep(for: callTimeout)
                            stalled.value.withLock { $0 = true }
                            try? await connection.close()
                            // Closing did not end the statement either: answer without it.
                            try await Task.sleep(for: .seconds(1))
                            answer.resume(throwing: LendingError.storageOutcomeUnknown(
                                detail: "the database stopped answering for \(callTimeout + .seconds(1))"))
                        }
                        defer { watchdog.cancel() }
                        do {
                            let value = try await body(connection)
                            lastAnswer.value.withLock { $0 = .now }
                            return value
                        } catch LendingError.storageOutcomeUnknown(let detail) {
                            throw LendingError.storageOutcomeUnknown(detail: detail)
                        } catch let error as LendingError {
                            lastAnswer.value.withLock { $0 = .now }  // a refusal is an answer
                            throw error
                        } catch where stalled.value.withLock({ $0 }) {
                            throw LeaseFailure(reason: "the database did not answer within \(callTimeout)")
                        }
                    }
                    answer.resume(returning: value)
                } catch {
                    if phase.value.withLock({ $0 }) != .leased, !(error is LeaseFailure) {
                        answer.resume(throwing: LeaseFailure(reason: Self.describe(error)))
                    } else {
                        answer.resume(throwing: error)
                    }
                }
            }
            Task {
                while true {
                    try? await Task.sleep(for: timeout)
                    if phase.value.withLock({ $0 }) != .waiting { return }
                    // Other calls got answers meanwhile: the pool is busy, the server is there.
                    if let last = lastAnswer.value.withLock({ $0 }), ContinuousClock.now - last < timeout { continue }
                    let expired = phase.value.withLock { p in
                        guard p == .waiting else { return false }
                        p = .timedOut
                        return true
                    }
                    if expired {
                        work.cancel()
                        answer.resume(throwing: LeaseFailure(reason: "no connection within \(timeout)"))
                    }
                    return
                }
            }
        }
    }

    /// Marks the database offline (once per episode, telling the observers and starting the
    /// probe) and returns the error the call gets.
    private func goOffline(reason: String) -> LendingError {
        let (since, observers, first) = state.withLock { s -> (Date, [@Sendable (DatabaseAvailability) -> Void], Bool) in
            if case .offline(let since, _) = s.availability { return (since, [], false) }
            let now = Date()
            s.availability = .offline(since: now, reason: reason)
            if !s.stopped { s.probe = Task { [weak self] in await self?.probeUntilOnline() } }
            return (now, s.observers, true)
        }
        if first {
            logger.error("the database is offline (\(reason)): taps and changes are refused until it answers again; reconnecting")
            for observer in observers { observer(.offline(since: since, reason: reason)) }
        }
        return .storageOffline(since: since)
    }

    /// The probe's waits: 0.25 s doubling to 5 s.
    static let probeBackoff = Backoff(initial: .milliseconds(250), multiplier: 2, maximum: .seconds(5))

    private func probeUntilOnline() async {
        var attempt = 1
        let logger = self.logger
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.probeBackoff.delay(attempt: attempt))
            if Task.isCancelled { return }
            do {
                _ = try await leased { connection in
                    try await connection.query("SELECT 1", logger: logger)
                    return true
                }
                let (since, observers) = state.withLock { s -> (Date?, [@Sendable (DatabaseAvailability) -> Void]) in
                    guard case .offline(let since, _) = s.availability else { return (nil, []) }
                    s.availability = .online
                    s.probe = nil
                    return (since, s.observers)
                }
                if let since {
                    let seconds = Int(Date().timeIntervalSince(since).rounded())
                    logger.notice("the database is back online after \(seconds) s offline: taps and changes are recorded again")
                    for observer in observers { observer(.online) }
                }
                return
            } catch {
                logger.debug("the database still does not answer: \(Self.describe(error))")
                attempt += 1
            }
        }
    }

    /// Errors that mean the connection or the server went away (not a refused statement).
    static func isConnectionLoss(_ error: PSQLError) -> Bool {
        switch error.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return true
        case .server:
            // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now; class 08: connection exceptions.
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("57P") || state.hasPrefix("08")
        default:
            return false
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

private enum LeasePhase { case waiting, leased, timedOut }

/// Who won: the lease or the clock.
private final class LeasePhaseBox: Sendable {
    let value = Mutex(LeasePhase.waiting)
}

/// Resumes a continuation once; later answers are dropped.
private final class AnswerOnce<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = Mutex(continuation) }

    func resume(returning value: T) { take()?.resume(returning: value) }
    func resume(throwing error: any Error) { take()?.resume(throwing: error) }

    private func take() -> CheckedContinuation<T, any Error>? {
        continuation.withLock { c in
            defer { c = nil }
            return c
        }
    }
}

/// An instant shared between tasks.
private final class InstantBox: Sendable {
    let value = Mutex<ContinuousClock.Instant?>(nil)
}

/// Set once a leased connection stopped answering and was closed.
private final class FlagBox: Sendable {
    let value = Mutex(false)
}

/// No connection could be had (the call was not started), or it stopped answering before the
/// call committed (the server rolls the transaction back): nothing was recorded.
struct LeaseFailure: Error {
    let reason: String
}
