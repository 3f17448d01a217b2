import CurtainProtocol
import Retry

/// How the client subscribes to the curtain's status characteristic.
public enum CurtainNotifyMethod: String, Sendable, Hashable, CaseIterable {
    /// `StartNotify`: every notification is a PropertiesChanged on `Value`. bluetoothd delivers
    /// notifications that arrive while the CCCD write is pending (shared/gatt-client.c `notify_handler`).
    case startNotify = "start-notify"
    /// `AcquireNotify` (when the characteristic has `NotifyAcquired`): a SOCK_SEQPACKET socket, one packet per
    /// notification. bluetoothd drops notifications that arrive before the socket exists (gatt-client.c
    /// `notify_io_cb`); refused calls fall back to StartNotify.
    case acquireNotify = "acquire-notify"
}

/// Settings of the BlueZ curtain client.
public struct CurtainClientConfiguration: Sendable {
    /// Adapter name (`hci0`); nil: the first adapter BlueZ exports.
    public var adapterName: String?
    /// The curtain's address (`AA:BB:CC:DD:EE:FF`); nil: the first device advertising the curtain service.
    public var deviceAddress: String?
    /// Limit for one Device1.Connect call (BlueZ itself may take ~25 s to give up).
    public var connectTimeout: Duration = .seconds(20)
    /// Limit for ServicesResolved after the Connect reply.
    public var resolveTimeout: Duration = .seconds(30)
    /// Limit for StartNotify / WriteValue / ReadValue calls.
    public var callTimeout: Duration = .seconds(10)
    /// How to subscribe to the status characteristic. StartNotify (the default, as in bleak ≥ 3.0.2) or
    /// AcquireNotify where BlueZ offers it; see ``CurtainNotifyMethod``.
    public var notifyMethod: CurtainNotifyMethod = .startNotify
    /// How long after subscribing (and SYNC) the first notification may take before the subscription counts as
    /// deaf and is made again.
    public var firstNotificationTimeout: Duration = .seconds(5)
    /// Backoff between connection attempts and after a link loss.
    public var backoff = Backoff(initial: .milliseconds(250), multiplier: 2, maximum: .seconds(30))
    /// What kind of curtain it is (CurtainProfile.all): UUIDs, write type, wire format.
    public var profile: CurtainProfile = .roombridge
    /// The PIN for profiles that log in (AM43); nil: the profile's default.
    public var pin: UInt16?
    /// For profiles that keep no schedule: the schedule the daemon kept before it (re)started, adopted at once.
    public var keptSchedule: CurtainSchedule?
    /// On-demand profiles: how often the device's own status request (SwitchBot `57 02` basic info) is sent while
    /// the link is held, so that motion is heard even from a device that does not advertise while connected.
    public var pollInterval: Duration = .milliseconds(500)
    /// Profiles without a MANUAL flag: how soon after a command its motion must be heard to count as the daemon's own;
    /// a command whose motion has not shown by then is forgotten, so that a later pull counts as manual.
    public var motionStartWindow: Duration = .seconds(5)
    /// The clocks for timeouts, backoff and a daemon-kept schedule.
    public var clock: any CurtainClock = SystemCurtainClock()
    /// The connection budget this curtain shares with the other curtains of its adapter (``ConnectionBudget``); nil:
    /// no limit.
    public var budget: ConnectionBudget?

    public init(adapterName: String? = nil, deviceAddress: String? = nil) {
        self.adapterName = adapterName
        self.deviceAddress = deviceAddress
    }
}
