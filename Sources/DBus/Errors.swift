/// An error on the D-Bus level: a remote error reply, a local libdbus failure, or a value that
/// cannot be marshalled or converted. The `name` is kept verbatim (e.g. `org.bluez.Error.Failed`)
/// together with the human-readable `message` (e.g. "Operation failed with ATT error: 0x13").
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.freedesktop.DBus.Error.UnknownMethod`.
    public var name: String
    /// The error text (first string argument of the error reply; may be empty).
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    // MARK: Well-known names (https://dbus.freedesktop.org/doc/dbus-specification.html)

    public static let failedName = "org.freedesktop.DBus.Error.Failed"
    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"
    public static let invalidArgsName = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let invalidSignatureName = "org.freedesktop.DBus.Error.InvalidSignature"
    public static let unknownMethodName = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObjectName = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterfaceName = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownPropertyName = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnlyName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let nameHasNoOwnerName = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let notSupportedName = "org.freedesktop.DBus.Error.NotSupported"

    /// `org.freedesktop.DBus.Error.Failed` with a message.
    public static func failed(_ message: String) -> DBusError { DBusError(name: failedName, message: message) }
    /// `org.freedesktop.DBus.Error.InvalidArgs` with a message.
    public static func invalidArgs(_ message: String) -> DBusError { DBusError(name: invalidArgsName, message: message) }
    /// The connection is closed or the bus went away; open a new connection.
    public static func disconnected(_ detail: String = "") -> DBusError {
        DBusError(name: disconnectedName,
                  message: "The D-Bus connection is closed\(detail.isEmpty ? "" : " (\(detail))"); open a new connection")
    }
    /// A value had a different D-Bus type than expected.
    static func typeMismatch(expected: String, got: DBusValue) -> DBusError {
        DBusError(name: invalidArgsName,
                  message: "Expected a D-Bus value of type '\(expected)', got '\(got.signature)' (\(got))")
    }
}
