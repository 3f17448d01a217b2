/// A rental that another daemon sharing the database lent, returned or changed (renewed, noted).
public struct RentalChange: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case lent, returned, changed
    }
    public var kind: Kind
    /// The rental as it is after the change.
    public var rental: Rental
    /// The change's event ID: increasing across every daemon on the database.
    public var seq: Int64

    public init(kind: Kind, rental: Rental, seq: Int64) {
        self.kind = kind
        self.rental = rental
        self.seq = seq
    }
}
