import Presence
import SeededRandom

/// One simulated iBeacon: a non-connectable LE advertiser sending `02 15 UUID major minor txPower` as Apple
/// manufacturer data (company 0x004C) every `interval`, heard by the adapter at `rssi` dBm give or take `noise`.
/// It can be moved (a new mean RSSI), vanish and appear again. With `otherAppleFrame` set it is a phone that also
/// sends another Apple frame from the same address: the adverts alternate, so bluetoothd's single value for
/// company 0x004C alternates too.
public struct SimulatedBeacon: Sendable, Equatable {
    public var address: String
    public var frame: IBeaconFrame
    /// Mean RSSI at the adapter, dBm.
    public var rssi: Int
    /// Each reading is `rssi` plus a uniform integer in `-noise...noise`.
    public var noise: Int
    public var interval: Duration
    public var visible: Bool
    public var otherAppleFrame: [UInt8]?
    private var random: SplitMix64
    private var sentIBeacon = false

    public init(address: String, frame: IBeaconFrame, rssi: Int = -65, noise: Int = 0,
                interval: Duration = .milliseconds(500), visible: Bool = true, otherAppleFrame: [UInt8]? = nil) {
        self.address = address
        self.frame = frame
        self.rssi = rssi
        self.noise = noise
        self.interval = interval
        self.visible = visible
        self.otherAppleFrame = otherAppleFrame
        // Reproducible noise: the same beacon gives the same readings in every run.
        random = SplitMix64(seed: address.utf8.reduce(0x9E37_79B9) { $0 &* 31 &+ UInt64($1) })
    }

    /// The next advertisement: the RSSI it is heard at and the Apple manufacturer data it carries.
    public mutating func nextAdvertisement() -> (rssi: Int16, appleData: [UInt8]) {
        var reading = rssi
        if noise > 0 { reading += Int(random.next() % UInt64(2 * noise + 1)) - noise }
        reading = min(20, max(-127, reading))
        if let other = otherAppleFrame, sentIBeacon {
            sentIBeacon = false
            return (Int16(reading), other)
        }
        sentIBeacon = true
        return (Int16(reading), frame.manufacturerData)
    }

    public var summary: String {
        "\(address) \(frame.beacon.uuid.uuidString) \(frame.beacon.major)/\(frame.beacon.minor) tx=\(frame.txPower) "
            + "rssi=\(rssi)±\(noise) interval=\(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)ms "
            + "visible=\(visible)" + (otherAppleFrame == nil ? "" : " other-apple-frame")
    }
}
