#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import PostgresNIO
import Synchronization

/// The other kiosks' rental changes, through LISTEN/NOTIFY on `roombridge_rentals` (schema v6):
/// each notification names the rental and its change's `change_seq`, and the rental is read back.
/// After a lost connection the feed listens again and then reads every change it has not seen
/// (`change_seq` above the last one), so a listener that was away misses nothing the database
/// recorded. The daemon's own changes (its store's `application_name`) are left out.
enum RentalFeed {
    static let channel = "roombridge_rentals"

    /// The last change seen, shared by the feed's task and its listening connection.
    final class Watermark: Sendable {
        let value: Mutex<Int64?>
        init(_ seq: Int64?) { value = Mutex(seq) }
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
    /// Changes made by other daemons, from now on, until the task iterating them is cancelled.
    public func rentalChanges() -> AsyncStream<RentalChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: RentalChange.self, bufferingPolicy: .bufferingNewest(1024))
        let task = Task { [self] in
            let seen = RentalFeed.Watermark(try? await lastChangeSeq())
            var delay: Duration = .milliseconds(250)
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await self.follow(on: connection, seen: seen, into: continuation)
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.debug("rental feed: \(error); listening again in \(delay)")
                }
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
            if let from = seen.value.withLock({ $0 }) {
                for change in try await changes(after: from, on: connection) {
                    continuation.yield(change)
                    seen.value.withLock { $0 = max($0 ?? 0, change.seq) }
                }
            } else {
                let last = try await lastChangeSeq(on: connection)
                seen.value.withLock { $0 = last }
            }
            for try await notification in notices {
                guard let notice = try? JSONDecoder().decode(RentalFeed.Notice.self, from: Data(notification.payload.utf8)),
                      seen.value.withLock({ s in
                          guard notice.seq > (s ?? 0) else { return false }
                          s = notice.seq
                          return true
                      }),
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
