/// Why a curtain operation failed, in terms a user can act on.
///
/// The client maps D-Bus errors from BlueZ with ``CurtainError/fromBlueZ(name:message:)``.
public enum CurtainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A parameter was refused before anything was written.
    case invalidCommand(CurtainCommandError)
    /// A wall-switch motion is in progress; the person at the switch wins (curtain-gatt.md, manual priority).
    case manualOperationActive
    /// There is no connection to the curtain right now (commands are not queued).
    case notConnected
    /// The controller answered a write with an ATT error.
    case rejectedByDevice(CurtainRejection)
    /// The curtain refused a request in its own reply (SwitchBot status byte, AM43 NACK, `roombridge` ERROR frame).
    case refusedByCurtain(CurtainDeviceError)
    /// BlueZ is busy with another operation on the device (`org.bluez.Error.InProgress`).
    case busy(String)
    /// No answer in time.
    case timeout(String)
    /// BlueZ (bluetoothd) is not on the bus.
    case bluetoothServiceUnavailable
    /// Any other BlueZ / D-Bus error, with its name and text.
    case bluetooth(name: String, message: String)

    public var description: String {
        switch self {
        case .invalidCommand(let e): "invalid command: \(e)"
        case .manualOperationActive:
            "manual operation in progress: the wall switch is moving the curtain; try again when it stops"
        case .notConnected: "the curtain is not connected: wait for the reconnection or request a reconnect"
        case .rejectedByDevice(let r): "the curtain refused the command: \(r)"
        case .refusedByCurtain(let e): e.description
        case .busy(let m): "Bluetooth is busy (\(m)); try again in a moment"
        case .timeout(let what): "timed out: \(what)"
        case .bluetoothServiceUnavailable:
            "the Bluetooth service (bluetoothd, org.bluez) is not running: start it (systemctl start bluetooth)"
        case .bluetooth(let name, let message): "Bluetooth error \(name): \(message)"
        }
    }

    /// Maps an error reply from BlueZ (D-Bus error name and message) to a typed error.
    ///
    /// Texts follow bluez `src/gatt-client.c` `create_gatt_dbus_error()` (ATT errors) and
    /// `src/error.c` (`btd_error_*`); see docs/bluez-notes.md.
    public static func fromBlueZ(name: String, message: String) -> CurtainError {
        switch name {
        case "org.bluez.Error.InvalidArguments" where message == "Invalid Length":
            return .rejectedByDevice(.invalidLength)
        case "org.bluez.Error.Failed":
            if let code = parseATTError(message) { return .rejectedByDevice(CurtainRejection(attError: code)) }
            if message == "Not connected" { return .notConnected }
            return .bluetooth(name: name, message: message)
        case "org.bluez.Error.NotConnected":
            return .notConnected
        case "org.bluez.Error.InProgress":
            return .busy(message)
        case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod":
            // The GATT object went away with the link (InterfacesRemoved raced our call).
            return .notConnected
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
             "org.freedesktop.DBus.Error.TimedOut":
            return .timeout(message)
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .bluetoothServiceUnavailable
        default:
            return .bluetooth(name: name, message: message)
        }
    }

    /// Parses "Operation failed with ATT error: 0x13" → 0x13.
    static func parseATTError(_ message: String) -> UInt8? {
        let prefix = "Operation failed with ATT error: 0x"
        guard message.hasPrefix(prefix) else { return nil }
        return UInt8(message.dropFirst(prefix.count), radix: 16)
    }
}

/// An ATT error returned by the controller to a write request.
public enum CurtainRejection: Sendable, Hashable, CustomStringConvertible {
    /// 0x0D: the command had the wrong length.
    case invalidLength
    /// 0x13: a parameter was out of range.
    case outOfRange
    /// 0x80: the controller does not know the opcode (older firmware?).
    case unknownCommand
    /// Any other ATT error code.
    case attError(UInt8)

    public init(attError code: UInt8) {
        switch code {
        case ATTError.invalidAttributeValueLength: self = .invalidLength
        case ATTError.valueNotAllowed: self = .outOfRange
        case ATTError.curtainUnknownOpcode: self = .unknownCommand
        default: self = .attError(code)
        }
    }

    public var description: String {
        switch self {
        case .invalidLength: "wrong command length (ATT error 0x0d)"
        case .outOfRange: "a value is out of range (ATT error 0x13)"
        case .unknownCommand: "unknown command (ATT error 0x80): check the controller's firmware version"
        case .attError(let c): "ATT error \(hex(c))"
        }
    }
}
