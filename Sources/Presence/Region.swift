#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A configured region: the beacons with a proximity UUID and, optionally, a major and a minor.
/// A region may stand for a person (`userId`) or a lendable device (`deviceId`).
public struct Region: Sendable, Hashable, Codable {
    public var name: String
    public var uuid: UUID
    public var major: UInt16?
    public var minor: UInt16?
    public var userId: String?
    public var deviceId: String?

    public init(name: String, uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil,
                userId: String? = nil, deviceId: String? = nil) {
        self.name = name
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.userId = userId
        self.deviceId = deviceId
    }

    /// Whether `beacon` belongs to this region.
    public func contains(_ beacon: BeaconID) -> Bool {
        beacon.uuid == uuid
            && (major.map { $0 == beacon.major } ?? true)
            && (minor.map { $0 == beacon.minor } ?? true)
    }
}

/// Settings for presence, with the defaults the documentation gives.
public struct PresenceSettings: Sendable, Equatable {
    /// A beacon unseen for this long has left its region (CoreLocation reports up to 30 s).
    public var exitAfter: Duration
    /// How long an RSSI sample counts toward the smoothed value.
    public var rssiWindow: Duration
    public var distance: DistanceModel
    public var proximity: ProximityClassifier

    public init(exitAfter: Duration = .seconds(30), rssiWindow: Duration = .seconds(20),
                distance: DistanceModel = DistanceModel(), proximity: ProximityClassifier = ProximityClassifier()) {
        self.exitAfter = exitAfter
        self.rssiWindow = rssiWindow
        self.distance = distance
        self.proximity = proximity
    }
}
