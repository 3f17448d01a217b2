import CurtainProtocol

/// The link to the curtain as the daemon shows it (searching / connecting / connected / disconnected).
public enum CurtainConnectionState: String, Sendable, Hashable, CustomStringConvertible {
    /// Looking for the curtain (discovery running or waiting for it to appear).
    case searching
    /// Connecting / resolving services / subscribing.
    case connecting
    /// Subscribed; commands are accepted.
    case connected
    /// Not connected (Bluetooth unavailable, adapter off, or waiting before a retry).
    case disconnected
    /// An on-demand curtain between commands (``CurtainProfile/ConnectionPolicy/onDemand(hold:)``): the link is
    /// released, advertisements are heard, and the next command connects.
    case standby

    public var description: String { rawValue }
}

/// The local Bluetooth side (BlueZ and its adapter).
public enum BluetoothAdapterState: Sendable, Hashable, CustomStringConvertible {
    /// Not known yet.
    case unknown
    /// `org.bluez` has no owner on the bus: bluetoothd is not running.
    case serviceUnavailable
    /// BlueZ runs but exports no (matching) adapter.
    case noAdapter
    /// The adapter exists but is powered off.
    case poweredOff(path: String)
    /// The adapter is on.
    case poweredOn(path: String)

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .serviceUnavailable: "bluetoothd (org.bluez) is not running: start the bluetooth service"
        case .noAdapter: "no Bluetooth adapter: plug one in or check the configured adapter name"
        case .poweredOff(let p): "Bluetooth adapter \(p) is powered off: power it on (bluetoothctl power on)"
        case .poweredOn(let p): "Bluetooth adapter \(p) is on"
        }
    }
}

/// Something that changed about the curtain, for the daemon's `SystemState`.
public enum CurtainEvent: Sendable, Hashable {
    /// The link state changed; `detail` says why (user readable), e.g. "adapter powered off".
    case connection(CurtainConnectionState, detail: String?)
    /// The adapter / BlueZ availability changed.
    case adapter(BluetoothAdapterState)
    /// A curtain was chosen (address and advertised name).
    case device(address: String, name: String?)
    /// A STATUS frame: motion, position, target, manual and schedule flags (the device is the source of truth).
    case status(CurtainStatus)
    /// A SCHEDULE frame: the device's schedule, to be adopted.
    case schedule(CurtainSchedule)
    /// An ERROR frame from the controller (a bad write-without-response).
    case deviceError(opcode: UInt8, code: CurtainErrorCode)
    /// An error the user should see (last error).
    case error(CurtainError)
    /// The profile the client drives, and whether the device keeps the schedule itself.
    case profile(CurtainProfile.ID, keepsSchedule: Bool)
    /// Battery and light levels, percent, where the device reports them.
    case levels(battery: Int?, light: Int?)
    /// A command is done: the curtain answered its write, or it failed; the daemon announces the command's
    /// request here if nothing since showed it (``SystemState/announceCurtainRequests()``). Whether the frame a
    /// curtain sends in answer comes before the write's reply or after it is the device's affair (BlueZ replies
    /// to WriteValue when the ATT Write Response arrives; a notification may precede or follow it): before, its
    /// event carries the request and nothing more is sent; after, the request's own event comes first. bluez-sim
    /// delivers it before (`SimulatedCharacteristic.writeValue`); `SystemStateTests` covers both orders.
    case commandAnswered
}

/// The client's view of the curtain; updated only from frames the device sends and link events.
public struct CurtainSnapshot: Sendable, Hashable {
    public var connection: CurtainConnectionState = .disconnected
    public var adapter: BluetoothAdapterState = .unknown
    public var deviceAddress: String?
    public var deviceName: String?
    /// Latest STATUS adopted from the device (nil until the first one after a connect).
    public var status: CurtainStatus?
    /// Latest SCHEDULE adopted from the device.
    public var schedule: CurtainSchedule?
    public var lastError: CurtainError?
    public var profile: CurtainProfile.ID?
    public var battery: Int?
    public var light: Int?

    public init() {}

    /// Applies an event (the same one the stream delivers); returns false when nothing changed.
    @discardableResult
    public mutating func apply(_ event: CurtainEvent) -> Bool {
        let before = self
        switch event {
        case .connection(let c, _):
            connection = c
        case .adapter(let a): adapter = a
        case .device(let address, let name):
            deviceAddress = address
            deviceName = name
        case .status(let s): status = s
        case .schedule(let s): schedule = s
        case .deviceError(let op, let code):
            lastError = .bluetooth(name: "curtain.ERROR", message: "the controller refused opcode \(op): \(code)")
        case .error(let e): lastError = e
        case .profile(let id, _): profile = id
        case .levels(let b, let l):
            battery = b
            light = l
        case .commandAnswered: break
        }
        return before != self
    }

    /// Decodes a value notified (or read) on the status characteristic into events.
    /// Malformed frames become an `.error` event (they are not adopted).
    public static func events(fromStatusValue bytes: [UInt8]) -> [CurtainEvent] {
        do throws(CurtainDecodeError) {
            switch try CurtainFrame.decode(bytes) {
            case .status(let s): return [.status(s)]
            case .schedule(let s): return [.schedule(s)]
            case .error(let op, let code): return [.deviceError(opcode: op, code: code)]
            }
        } catch {
            return [.error(.bluetooth(name: "curtain.BadFrame", message: "ignored a malformed frame: \(error)"))]
        }
    }
}
