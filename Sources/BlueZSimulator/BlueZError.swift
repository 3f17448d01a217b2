import DBus

/// BlueZ error replies, with bluez `src/error.c` / `gatt-client.c` names and texts.
enum BlueZError {
    static let notReady = DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
    static let notConnected = DBusError(name: "org.bluez.Error.NotConnected", message: "Not Connected")
    static let busy = DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
    static let inProgress = DBusError(name: "org.bluez.Error.InProgress", message: "In Progress")
    static let invalidArgs = DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call")
    static let gattNotConnected = DBusError(name: "org.bluez.Error.Failed", message: "Not connected")
    static let leAbortByLocal = DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
    /// src/error.h `ERR_BREDR_CONN_CANCELED`.
    static let connectionCanceled = DBusError(name: "org.bluez.Error.Failed", message: "br-connection-canceled")

    /// gatt-client.c `create_gatt_dbus_error()`.
    static func att(_ code: UInt8) -> DBusError {
        switch code {
        case 0x02: DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        case 0x03: DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
        case 0x05, 0x0C, 0x0F: DBusError(name: "org.bluez.Error.NotPermitted", message: "Not paired")
        case 0x07: DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid offset")
        case 0x0D: DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid Length")
        case 0x08: DBusError(name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized")
        case 0x06: DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        case 0x00: DBusError(name: "org.bluez.Error.Failed", message: "Operation failed")
        default:
            DBusError(name: "org.bluez.Error.Failed",
                      message: "Operation failed with ATT error: 0x" + (code < 0x10 ? "0" : "") + String(code, radix: 16))
        }
    }
}

extension String {
    func replacingColons() -> String {
        String(map { $0 == ":" ? "_" : $0 }).uppercased()
    }
}
