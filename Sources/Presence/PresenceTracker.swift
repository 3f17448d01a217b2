/// A beacon seen in a region: ranging's answer for that beacon.
public struct Sighting: Sendable, Equatable {
    public var region: String
    public var beacon: BeaconID
    public var proximity: Proximity
    /// Estimated metres; nil when unknown.
    public var distance: Double?
    /// The smoothed RSSI, dBm.
    public var rssi: Double?
    public var txPower: Int8
    /// Monotonic time of the last advertisement.
    public var lastSeen: Duration
}

/// What changed, in the order it happened.
public enum PresenceChange: Sendable, Equatable {
    /// A beacon of the region was seen for the first time (or again after it had exited).
    case entered(Sighting)
    /// The beacon has not been seen for `exitAfter`.
    case exited(Sighting)
    /// The beacon's proximity class changed (after hysteresis).
    case proximityChanged(Sighting, from: Proximity)
}

/// Region monitoring and ranging from advertisements, as a pure state machine: feed it what the
/// scanner sees (`observe`) and the passing of time (`tick`); it answers with the changes. Beacons
/// that match no configured region are ignored and never kept.
public struct PresenceTracker: Sendable {
    public let regions: [Region]
    public var settings: PresenceSettings
    private struct Key: Hashable { var region: String; var beacon: BeaconID }
    private var filters: [BeaconID: RSSIFilter] = [:]
    private var sightings: [Key: Sighting] = [:]

    public init(regions: [Region], settings: PresenceSettings = PresenceSettings()) {
        self.regions = regions
        self.settings = settings
    }

    /// Who or what is in each region now, by region name (every configured region is listed).
    public var current: [(region: Region, sightings: [Sighting])] {
        regions.map { r in
            (r, sightings.values.filter { $0.region == r.name }
                .sorted { ($0.beacon.major, $0.beacon.minor) < ($1.beacon.major, $1.beacon.minor) })
        }
    }

    /// An advertisement of `frame` heard at `rssi` dBm at monotonic time `at`.
    public mutating func observe(_ frame: IBeaconFrame, rssi: Int, at: Duration) -> [PresenceChange] {
        let matching = regions.filter { $0.contains(frame.beacon) }
        guard !matching.isEmpty else { return [] }
        var filter = filters[frame.beacon] ?? RSSIFilter(window: settings.rssiWindow)
        if rssi != 0 { filter.add(rssi, at: at) } else { filter.expire(now: at) }
        filters[frame.beacon] = filter
        let smoothed = filter.smoothed
        let distance = smoothed.flatMap { settings.distance.distance(rssi: $0, txPower: Int(frame.txPower)) }

        var changes: [PresenceChange] = []
        for region in matching {
            let key = Key(region: region.name, beacon: frame.beacon)
            if var s = sightings[key] {
                let before = s.proximity
                s.proximity = settings.proximity.classify(distance, current: before)
                s.distance = distance
                s.rssi = smoothed
                s.txPower = frame.txPower
                s.lastSeen = at
                sightings[key] = s
                if s.proximity != before { changes.append(.proximityChanged(s, from: before)) }
            } else {
                let s = Sighting(region: region.name, beacon: frame.beacon,
                                 proximity: settings.proximity.plain(distance), distance: distance,
                                 rssi: smoothed, txPower: frame.txPower, lastSeen: at)
                sightings[key] = s
                changes.append(.entered(s))
            }
        }
        return changes
    }

    /// The passing of time: beacons unseen for `exitAfter` exit their regions.
    public mutating func tick(now: Duration) -> [PresenceChange] {
        let gone = sightings.filter { now - $0.value.lastSeen >= settings.exitAfter }
            .sorted { ($0.key.region, $0.key.beacon.major, $0.key.beacon.minor)
                < ($1.key.region, $1.key.beacon.major, $1.key.beacon.minor) }
        for (key, _) in gone { sightings[key] = nil }
        let still = Set(sightings.keys.map(\.beacon))
        filters = filters.filter { still.contains($0.key) }
        return gone.map { .exited($0.value) }
    }

    /// When the next exit could happen, for a timer; nil when nobody is present.
    public var nextDeadline: Duration? {
        sightings.values.map { $0.lastSeen + settings.exitAfter }.min()
    }
}
