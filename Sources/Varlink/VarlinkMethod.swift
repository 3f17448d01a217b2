/// One method of a Varlink interface as a type: its full name, the parameters it takes and the
/// reply it gives, both Codable in the wire's form. A client calls it as
/// `client.call(SomeInterface.Method.self, parameters)` and gets the typed reply; a contract
/// test compares both types with the interface's description, so they cannot drift.
public protocol VarlinkMethod: Sendable {
    associatedtype Parameters: Codable & Sendable
    associatedtype Reply: Codable & Sendable
    /// The fully qualified method name, e.g. `io.roombridge.Inventory.GetDevice`.
    static var name: String { get }
}

/// A method's empty parameter object, or its empty reply `()`.
public struct VarlinkNothing: Codable, Sendable, Equatable {
    public init() {}
}
