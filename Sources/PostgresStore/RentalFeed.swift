#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Lending
import Logging
import PostgresNIO
import Synchronization

/// The other kiosks' rental changes, through LISTEN/NOTIFY on `roombridge_rentals` (schema v6):
/// each notification names the rental and its change's `change_seq`, and the rental is read back.
/// After a lost connection the feed listens again and then reads every change it has not seen
/// (`change_seq` above the last one, less a margin), so a listener that was away misses nothing the
/// database recorded. The daemon's own changes (its store's `application_name`) are left out.
///
/// `change_seq` is drawn when a statement runs, not when it commits, so two kiosks' changes can commit
/// (and notify) out of order: the feed remembers which changes it passed on rather than only the
/// highest, and a late, lower one still gets through.
enum RentalFeed {
    static let channel = "roombridge_rentals"
    /// How far below the highest change seen a catch-up reads again, for changes that committed late.
    static let catchUpMargin: Int64 = 256
    /// How many passed-on changes the feed remembers.
    static let remembered = 4096

    /// The changes seen, shared by the feed's task and its listening connection.
    final class Watermark: Sendable {
        struct State {
            /// Where the feed started: nothing at or below it is passed on.
            var start: Int64?
            var highest: Int64?
            var recent: Set<Int64> = []
            var order: [Int64] = []
        }
        let state: Mutex<State>
        init(_ seq: Int64?) { state = Mutex(State(start: seq, highest: seq)) }

        /// Where a catch-up reads from; nil before the feed knows where it started.
        var catchUpFrom: Int64? {
            state.withLock { s in s.highest.map { max(s.start ?? 0, $0 - RentalFeed.catchUpMargin) } }
        }

        /// Sets the starting point when the feed could not read it before its first connection.
        func start(at seq: Int64) {
            state.withLock { s in
                if s.start == nil { s.start = seq; s.highest = seq }
            }
        }

        /// Records `seq`; false when it was passed on already or is older than the feed.
        func admit(_ seq: Int64) -> Bool {
            state.withLock { s in
                guard seq > (s.start ?? 0), !s.recent.contains(seq) else { return false }
                s.recent.insert(seq)
                s.order.append(seq)
                if s.order.count > RentalFeed.remembered {
                    let forget = s.order.count - RentalFeed.remembered / 2
                    s.recent.subtract(s.order.prefix(forget))
                    s.order.removeFirst(forget)
                }
                s.highest = max(s.highest ?? 0, seq)
                return true
            }
        }
    }

    /// One notification's payload.
    struct Notice: Decodable {
        var rental: Int64
        var seq: Int64
        var origin: String
        var kind: String
    }
}

extension PostgresInventoryStore {
    /// Changes made by other daemons after this call returns, until the task iterating them is cancelled.
    /// (When the database cannot be read now, from the feed's first connection on.)
    public func rentalChanges() async -> AsyncStream<RentalChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: RentalChange.self, bufferingPolicy: .bufferingNewest(1024))
        // The starting point is read before returning, so a change committed right after the call is not lost.
        let seen = RentalFeed.Watermark(try? await lastChangeSeq())
        let task = Task { [self] in
            var delay: Duration = .milliseconds(250)
            while !Task.isCancelled {
                let began = ContinuousClock.now
                do {
                    try await client.withConnection { connection in
                        try await self.follow(on: connection, seen: seen, into: continuation)
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.debug("rental feed: \(error); listening again in \(delay)")
                }
                // A connection that held for a while was not a failing one: the next try is prompt again.
                if ContinuousClock.now - began > .seconds(10) { delay = .milliseconds(250) }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Listens on `connection`, catches up on what happened since `seen`, then follows the notices.
    private func follow(on connection: PostgresConnection, seen: RentalFeed.Watermark,
                        into continuation: AsyncStream<RentalChange>.Continuation) async throws {
        try await connection.listen(on: RentalFeed.channel) { notices in
            // Listening: whatever commits from here on arrives as a notice; catch up first.
            if let from = seen.catchUpFrom {
                for change in try await changes(after: from, on: connection) where seen.admit(change.seq) {
                    continuation.yield(change)
                }
            } else {
                seen.start(at: try await lastChangeSeq(on: connection))
            }
            for try await notification in notices {
                guard let notice = try? JSONValueDecoder().decode(RentalFeed.Notice.self,
                                                                  from: try JSONParser.parse(Array(notification.payload.utf8))),
                      seen.admit(notice.seq),
                      notice.origin != origin,
                      let rental = try await rental(id: notice.rental, on: connection) else { continue }
                continuation.yield(RentalChange(kind: RentalChange.Kind(rawValue: notice.kind) ?? .changed, rental: rental,
                                                seq: notice.seq))
            }
        }
    }

    private func lastChangeSeq(on connection: PostgresConnection? = nil) async throws -> Int64 {
        let query: PostgresQuery = "SELECT COALESCE(MAX(change_seq), 0) FROM rentals"
        if let connection {
            return try await Self.rows(connection, query, logger: logger) { try $0[0].decode(Int64.self) }.first ?? 0
        }
        return try await fetch(query) { try $0[0].decode(Int64.self) }.first ?? 0
    }

    /// Changes after `seq` by other daemons (`change_origin` is not this store's).
    private func changes(after seq: Int64, on connection: PostgresConnection) async throws -> [RentalChange] {
        try await Self.rows(connection, """
            SELECT \(unescaped: Columns.rental), r.change_seq FROM rentals r
            WHERE r.change_seq > \(seq) AND r.change_origin IS DISTINCT FROM \(origin) ORDER BY r.change_seq
            """, logger: logger) { row in
            // A rental lent and returned while the listener was away arrives once, as returned.
            let rental = try Decode.rental(row)
            let seq = try row[15].decode(Int64.self)
            return RentalChange(kind: rental.returnedAt != nil ? .returned : .lent, rental: rental, seq: seq)
        }
    }

    private func rental(id: Int64, on connection: PostgresConnection) async throws -> Rental? {
        try await Self.rows(connection, "SELECT \(unescaped: Columns.rental) FROM rentals r WHERE r.id = \(id)",
                            logger: logger) { try Decode.rental($0) }.first
    }
}
