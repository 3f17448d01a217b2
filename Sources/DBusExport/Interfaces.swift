import DBus

/// A named, typed method/signal argument (for introspection and input checking).
public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var signature: DBusSignature
    public init(_ name: String, _ signature: DBusSignature) {
        self.name = name
        self.signature = signature
    }
}

/// An incoming method call, as seen by a handler.
public struct DBusMethodCall: Sendable {
    /// The whole message (sender, path, interface, member, body).
    public let message: DBusMessage
    public var arguments: [DBusValue] { message.body }
    public var sender: String? { message.sender }
    public var path: DBusObjectPath { message.path ?? .root }
}

/// An exported method. The handler returns the reply body or throws a `DBusError`, which is sent
/// verbatim as the error reply (any other error becomes `org.freedesktop.DBus.Error.Failed`).
public struct DBusMethod: Sendable {
    public var name: String
    public var inArguments: [DBusArgument]
    public var outArguments: [DBusArgument]
    /// If true (the default), calls whose signature differs from `inArguments` are refused with
    /// `InvalidArgs` before the handler runs.
    public var checksArguments: Bool
    public var handler: @Sendable (DBusMethodCall) async throws -> [DBusValue]

    public init(_ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
                checksArguments: Bool = true,
                handler: @escaping @Sendable (DBusMethodCall) async throws -> [DBusValue]) {
        self.name = name
        self.inArguments = inArguments
        self.outArguments = outArguments
        self.checksArguments = checksArguments
        self.handler = handler
    }

    var inSignature: String { inArguments.map(\.signature.rawValue).joined() }
}

/// An exported property with a stored value.
public struct DBusProperty: Sendable {
    public enum Access: String, Sendable { case read, write, readwrite }
    /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` behaviour.
    public enum ChangeSignal: String, Sendable { case emits = "true", invalidates, const, none = "false" }

    public var name: String
    public var signature: DBusSignature
    public var access: Access
    public var changeSignal: ChangeSignal
    /// The value at export time; nil means the property does not exist yet (as BlueZ's optional
    /// properties such as `RSSI`: left out of GetAll, `InvalidArgs` on Get).
    public var initialValue: DBusValue?
    /// Called when a peer sets the property (after type and access checks). Throw a `DBusError`
    /// to refuse; otherwise the value is stored and `PropertiesChanged` emitted.
    public var setter: (@Sendable (DBusValue, DBusMethodCall) async throws -> Void)?

    public init(_ name: String, value: DBusValue, access: Access = .read, changeSignal: ChangeSignal = .emits,
                setter: (@Sendable (DBusValue, DBusMethodCall) async throws -> Void)? = nil) {
        self.name = name
        self.signature = value.signature
        self.access = access
        self.changeSignal = changeSignal
        self.initialValue = value
        self.setter = setter
    }

    /// A property of type `signature` that has no value yet (see `initialValue`).
    public init(_ name: String, signature: DBusSignature, access: Access = .read, changeSignal: ChangeSignal = .emits,
                setter: (@Sendable (DBusValue, DBusMethodCall) async throws -> Void)? = nil) {
        self.name = name
        self.signature = signature
        self.access = access
        self.changeSignal = changeSignal
        self.initialValue = nil
        self.setter = setter
    }
}

/// A signal declared for introspection.
public struct DBusSignalDescription: Sendable {
    public var name: String
    public var arguments: [DBusArgument]
    public init(_ name: String, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// An interface to export at an object path.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignalDescription]
    public init(_ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
                signals: [DBusSignalDescription] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}
