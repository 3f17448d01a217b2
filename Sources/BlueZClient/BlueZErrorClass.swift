/// Classifies BlueZ errors for retry decisions (bleak-retry-connector `TRANSIENT_ERRORS`, bleak `client.py`).
public enum BlueZErrorClass: Sendable, Hashable {
    /// Retry soon: radio trouble or BlueZ busy.
    case transient
    /// The device object is gone: search again.
    case deviceMissing
    /// The adapter cannot do it now (powered off / not ready).
    case adapterNotReady
    /// Retrying will not help.
    case permanent

    /// Classifies a D-Bus error by name and message.
    public init(name: String, message: String) {
        switch name {
        case "org.bluez.Error.InProgress", "org.bluez.Error.AlreadyConnected":
            self = .transient
        case "org.bluez.Error.NotReady":
            self = .adapterNotReady
        case "org.freedesktop.DBus.Error.UnknownObject", "org.bluez.Error.DoesNotExist":
            self = .deviceMissing
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
             "org.freedesktop.DBus.Error.TimedOut":
            self = .transient
        case "org.bluez.Error.Failed", "org.bluez.Error.NotConnected":
            let transientTexts = ["le-connection-abort-by-local", "br-connection-canceled", "le-connection-timeout",
                                  "le-connection-abort-by-remote", "Operation already in progress",
                                  "Software caused connection abort", "Not connected", "Not Connected",
                                  "le-connection-busy", "Input/output error"]
            if message.contains("adapter-not-powered") {
                self = .adapterNotReady
            } else if transientTexts.contains(where: message.contains) {
                self = .transient
            } else {
                self = .permanent
            }
        default:
            self = .permanent
        }
    }
}
