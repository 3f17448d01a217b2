import CurtainProtocol
import DBus

extension BlueZSimulator {
    /// Static description of the simulated hardware.
    public struct Configuration: Sendable {
        public var adapterName = "hci0"
        public var adapterAddress = "00:1A:7D:DA:71:13"
        public var adapterAlias = "roombridge-sim"
        public var deviceAddress = "C4:7C:8D:6A:3E:21"
        public var deviceName = "Curtain-Living"
        public var rssi: Int16 = -58
        /// BlueZ `[GATT] Cache` (main.conf): `always` keeps GATT objects after a disconnect.
        public var gattCacheAlways = true
        /// Motor speed, percent per second (simulated time).
        public var speed: Double = 10
        /// STATUS interval while moving, simulated seconds.
        public var statusInterval: Double = 0.5
        public var initialPosition = 0
        public var initialSchedule: CurtainSchedule = .disabled
        /// Simulated time of day at start, seconds since midnight.
        public var startTimeOfDay: Double = 8 * 3600
        /// Real time between Connect and Connected=true / the reply.
        public var connectDelay: Duration = .milliseconds(30)
        /// Real time between the Connect reply and the GATT objects + ServicesResolved.
        public var resolveDelay: Duration = .milliseconds(30)
        /// Real time after StartDiscovery before the device is reported.
        public var discoveryDelay: Duration = .milliseconds(30)
        /// Real time a Connect to an unreachable device takes before failing.
        public var unreachableConnectFailure: Duration = .milliseconds(500)
        /// Real time between Device1.Disconnect and the link going down: bluetoothd's `DISCONNECT_TIMER` (device.c,
        /// 2 s). Meanwhile the device is "disconnecting" and StartNotify answers NotConnected.
        public var disconnectDelay: Duration = .seconds(2)
        /// Whether bluetoothd already knows the device at start (a remembered device).
        public var deviceKnownAtStart = false
        /// Which curtain firmware runs behind the GATT objects (SimulatedCurtain.swift).
        public var device: SimulatedCurtainKind = .roombridge
        /// Simulated seconds per real second for the built-in ticker; 0 = no ticker (tests drive the clock).
        public var timeScale: Double = 1
        /// Whether the curtain keeps advertising its state while a central is connected. A SwitchBot Curtain is
        /// taken to keep advertising: pySwitchbot's `SwitchbotCurtain` (`devices/curtain.py` → `base_cover.py`
        /// `SwitchbotBaseCover` → `devices/device.py` `SwitchbotDevice`) consumes advertisements during a connection,
        /// while `device.py` gives devices whose advertisements stop updating while connected a class of their own
        /// (`SwitchbotDeviceOverrideStateDuringConnection`). Many single-connection peripherals stop advertising once
        /// connected; `false` plays such a device (``Control/advertiseWhileConnected(_:)`` switches at run time).
        public var advertisesWhileConnected = true

        public init() {}
    }

    /// What the control interface can ask for; see ``handle(_:)``.
    public enum Control: Sendable, Hashable {
        case press(CurtainMotorModel.SwitchPress)
        case dropLink
        /// bluetoothd ends the notify session while the link stays up (an AcquireNotify socket is closed).
        case endNotify
        case vanish
        case reappear
        case restartBluetoothd(downtime: Duration)
        case power(Bool)
        case failWrites(count: Int, name: String, message: String)
        case failConnects(count: Int, name: String, message: String)
        case setSchedule(CurtainSchedule)
        case advance(seconds: Double)
        /// Whether the curtain keeps advertising while connected (``Configuration/advertisesWhileConnected``).
        case advertiseWhileConnected(Bool)
        /// The curtain's battery, percent (SwitchBot, AM43).
        case battery(Int)
        case status
        /// Reports (and clears) when command writes arrived and notifications left, on
        /// CLOCK_MONOTONIC, for the benchmark: `ok writes=T:HEX,… notifications=T:HEX,…`.
        case timing
        /// The simulated iBeacons (BeaconField.swift).
        case beacon(BeaconControl)
    }
}
