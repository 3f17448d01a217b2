#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Who made a change: recorded on rentals (`lentBy`, `returnedBy`) and on the device log
/// (`actor`), stored and shown as ``text``.
public enum ChangeActor: Sendable, Hashable, CustomStringConvertible {
    /// A user of the inventory: their badge tapped at the reader (the armed user), or named by
    /// a client (`roombridgectl return D --by U`). Text: the user ID.
    case user(UserID)
    /// A local Unix user calling the daemon's socket, from the socket's peer credentials
    /// (`SO_PEERCRED`). Text: `unix:NAME` (`unix:UID` when the UID has no name).
    case unixUser(String)
    /// A person signed in to a trusted front end (roombridge-web) that called the socket as the
    /// Unix user `via`. Text: `web:NAME via unix:VIA`.
    case signedIn(String, via: String)

    /// The stored and displayed form.
    public var text: String {
        switch self {
        case .user(let id): id
        case .unixUser(let name): "unix:\(name)"
        case .signedIn(let name, let via): "web:\(name) via unix:\(via)"
        }
    }

    public var description: String { text }

    /// The longest name a front end may pass for its signed-in person.
    public static let maximumNameLength = 200

    /// The name a front end passes for its signed-in person, checked: printable, not blank,
    /// at most ``maximumNameLength`` characters.
    /// - Throws: ``LendingError/invalidField(_:reason:)`` for the field `actor`.
    public static func signedInName(_ name: String) throws(LendingError) -> String {
        try TextRules.requirePrintable(name, "actor")
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw .invalidField("actor", reason: "must not be empty") }
        guard trimmed.count <= maximumNameLength else {
            throw .invalidField("actor", reason: "is longer than \(maximumNameLength) characters")
        }
        return trimmed
    }
}
