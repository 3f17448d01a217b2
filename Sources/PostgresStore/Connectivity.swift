#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO
import Synchronization

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
    private let client: PostgresClient
    private let timeout: Duration
    private let logger: Logger

    init(client: PostgresClient, timeout: Duration, logger: Logger) {
        self.client = client
        self.timeout = timeout
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
            } catch let error as PostgresStoreError {
                _ = goOffline(reason: error.description)
                throw error
            }
        }
    }

    /// A connection from the pool within the timeout, else ``LeaseFailure``; once leased,
    /// `body` runs to its end whatever the clock says (a transaction is never abandoned midway).
    private func leased<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let phase = LeasePhaseBox()
        let (client, timeout) = (client, timeout)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                do {
                    return try await client.withConnection { connection in
                        let won = phase.value.withLock { p in
                            guard p == .waiting else { return false }
                            p = .leased
                            return true
                        }
                        guard won else { throw LeaseFailure(reason: "no connection within \(timeout)") }
                        return try await body(connection)
                    }
                } catch let error where phase.value.withLock({ $0 }) != .leased {
                    if error is LeaseFailure { throw error }
                    throw LeaseFailure(reason: Self.describe(error))
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                let expired = phase.value.withLock { p in
                    guard p == .waiting else { return false }
                    p = .timedOut
                    return true
                }
                if expired { throw LeaseFailure(reason: "no connection within \(timeout)") }
                return nil
            }
            while let result = try await group.next() {
                if let value = result {
                    group.cancelAll()
                    return value
                }
            }
            throw LeaseFailure(reason: "no connection")
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

    private func probeUntilOnline() async {
        var delay = Duration.milliseconds(250)
        let logger = self.logger
        while !Task.isCancelled {
            try? await Task.sleep(for: delay)
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
                delay = min(delay * 2, .seconds(5))
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

/// No connection could be had: the call was not started.
struct LeaseFailure: Error {
    let reason: String
}
