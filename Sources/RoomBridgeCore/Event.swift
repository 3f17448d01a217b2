#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One change of the system state, numbered.
///
/// Sequence numbers start at 1 and increase by one per event, so a client can tell
/// that it missed nothing. Encoded as `{"seq":…, "at":…, "kind":"curtain", "curtain":{…}}`.
public struct Event: Sendable, Equatable {
    public var seq: UInt64
    public var at: Date
    public var payload: Payload

    public init(seq: UInt64, at: Date, payload: Payload) {
        self.seq = seq
        self.at = at
        self.payload = payload
    }

    /// What changed.
    public enum Payload: Sendable, Equatable {
        /// A reader connected, disconnected or failed.
        case reader(ReaderStatus)
        /// A tag or card arrived in a reader's field (one per physical tap).
        case tagArrived(Tap)
        /// A tag left a reader's field.
        case tagRemoved(TagRemoval)
        /// A tag write was armed, finished, failed or was cancelled.
        case tagWrite(TagWriteStatus)
        /// The curtain's state changed; carries the whole new curtain state.
        case curtain(CurtainState)
        /// A lending outcome (armed, lent, returned, refused, …).
        case lending(LendingOutcome)
        /// A beacon entered or exited a region, its proximity changed, or scanning started or stopped.
        case presence(PresenceChangeEvent)
        /// A rental passed its due time (once per rental and due date).
        case overdue(OverdueNotice)
        /// An outbox target has been failing too long, or recovered after that.
        case outbox(OutboxNotice)
        /// A booking was made or cancelled.
        case booking(BookingNotice)
        /// A stocktake started or was closed.
        case stocktake(StocktakeNotice)
        /// A curtain's battery fell to a threshold (once per crossing, ``BatteryWatch``).
        case battery(BatteryNotice)
    }

    /// The payload's kind as it appears on the wire.
    public var kind: Kind {
        switch payload {
        case .reader: .reader
        case .tagArrived: .tagArrived
        case .tagRemoved: .tagRemoved
        case .tagWrite: .tagWrite
        case .curtain: .curtain
        case .lending: .lending
        case .presence: .presence
        case .overdue: .overdue
        case .outbox: .outbox
        case .booking: .booking
        case .stocktake: .stocktake
        case .battery: .battery
        }
    }

    /// Event kinds, as named on the wire.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case reader, tagArrived, tagRemoved, tagWrite, curtain, lending, presence, overdue, outbox, booking, stocktake, battery
    }
}

extension Event: Codable {
    private enum CodingKeys: String, CodingKey {
        case seq, at, kind, reader, tap, removal, tagWrite, curtain, lending, presence, overdue, outbox, booking, stocktake, battery
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seq = try c.decode(UInt64.self, forKey: .seq)
        at = try c.decode(Date.self, forKey: .at)
        switch try c.decode(Kind.self, forKey: .kind) {
        case .reader: payload = .reader(try c.decode(ReaderStatus.self, forKey: .reader))
        case .tagArrived: payload = .tagArrived(try c.decode(Tap.self, forKey: .tap))
        case .tagRemoved: payload = .tagRemoved(try c.decode(TagRemoval.self, forKey: .removal))
        case .tagWrite: payload = .tagWrite(try c.decode(TagWriteStatus.self, forKey: .tagWrite))
        case .curtain: payload = .curtain(try c.decode(CurtainState.self, forKey: .curtain))
        case .lending: payload = .lending(try c.decode(LendingOutcome.self, forKey: .lending))
        case .presence: payload = .presence(try c.decode(PresenceChangeEvent.self, forKey: .presence))
        case .overdue: payload = .overdue(try c.decode(OverdueNotice.self, forKey: .overdue))
        case .outbox: payload = .outbox(try c.decode(OutboxNotice.self, forKey: .outbox))
        case .booking: payload = .booking(try c.decode(BookingNotice.self, forKey: .booking))
        case .stocktake: payload = .stocktake(try c.decode(StocktakeNotice.self, forKey: .stocktake))
        case .battery: payload = .battery(try c.decode(BatteryNotice.self, forKey: .battery))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(seq, forKey: .seq)
        try c.encode(at, forKey: .at)
        try c.encode(kind, forKey: .kind)
        switch payload {
        case .reader(let v): try c.encode(v, forKey: .reader)
        case .tagArrived(let v): try c.encode(v, forKey: .tap)
        case .tagRemoved(let v): try c.encode(v, forKey: .removal)
        case .tagWrite(let v): try c.encode(v, forKey: .tagWrite)
        case .curtain(let v): try c.encode(v, forKey: .curtain)
        case .lending(let v): try c.encode(v, forKey: .lending)
        case .presence(let v): try c.encode(v, forKey: .presence)
        case .overdue(let v): try c.encode(v, forKey: .overdue)
        case .outbox(let v): try c.encode(v, forKey: .outbox)
        case .booking(let v): try c.encode(v, forKey: .booking)
        case .stocktake(let v): try c.encode(v, forKey: .stocktake)
        case .battery(let v): try c.encode(v, forKey: .battery)
        }
    }
}
