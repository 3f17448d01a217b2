#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Varlink

/// `io.roombridge.Outbox`'s methods as the clients call them (see ``InventoryAPI``), and its two
/// wire types, which the interface (RoomBridgeInterfaces) answers with.
public enum OutboxAPI {
    public static let interface = "io.roombridge.Outbox"

    /// `io.roombridge.Outbox` type `TargetCounts`.
    public struct TargetCounts: Codable, Sendable, Equatable {
        public var target: String
        public var configured: Bool
        public var pending: Int
        public var failing: Int
        public var delivered: Int
        public var dropped: Int

        public init(_ c: OutboxCounts, configured: Bool) {
            target = c.target
            self.configured = configured
            pending = c.pending
            failing = c.failing
            delivered = c.delivered
            dropped = c.dropped
        }
    }

    /// `io.roombridge.Outbox` type `Entry`: an outbox entry without its payload, times in the wire's one form.
    public struct Entry: Codable, Sendable, Equatable {
        public var seq: Int64
        public var eventId: String
        public var target: String
        public var kind: OutboxEventKind
        public var deviceId: String
        public var state: OutboxState
        public var attempts: Int
        public var createdAt: Date
        public var nextAttemptAt: Date
        public var lastError: String?
        public var deliveredAt: Date?

        public init(_ e: OutboxEntry) {
            seq = e.seq
            eventId = e.eventId.uuidString.lowercased()
            target = e.target
            kind = e.kind
            deviceId = e.deviceId
            state = e.state
            attempts = e.attempts
            createdAt = e.createdAt
            nextAttemptAt = e.nextAttemptAt
            lastError = e.lastError
            deliveredAt = e.deliveredAt
        }
    }

    /// Counts per target, by name.
    public enum Status: VarlinkMethod {
        public static let name = "io.roombridge.Outbox.Status"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var targets: [TargetCounts] }
    }

    /// Entries, newest first.
    public enum List: VarlinkMethod {
        public static let name = "io.roombridge.Outbox.List"
        public struct Parameters: Codable, Sendable {
            public var state: OutboxState?
            public var limit: Int?
            public var cursor: String?
            public init(state: OutboxState? = nil, limit: Int? = nil, cursor: String? = nil) {
                self.state = state
                self.limit = limit
                self.cursor = cursor
            }
        }
        public struct Reply: Codable, Sendable {
            public var entries: [Entry]
            public var nextCursor: String?
        }
    }

    /// Parameters naming one entry by its sequence number.
    public struct BySeq: Codable, Sendable, Equatable {
        public var seq: Int64
        public init(seq: Int64) { self.seq = seq }
    }

    /// Sends a pending or dropped entry again now.
    public enum Retry: VarlinkMethod {
        public static let name = "io.roombridge.Outbox.Retry"
        public typealias Parameters = BySeq
        public typealias Reply = VarlinkNothing
    }

    /// Drops a pending entry: it is never sent.
    public enum Drop: VarlinkMethod {
        public static let name = "io.roombridge.Outbox.Drop"
        public typealias Parameters = BySeq
        public typealias Reply = VarlinkNothing
    }
}
