/// A refusal reported by the curtain itself, with what the user should do about it.
public enum CurtainDeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `roombridge` controller sent an ERROR frame for a command.
    case roomBridge(opcode: UInt8, code: CurtainErrorCode)
    /// The SwitchBot does not know its end positions.
    case switchBotNeedsCalibration
    /// A SwitchBot reply status other than OK (byte 0 of the reply).
    case switchBot(SwitchBotReplyStatus)
    /// The AM43 answered a command with NACK (`A5`): usually the PIN was not accepted.
    case am43Refused(command: UInt8)
    /// The AM43 refused the PIN.
    case am43WrongPin

    /// This refusal read with what the device said about its calibration: a SwitchBot "error" from a curtain that
    /// advertises itself uncalibrated means it needs calibrating.
    public func given(calibrated: Bool?) -> CurtainDeviceError {
        if self == .switchBot(.error), calibrated == false { return .switchBotNeedsCalibration }
        return self
    }

    public var description: String {
        switch self {
        case .roomBridge(let op, let code):
            "the curtain controller refused command \(hex(op)): \(code)"
        case .switchBotNeedsCalibration:
            "SwitchBot says 'needs calibration': calibrate it in the SwitchBot app once"
        case .switchBot(let status):
            "SwitchBot says '\(status.text)': \(status.advice)"
        case .am43Refused(let command):
            "the AM43 refused command \(hex(command)) (NACK): check the PIN in the configuration (default 8888) "
                + "and that the end positions are set in the Blind Engine app"
        case .am43WrongPin:
            "the AM43 refused the PIN: set `pin` to the one chosen in the Blind Engine app (default 8888)"
        }
    }
}

/// Byte 0 of a SwitchBot reply (OpenWonderLabs SwitchBotAPI-BLE `devicetypes/curtain.md`, "RSP Packet";
/// pySwitchbot `devices/device.py` `_execute_command_locked` for `07` and `09`).
public enum SwitchBotReplyStatus: Sendable, Hashable, CustomStringConvertible {
    case ok
    case error
    case busy
    case protocolIncompatible
    case notSupported
    case lowBattery
    case passwordRequired
    case wrongPassword
    case notSupportedInMode
    case chainDisconnected
    case other(UInt8)

    public init(byte: UInt8) {
        switch byte {
        case 0x01: self = .ok
        case 0x02: self = .error
        case 0x03: self = .busy
        case 0x04: self = .protocolIncompatible
        case 0x05: self = .notSupported
        case 0x06: self = .lowBattery
        case 0x07: self = .passwordRequired
        case 0x09: self = .wrongPassword
        case 0x0D: self = .notSupportedInMode
        case 0x0E: self = .chainDisconnected
        default: self = .other(byte)
        }
    }

    /// The status byte.
    public var byte: UInt8 {
        switch self {
        case .ok: 0x01
        case .error: 0x02
        case .busy: 0x03
        case .protocolIncompatible: 0x04
        case .notSupported: 0x05
        case .lowBattery: 0x06
        case .passwordRequired: 0x07
        case .wrongPassword: 0x09
        case .notSupportedInMode: 0x0D
        case .chainDisconnected: 0x0E
        case .other(let b): b
        }
    }

    /// What the device says, in its documentation's words.
    public var text: String {
        switch self {
        case .ok: "OK"
        case .error: "error while executing the action"
        case .busy: "busy"
        case .protocolIncompatible: "protocol version incompatible"
        case .notSupported: "command not supported"
        case .lowBattery: "low battery"
        case .passwordRequired: "password required"
        case .wrongPassword: "password incorrect"
        case .notSupportedInMode: "not supported in the current mode"
        case .chainDisconnected: "disconnected from the paired curtain"
        case .other(let b): "status \(hex(b))"
        }
    }

    /// What to do about it.
    public var advice: String {
        switch self {
        case .ok: "nothing to do"
        case .error: "check that the curtain is calibrated and free to move (SwitchBot app), then try again"
        case .busy: "try again in a moment"
        case .protocolIncompatible, .notSupported, .notSupportedInMode:
            "update the curtain's firmware in the SwitchBot app, or check that the profile is `switchbot`"
        case .lowBattery: "charge the curtain (USB-C or solar panel)"
        case .passwordRequired: "set `password` for this curtain to the one set in the SwitchBot app"
        case .wrongPassword: "correct `password` for this curtain (the one set in the SwitchBot app)"
        case .chainDisconnected: "bring the paired curtain back in range or re-pair the two in the SwitchBot app"
        case .other: "try again; if it persists, check the curtain in the SwitchBot app"
        }
    }

    public var description: String { text }
}
