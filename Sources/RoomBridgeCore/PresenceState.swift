#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Presence

/// A beacon present in a region: who or what it stands for, how close it is, when it was last heard.
public struct PresentBeacon: Sendable, Codable, Equatable {
    public var uuid: String
    public var major: Int
    public var minor: Int
    /// `immediate`, `near`, `far` or `unknown`.
    public var proximity: String
    /// Estimated metres (nil: unknown).
    public var distance: Double?
    /// Smoothed RSSI, dBm.
    public var rssi: Double?
    public var lastSeen: Date

    public init(uuid: String, major: Int, minor: Int, proximity: String, distance: Double?, rssi: Double?, lastSeen: Date) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.proximity = proximity
        self.distance = distance
        self.rssi = rssi
        self.lastSeen = lastSeen
    }
}

/// A configured region (``Presence/Region``: its beacons' identity and whom it stands for) and the beacons in it
/// now, with the names the inventory has for whom it stands for. On the wire (`PresenceRegion`) the region's
/// fields are flat: `name`, `uuid`, `major`, `minor`, `userId`, `deviceId`.
public struct PresenceRegionState: Sendable, Codable, Equatable {
    public var region: Region
    /// The name of the person `region.userId` stands for, as the inventory has it (nil: unknown user or none).
    public var userName: String?
    /// The model of the device `region.deviceId` stands for, as the inventory has it (nil: unknown device or none).
    public var deviceModel: String?
    public var beacons: [PresentBeacon]

    public init(region: Region, userName: String? = nil, deviceModel: String? = nil, beacons: [PresentBeacon] = []) {
        self.region = region
        self.userName = userName
        self.deviceModel = deviceModel
        self.beacons = beacons
    }

    public var name: String { region.name }
    public var userId: String? { region.userId }
    public var deviceId: String? { region.deviceId }

    /// Who or what the region stands for, as a person reads it: the user's name, the device's model, else (the
    /// inventory does not know them) the region's name, the label the admin gave it.
    public var label: String {
        userName ?? deviceModel ?? name
    }

    enum CodingKeys: String, CodingKey {
        case name, uuid, major, minor, userId, deviceId, userName, deviceModel, beacons
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        region = Region(name: try c.decode(String.self, forKey: .name), uuid: try c.decode(UUID.self, forKey: .uuid),
                        major: try c.decodeIfPresent(UInt16.self, forKey: .major),
                        minor: try c.decodeIfPresent(UInt16.self, forKey: .minor),
                        userId: try c.decodeIfPresent(String.self, forKey: .userId),
                        deviceId: try c.decodeIfPresent(String.self, forKey: .deviceId))
        userName = try c.decodeIfPresent(String.self, forKey: .userName)
        deviceModel = try c.decodeIfPresent(String.self, forKey: .deviceModel)
        beacons = try c.decode([PresentBeacon].self, forKey: .beacons)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(region.name, forKey: .name)
        try c.encode(region.uuid.uuidString, forKey: .uuid)
        try c.encodeIfPresent(region.major, forKey: .major)
        try c.encodeIfPresent(region.minor, forKey: .minor)
        try c.encodeIfPresent(region.userId, forKey: .userId)
        try c.encodeIfPresent(region.deviceId, forKey: .deviceId)
        try c.encodeIfPresent(userName, forKey: .userName)
        try c.encodeIfPresent(deviceModel, forKey: .deviceModel)
        try c.encode(beacons, forKey: .beacons)
    }
}

/// Presence in the room: off (no regions configured), scanning, or not scanning and why — then the configured
/// default place stands in for "nobody here".
public struct PresenceState: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable {
        /// No regions are configured: presence is off.
        case disabled
        case starting
        case scanning
        /// Scanning is impossible now (Bluetooth off, bluetoothd not running, …): see `reason`.
        case unavailable
    }

    public var status: Status
    /// Why not scanning, and what to do.
    public var reason: String?
    /// `presence.default_place`, reported while not scanning (nil when none is configured or while scanning).
    public var defaultPlace: String?
    public var regions: [PresenceRegionState]

    public init(status: Status = .disabled, reason: String? = nil, defaultPlace: String? = nil,
                regions: [PresenceRegionState] = []) {
        self.status = status
        self.reason = reason
        self.defaultPlace = defaultPlace
        self.regions = regions
    }
}

/// A `presence` event: a beacon entered or exited a region, its proximity changed, or scanning started or stopped.
public struct PresenceChangeEvent: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case entered, exited, proximityChanged, status
    }

    public var kind: Kind
    /// The region (nil for `status`).
    public var region: String?
    public var userId: String?
    public var deviceId: String?
    /// The person's name and the device's model, as in `PresenceRegionState`.
    public var userName: String?
    public var deviceModel: String?
    public var beacon: PresentBeacon?
    /// The proximity before (`proximityChanged`).
    public var from: String?
    /// The scanning status after the change (`status`), with its reason.
    public var status: PresenceState.Status?
    public var reason: String?

    public init(kind: Kind, region: String? = nil, userId: String? = nil, deviceId: String? = nil,
                userName: String? = nil, deviceModel: String? = nil,
                beacon: PresentBeacon? = nil, from: String? = nil, status: PresenceState.Status? = nil,
                reason: String? = nil) {
        self.kind = kind
        self.region = region
        self.userId = userId
        self.deviceId = deviceId
        self.userName = userName
        self.deviceModel = deviceModel
        self.beacon = beacon
        self.from = from
        self.status = status
        self.reason = reason
    }
}
