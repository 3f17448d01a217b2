#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import struct RoomBridgeCore.TagUID

// Glossary (docs/glossary.md): a *device* is a lendable phone/tablet; a *user* borrows
// devices; a *badge* is a user's card; a *tag* is the NFC sticker on a device; a *rental* is
// one lend..return period (active while `returnedAt` is nil); the *device log* is the
// per-field change history of a device.

/// Identifier of a device, e.g. `D-0001`.
public typealias DeviceID = String
/// Identifier of a user, e.g. `U-0017`.
public typealias UserID = String
/// Stable identifier of a device group, e.g. `iphone`.
public typealias GroupID = String

/// A kind of device (Android phone, iPhone, tablet, …), kept as data with a stable ID so
/// that adding a kind needs no code change.
public struct DeviceGroup: Sendable, Hashable, Codable {
    /// Stable identifier used by devices (`android-phone`, `iphone`, …).
    public var id: GroupID
    /// Display name.
    public var name: String
    /// Position in lists (ascending).
    public var sortOrder: Int

    public init(id: GroupID, name: String, sortOrder: Int = 0) {
        self.id = id
        self.name = name
        self.sortOrder = sortOrder
    }

    /// The groups a new database starts with.
    public static let defaults: [DeviceGroup] = [
        DeviceGroup(id: "android-phone", name: "Android phone", sortOrder: 10),
        DeviceGroup(id: "iphone", name: "iPhone", sortOrder: 20),
        DeviceGroup(id: "android-tablet", name: "Android tablet", sortOrder: 30),
        DeviceGroup(id: "ipad", name: "iPad", sortOrder: 40),
        DeviceGroup(id: "other", name: "Other", sortOrder: 90),
    ]
}

/// Condition of a device. Only `normal` devices can be lent.
public enum DeviceStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case normal
    case broken
    case disposed
}

/// A lendable device. Whether it is lent is *not* stored here:
/// it is derived from the active rental (see ``DeviceRecord``).
public struct Device: Sendable, Hashable, Codable {
    public var id: DeviceID
    public var groupId: GroupID
    public var model: String
    public var serialNumber: String
    public var osVersion: String
    public var status: DeviceStatus
    public var connectorType: String
    public var registeredAt: Date
    public var note: String?
    /// True once a tag has been written, verified and bound to this device.
    public var isNFCRegistered: Bool

    public init(
        id: DeviceID, groupId: GroupID, model: String, serialNumber: String = "",
        osVersion: String = "", status: DeviceStatus = .normal, connectorType: String = "",
        registeredAt: Date, note: String? = nil, isNFCRegistered: Bool = false
    ) {
        self.id = id
        self.groupId = groupId
        self.model = model
        self.serialNumber = serialNumber
        self.osVersion = osVersion
        self.status = status
        self.connectorType = connectorType
        self.registeredAt = registeredAt
        self.note = note
        self.isNFCRegistered = isNFCRegistered
    }

    /// Wire names (`io.roombridge.Inventory` type `Device`): `isNfcRegistered` is camel case there.
    enum CodingKeys: String, CodingKey {
        case id, groupId, model, serialNumber, osVersion, status, connectorType, registeredAt, note
        case isNFCRegistered = "isNfcRegistered"
    }

    /// The device's fields as (name, text) pairs, in a fixed order; used for the change log.
    public var loggedFields: [(field: String, value: String?)] {
        [
            ("group", groupId),
            ("model", model),
            ("serialNumber", serialNumber),
            ("osVersion", osVersion),
            ("status", status.rawValue),
            ("connectorType", connectorType),
            ("registeredAt", LendingFormat.iso8601(registeredAt)),
            ("note", note),
            ("isNFCRegistered", isNFCRegistered ? "true" : "false"),
        ]
    }
}

/// A device record with the tags bound to it: what `Inventory.GetDevice` answers.
public struct DeviceDetail: Sendable, Hashable {
    public var record: DeviceRecord
    /// Its tag bindings, ordered by UID.
    public var tags: [TagBinding]

    public init(record: DeviceRecord, tags: [TagBinding]) {
        self.record = record
        self.tags = tags
    }
}

/// A device together with its active rental, if any: the only source of "is it lent".
public struct DeviceRecord: Sendable, Hashable, Codable {
    public var device: Device
    /// The open rental of this device, nil when it is available.
    public var activeRental: Rental?

    public init(device: Device, activeRental: Rental? = nil) {
        self.device = device
        self.activeRental = activeRental
    }

    /// Whether the device is currently lent (derived from ``activeRental``).
    public var isLent: Bool { activeRental != nil }

    /// On the wire a device record is the device's fields plus `rental`, its active rental.
    enum CodingKeys: String, CodingKey {
        case rental
    }

    public init(from decoder: any Decoder) throws {
        device = try Device(from: decoder)
        activeRental = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Rental.self, forKey: .rental)
    }

    public func encode(to encoder: any Encoder) throws {
        try device.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(activeRental, forKey: .rental)
    }
}

/// What happened to a device in a log entry.
public enum DeviceLogOperation: String, Sendable, Hashable, Codable, CaseIterable {
    case add
    case update
    case delete
}

/// One row of a device's change history: one row per changed field.
public struct DeviceLogEntry: Sendable, Hashable, Codable {
    /// Store-assigned, increasing.
    public var id: Int64
    public var deviceId: DeviceID
    public var operation: DeviceLogOperation
    public var field: String
    public var oldValue: String?
    public var newValue: String?
    public var at: Date
    /// Who made the change (``ChangeActor/text``); nil when unknown (changes made before
    /// actors were recorded).
    public var actor: String?

    public init(
        id: Int64, deviceId: DeviceID, operation: DeviceLogOperation, field: String,
        oldValue: String?, newValue: String?, at: Date, actor: String? = nil
    ) {
        self.id = id
        self.deviceId = deviceId
        self.operation = operation
        self.field = field
        self.oldValue = oldValue
        self.newValue = newValue
        self.at = at
        self.actor = actor
    }
}

/// A person who borrows devices.
public struct User: Sendable, Hashable, Codable {
    public var id: UserID
    public var name: String
    public var registeredAt: Date

    public init(id: UserID, name: String, registeredAt: Date) {
        self.id = id
        self.name = name
        self.registeredAt = registeredAt
    }
}

/// The kind of card a badge is.
public enum BadgeKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// ISO/IEC 14443-A card: 4-, 7- or 10-byte UID.
    case iso14443a
    /// FeliCa card: 8-byte IDm.
    case felica
}

/// A user's card; only its identifier is used (device-tag.md).
public struct Badge: Sendable, Hashable, Codable {
    /// Upper-case hex without separators (see ``CardIdentifier/normalize(_:kind:)``).
    public var identifier: String
    public var kind: BadgeKind
    public var userId: UserID
    public var registeredAt: Date
    /// Optional free text ("staff card", "spare").
    public var label: String?

    public init(identifier: String, kind: BadgeKind, userId: UserID, registeredAt: Date, label: String? = nil) {
        self.identifier = identifier
        self.kind = kind
        self.userId = userId
        self.registeredAt = registeredAt
        self.label = label
    }
}

/// A tag UID bound to a device (device-tag.md, identification step 2).
public struct TagBinding: Sendable, Hashable, Codable {
    public var uid: TagUID
    public var deviceId: DeviceID
    public var boundAt: Date

    public init(uid: TagUID, deviceId: DeviceID, boundAt: Date) {
        self.uid = uid
        self.deviceId = deviceId
        self.boundAt = boundAt
    }
}

/// What a UID is bound to, as the store reports it.
public enum UIDBinding: Sendable, Hashable {
    /// A device tag binding, with the device.
    case device(DeviceRecord)
    /// A user's badge, with the user.
    case badge(Badge, User)
}

/// One lend..return period. Device and user facts are copied so
/// that history survives deleting the device or the user.
public struct Rental: Sendable, Hashable, Codable {
    /// Store-assigned, increasing.
    public var id: Int64
    public var deviceId: DeviceID
    public var model: String
    public var osVersion: String
    public var serialNumber: String
    public var userId: UserID
    public var userName: String
    public var rentedAt: Date
    /// When the device should be back; nil for open-ended loans.
    public var dueAt: Date?
    /// Nil while the rental is active.
    public var returnedAt: Date?
    /// Who returned it (``ChangeActor/text``), when known: the user armed at the reader, the
    /// user a client named, or the client's Unix user.
    public var returnedBy: String?
    /// Reader/kiosk name where the device was lent.
    public var location: String?
    /// Reader/kiosk name where the device was returned.
    public var returnLocation: String?
    /// Who lent it (``ChangeActor/text``): the armed user whose badge was tapped, or the client's
    /// Unix user (or the person signed in to the web front end). Nil for rentals recorded before
    /// actors were.
    public var lentBy: String?
    /// The device's condition noted at the return ("cracked screen"), if any.
    public var returnNote: String?

    public init(
        id: Int64, deviceId: DeviceID, model: String, osVersion: String, serialNumber: String,
        userId: UserID, userName: String, rentedAt: Date, dueAt: Date? = nil, returnedAt: Date? = nil,
        returnedBy: String? = nil, location: String? = nil, returnLocation: String? = nil, lentBy: String? = nil,
        returnNote: String? = nil
    ) {
        self.lentBy = lentBy
        self.returnNote = returnNote
        self.id = id
        self.deviceId = deviceId
        self.model = model
        self.osVersion = osVersion
        self.serialNumber = serialNumber
        self.userId = userId
        self.userName = userName
        self.rentedAt = rentedAt
        self.dueAt = dueAt
        self.returnedAt = returnedAt
        self.returnedBy = returnedBy
        self.location = location
        self.returnLocation = returnLocation
    }

    /// True while the device has not been returned.
    public var isActive: Bool { returnedAt == nil }

    /// True when the rental is active and past its due date at `now`.
    public func isOverdue(at now: Date) -> Bool {
        guard isActive, let dueAt else { return false }
        return now > dueAt
    }
}

/// Card identifiers (badge UIDs/IDm, tag UIDs) in one canonical text form.
public enum CardIdentifier {
    /// Upper-case hex, separators (`:`, `-`, space) removed; nil when not hex or empty.
    public static func canonical(_ text: String) -> String? { TagUID(text)?.hex }

    /// Canonical form of a badge identifier, checked against its kind's length rules.
    /// - Throws: ``LendingError/invalidCardIdentifier(_:reason:)``.
    public static func normalize(_ text: String, kind: BadgeKind) throws(LendingError) -> String {
        guard let hex = canonical(text) else {
            throw .invalidCardIdentifier(text, reason: "expected hex digits such as 04A1B2C3")
        }
        let bytes = hex.count / 2
        switch kind {
        case .iso14443a where ![4, 7, 10].contains(bytes):
            throw .invalidCardIdentifier(text, reason: "an ISO 14443-A UID has 4, 7 or 10 bytes, got \(bytes)")
        case .felica where bytes != 8:
            throw .invalidCardIdentifier(text, reason: "a FeliCa IDm has 8 bytes, got \(bytes)")
        default:
            return hex
        }
    }
}
