#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import RoomBridgeCore
import Retry

/// What happened to a rental, as the outbox tells other systems; `due` and `digest` are reminders
/// (``ReminderEvent``).
public enum OutboxEventKind: String, Sendable, Hashable, CaseIterable, Codable {
    case lend, `return`, renew, overdue, due, digest
    /// A reminder to a booker: their booking starts that day.
    case booking
    /// A curtain's battery fell to a threshold.
    case battery
}

/// Where an outbox entry is in its delivery.
public enum OutboxState: String, Sendable, Hashable, CaseIterable, Codable {
    /// Not delivered yet (never tried, or retrying after failed attempts).
    case pending
    /// The target accepted it.
    case delivered
    /// An administrator dropped it; it is never sent.
    case dropped
}

/// A delivery target as the store sees it: its name, and which kinds of event it wants. The
/// store writes one outbox entry per event and per target whose filter takes the event.
public struct OutboxRoute: Sendable, Hashable {
    public var target: String
    /// Empty: every kind.
    public var kinds: Set<OutboxEventKind>

    public init(target: String, kinds: Set<OutboxEventKind> = []) {
        self.target = target
        self.kinds = kinds
    }

    public func accepts(_ kind: OutboxEventKind) -> Bool { kinds.isEmpty || kinds.contains(kind) }
}

/// One event for one target, written in the same transaction as the change it reports.
public struct OutboxEntry: Sendable, Hashable {
    /// Store-assigned, increasing: the entry's handle for retry and drop, and the order of
    /// delivery.
    public var seq: Int64
    /// The event's ID, the same for every target: receivers deduplicate by it (`Idempotency-Key`).
    public var eventId: UUID
    public var target: String
    public var kind: OutboxEventKind
    public var deviceId: DeviceID
    /// The JSON document sent (``OutboxEvent/payload(kind:eventId:rental:at:)``).
    public var payload: [UInt8]
    public var createdAt: Date
    /// Failed attempts so far.
    public var attempts: Int
    /// Not sent before this time (backoff after a failure).
    public var nextAttemptAt: Date
    public var state: OutboxState
    /// Why the last attempt failed.
    public var lastError: String?
    /// When the target accepted it.
    public var deliveredAt: Date?

    public init(seq: Int64, eventId: UUID, target: String, kind: OutboxEventKind, deviceId: DeviceID, payload: [UInt8],
                createdAt: Date, attempts: Int = 0, nextAttemptAt: Date, state: OutboxState = .pending,
                lastError: String? = nil, deliveredAt: Date? = nil) {
        self.seq = seq
        self.eventId = eventId
        self.target = target
        self.kind = kind
        self.deviceId = deviceId
        self.payload = payload
        self.createdAt = createdAt
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.state = state
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}

/// How many entries of one target are in each state.
public struct OutboxCounts: Sendable, Hashable, Codable {
    public var target: String
    public var pending: Int
    /// Pending entries whose last attempt failed (included in ``pending``).
    public var failing: Int
    public var delivered: Int
    public var dropped: Int

    public init(target: String, pending: Int = 0, failing: Int = 0, delivered: Int = 0, dropped: Int = 0) {
        self.target = target
        self.pending = pending
        self.failing = failing
        self.delivered = delivered
        self.dropped = dropped
    }
}

/// The rules both stores follow for the outbox: what an event's document says, which rows a
/// change writes, and when a failed entry is tried again.
public enum OutboxEvent {
    /// The rows a change writes: one per route that takes `kind`, all with one new event ID, due
    /// at once (`seq` 0: the store numbers them).
    /// `extra`: more fields of the document (a due notice's `booking`).
    public static func inserts(_ kind: OutboxEventKind, rental: Rental, at: Date, routes: [OutboxRoute],
                               eventId: UUID = UUID(), extra: [String: JSONValue] = [:]) -> [OutboxEntry] {
        let accepting = routes.filter { $0.accepts(kind) }
        guard !accepting.isEmpty else { return [] }
        let body = payload(kind: kind, eventId: eventId, rental: rental, at: at, extra: extra)
        return accepting.map {
            OutboxEntry(seq: 0, eventId: eventId, target: $0.target, kind: kind, deviceId: rental.deviceId, payload: body,
                        createdAt: at, nextAttemptAt: at)
        }
    }

    /// The JSON document of an event: `{"id", "kind", "at", "deviceId", "rental": {…}}`, dates
    /// ISO 8601 UTC.
    public static func payload(kind: OutboxEventKind, eventId: UUID, rental: Rental, at: Date,
                               extra: [String: JSONValue] = [:]) -> [UInt8] {
        let fields: [String: JSONValue] = [
            "id": .string(eventId.uuidString.lowercased()), "kind": .string(kind.rawValue), "at": .string(LendingFormat.iso8601(at)),
            "deviceId": .string(rental.deviceId), "rental": rentalObject(rental),
        ]
        return JSONValue.object(fields.merging(extra) { a, _ in a }).serializedBytes()
    }

    /// The rows of a curtain's low battery: `{"id", "kind": "battery", "at", "curtain", "battery", "threshold"}`, one
    /// per route that takes `battery`, with no device (`deviceId` empty).
    public static func battery(_ notice: BatteryNotice, at: Date, routes: [OutboxRoute],
                               eventId: UUID = UUID()) -> [OutboxEntry] {
        let accepting = routes.filter { $0.accepts(.battery) }
        guard !accepting.isEmpty else { return [] }
        let body = JSONValue.object([
            "id": .string(eventId.uuidString.lowercased()), "kind": .string(OutboxEventKind.battery.rawValue),
            "at": .string(LendingFormat.iso8601(at)), "curtain": .string(notice.curtain),
            "battery": .int(Int64(notice.battery)), "threshold": .int(Int64(notice.threshold)),
        ]).serializedBytes()
        return accepting.map {
            OutboxEntry(seq: 0, eventId: eventId, target: $0.target, kind: .battery, deviceId: "", payload: body,
                        createdAt: at, nextAttemptAt: at)
        }
    }

    /// A booking as events carry it, dates ISO 8601 UTC.
    public static func bookingObject(_ booking: Booking) -> JSONValue {
        func text(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        return .object([
            "id": .int(booking.id), "deviceId": .string(booking.deviceId), "model": .string(booking.model),
            "userId": .string(booking.userId), "userName": .string(booking.userName),
            "startsAt": .string(LendingFormat.iso8601(booking.startsAt)), "endsAt": .string(LendingFormat.iso8601(booking.endsAt)),
            "state": .string(booking.state.rawValue), "bookedBy": text(booking.bookedBy),
        ])
    }

    /// A rental as events carry it, dates ISO 8601 UTC.
    public static func rentalObject(_ rental: Rental) -> JSONValue {
        func text(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func date(_ d: Date?) -> JSONValue { d.map { .string(LendingFormat.iso8601($0)) } ?? .null }
        return .object([
            "id": .int(rental.id), "deviceId": .string(rental.deviceId), "model": .string(rental.model),
            "serialNumber": .string(rental.serialNumber), "osVersion": .string(rental.osVersion),
            "userId": .string(rental.userId), "userName": .string(rental.userName),
            "rentedAt": date(rental.rentedAt), "dueAt": date(rental.dueAt), "returnedAt": date(rental.returnedAt),
            "lentBy": text(rental.lentBy), "returnedBy": text(rental.returnedBy), "location": text(rental.location),
            "returnLocation": text(rental.returnLocation), "returnNote": text(rental.returnNote),
        ])
    }

    /// One English line for chat targets (Slack, Teams, Google Chat): "D-001 (Pixel 8) lent to
    /// Alice, due 2026-12-01T17:00:00Z".
    public static func summary(_ payload: [UInt8]) -> String {
        guard let event = try? JSONValue(parsing: payload) else { return "RoomBridge event" }
        if event["kind"]?.stringValue == OutboxEventKind.digest.rawValue {
            func count(_ key: String) -> Int64 { event[key]?.intValue ?? 0 }
            let overdue = (event["overdue"]?.arrayValue ?? []).compactMap { $0["deviceId"]?.stringValue }
            let names = overdue.isEmpty ? "" : " (\(overdue.joined(separator: ", ")))"
            return "Lending on \(event["day"]?.stringValue ?? "?"): \(count("lent")) lent, \(count("overdueCount")) overdue\(names), "
                + "\(count("dueTodayCount")) more due today"
        }
        if event["kind"]?.stringValue == OutboxEventKind.booking.rawValue, let b = event["booking"] {
            return "\(b["deviceId"]?.stringValue ?? "?") (\(b["model"]?.stringValue ?? "?")) is booked for "
                + "\(b["userName"]?.stringValue ?? "?") from \(b["startsAt"]?.stringValue ?? "?") to \(b["endsAt"]?.stringValue ?? "?")"
        }
        if event["kind"]?.stringValue == OutboxEventKind.battery.rawValue, let curtain = event["curtain"]?.stringValue,
           let battery = event["battery"]?.intValue, let threshold = event["threshold"]?.intValue {
            return BatteryNotice(curtain: curtain, battery: Int(battery), threshold: Int(threshold)).sentence
        }
        guard let rental = event["rental"] else { return "RoomBridge event" }
        let device = "\(rental["deviceId"]?.stringValue ?? "?") (\(rental["model"]?.stringValue ?? "?"))"
        let user = rental["userName"]?.stringValue ?? "?"
        let due = rental["dueAt"]?.stringValue.map { ", due \($0)" } ?? ""
        switch event["kind"]?.stringValue.flatMap(OutboxEventKind.init(rawValue:)) {
        case .lend: return "\(device) lent to \(user)\(due)"
        case .return:
            let note = rental["returnNote"]?.stringValue.map { " (note: \($0))" } ?? ""
            return "\(device) returned by \(rental["returnedBy"]?.stringValue ?? user)\(note)"
        case .renew: return "\(device) renewed for \(user)\(due)"
        case .overdue: return "\(device) is overdue: lent to \(user)\(due)"
        case .due:
            let booked = event["booking"].map { b in
                "; \(b["userName"]?.stringValue ?? "?") has booked it from \(b["startsAt"]?.stringValue ?? "?")"
            } ?? ""
            return "\(device) is due back today from \(user)\(due)\(booked)"
        case .digest: return "RoomBridge digest"
        case .booking: return "RoomBridge booking reminder"
        case .battery: return "RoomBridge battery notice"
        case nil: return "RoomBridge event for \(device)"
        }
    }
}

extension Backoff {
    /// When a failed delivery is tried again: `base` · 2^(attempts−1), capped at `cap` (never below
    /// `base`), taken into its upper half by jitter so that many entries failing together do not
    /// retry together (``delay(attempt:jitter:)``).
    public static func outbox(base: Duration = .seconds(2), cap: Duration = .seconds(600)) -> Backoff {
        Backoff(initial: base, multiplier: 2, maximum: max(cap, base))
    }

    /// The time of the next attempt after the `attempts`-th failure (1 = the first) at `now`.
    public func nextAttempt(afterAttempts attempts: Int, now: Date, jitter: Double) -> Date {
        let d = delay(attempt: attempts, jitter: jitter).components
        return now.addingTimeInterval(Double(d.seconds) + Double(d.attoseconds) / 1e18)
    }
}

/// The checks both stores make on an administrator's retry or drop.
public enum OutboxLimits {
    /// The longest `lastError` kept.
    public static let errorLength = 500

    /// A missing entry is ``LendingError/noSuchOutboxEntry(_:)``; a delivered one cannot be retried
    /// or dropped.
    public static func requireNotDelivered(_ seq: Int64, _ state: OutboxState?, action: String) throws(LendingError) {
        guard let state else { throw .noSuchOutboxEntry(seq) }
        if state == .delivered {
            throw .invalidField("outbox entry \(seq)", reason: "it was delivered already and cannot be \(action)")
        }
    }
}
