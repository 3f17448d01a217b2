#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Varlink

/// `io.roombridge.Inventory`'s methods as the clients (roombridge-web, roombridgectl) call them.
/// The value types are the lending domain's own Codable types (`Device`, `Rental`, …), which
/// ContractTests compares with the IDL types of the same name; the parameters and replies here
/// are compared with the IDL's methods.
public enum InventoryAPI {
    public static let interface = "io.roombridge.Inventory"

    /// IDL type `DeviceFields`: the fields of a new device, or the fields to change (nil:
    /// unchanged or default; an empty note clears it).
    public struct DeviceFields: Codable, Sendable, Equatable {
        public var groupId: GroupID?
        public var model: String?
        public var serialNumber: String?
        public var osVersion: String?
        public var status: DeviceStatus?
        public var connectorType: String?
        public var registeredAt: Date?
        public var note: String?

        public init(groupId: GroupID? = nil, model: String? = nil, serialNumber: String? = nil, osVersion: String? = nil,
                    status: DeviceStatus? = nil, connectorType: String? = nil, registeredAt: Date? = nil, note: String? = nil) {
            self.groupId = groupId
            self.model = model
            self.serialNumber = serialNumber
            self.osVersion = osVersion
            self.status = status
            self.connectorType = connectorType
            self.registeredAt = registeredAt
            self.note = note
        }
    }

    /// Parameters naming one record by `id`.
    public struct ByID: Codable, Sendable, Equatable {
        public var id: String
        public init(id: String) { self.id = id }
    }

    public enum ListGroups: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.ListGroups"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var groups: [DeviceGroup] }
    }

    /// Parameters carrying one group.
    public struct GroupParameters: Codable, Sendable {
        public var group: DeviceGroup
        public init(group: DeviceGroup) { self.group = group }
    }

    public enum AddGroup: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.AddGroup"
        public typealias Parameters = GroupParameters
        public typealias Reply = VarlinkNothing
    }

    public enum UpdateGroup: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.UpdateGroup"
        public typealias Parameters = GroupParameters
        public typealias Reply = VarlinkNothing
    }

    public enum DeleteGroup: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.DeleteGroup"
        public typealias Parameters = ByID
        public typealias Reply = VarlinkNothing
    }

    public enum AddDevice: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.AddDevice"
        public struct Parameters: Codable, Sendable {
            public var id: DeviceID
            public var fields: DeviceFields
            public var actor: String?
            public init(id: DeviceID, fields: DeviceFields, actor: String? = nil) {
                self.id = id
                self.fields = fields
                self.actor = actor
            }
        }
        public struct Reply: Codable, Sendable { public var device: DeviceRecord }
    }

    public enum UpdateDevice: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.UpdateDevice"
        public typealias Parameters = AddDevice.Parameters
        public struct Reply: Codable, Sendable {
            public var device: DeviceRecord
            /// The log rows written (empty: nothing changed).
            public var changes: [DeviceLogEntry]
            /// Public so that a client can print one field as the daemon sent it (`roombridgectl devices edit --json`).
            public enum CodingKeys: String, CodingKey { case device, changes }
        }
    }

    public enum DeleteDevice: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.DeleteDevice"
        public struct Parameters: Codable, Sendable {
            public var id: DeviceID
            public var actor: String?
            public init(id: DeviceID, actor: String? = nil) {
                self.id = id
                self.actor = actor
            }
        }
        public typealias Reply = VarlinkNothing
    }

    public enum GetDevice: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.GetDevice"
        public typealias Parameters = ByID
        public struct Reply: Codable, Sendable {
            public var device: DeviceRecord
            public var tags: [TagBinding]
        }
    }

    public enum ListDevices: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.ListDevices"
        public struct Parameters: Codable, Sendable {
            public var groupId: GroupID?
            public var status: DeviceStatus?
            public var isLent: Bool?
            public var isNfcRegistered: Bool?
            /// Case-insensitive substring of ID, model or serial number.
            public var text: String?
            public var limit: Int?
            public var cursor: String?
            public init(groupId: GroupID? = nil, status: DeviceStatus? = nil, isLent: Bool? = nil, isNfcRegistered: Bool? = nil,
                        text: String? = nil, limit: Int? = nil, cursor: String? = nil) {
                self.groupId = groupId
                self.status = status
                self.isLent = isLent
                self.isNfcRegistered = isNfcRegistered
                self.text = text
                self.limit = limit
                self.cursor = cursor
            }
        }
        public struct Reply: Codable, Sendable {
            public var devices: [DeviceRecord]
            public var nextCursor: String?
        }
    }

    public enum DeviceLog: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.DeviceLog"
        public struct Parameters: Codable, Sendable {
            public var id: DeviceID
            public var limit: Int?
            public var cursor: String?
            public init(id: DeviceID, limit: Int? = nil, cursor: String? = nil) {
                self.id = id
                self.limit = limit
                self.cursor = cursor
            }
        }
        public struct Reply: Codable, Sendable {
            public var entries: [DeviceLogEntry]
            public var nextCursor: String?
        }
    }

    /// The reply of the methods that answer with one user.
    public struct UserReply: Codable, Sendable { public var user: User }

    public enum AddUser: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.AddUser"
        public struct Parameters: Codable, Sendable {
            public var id: UserID
            public var name: String
            public init(id: UserID, name: String) {
                self.id = id
                self.name = name
            }
        }
        public typealias Reply = UserReply
    }

    public enum UpdateUser: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.UpdateUser"
        public typealias Parameters = AddUser.Parameters
        public typealias Reply = UserReply
    }

    public enum DeleteUser: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.DeleteUser"
        public struct Parameters: Codable, Sendable {
            public var id: UserID
            public var actor: String?
            public init(id: UserID, actor: String? = nil) {
                self.id = id
                self.actor = actor
            }
        }
        public typealias Reply = VarlinkNothing
    }

    public enum GetUser: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.GetUser"
        public typealias Parameters = ByID
        public struct Reply: Codable, Sendable {
            public var user: User
            public var badges: [Badge]
        }
    }

    public enum ListUsers: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.ListUsers"
        public struct Parameters: Codable, Sendable {
            public var nameContains: String?
            public var limit: Int?
            public var cursor: String?
            public init(nameContains: String? = nil, limit: Int? = nil, cursor: String? = nil) {
                self.nameContains = nameContains
                self.limit = limit
                self.cursor = cursor
            }
        }
        public struct Reply: Codable, Sendable {
            public var users: [User]
            public var nextCursor: String?
        }
    }

    public enum AddBadge: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.AddBadge"
        public struct Parameters: Codable, Sendable {
            /// Hex, separators allowed (04:A1:B2:C3).
            public var identifier: String
            /// Default `iso14443a`.
            public var kind: BadgeKind?
            public var userId: UserID
            public var label: String?
            public init(identifier: String, kind: BadgeKind? = nil, userId: UserID, label: String? = nil) {
                self.identifier = identifier
                self.kind = kind
                self.userId = userId
                self.label = label
            }
        }
        public struct Reply: Codable, Sendable { public var badge: Badge }
    }

    /// Parameters naming one badge by its identifier (any hex spelling).
    public struct ByIdentifier: Codable, Sendable, Equatable {
        public var identifier: String
        public init(identifier: String) { self.identifier = identifier }
    }

    public enum DeleteBadge: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.DeleteBadge"
        public typealias Parameters = ByIdentifier
        public typealias Reply = VarlinkNothing
    }

    /// A user's badges; without `userId` every badge, paged.
    public enum ListBadges: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.ListBadges"
        public typealias Parameters = UserPageParameters
        public struct Reply: Codable, Sendable {
            public var badges: [Badge]
            public var nextCursor: String?
        }
    }

    /// Whose card is this: the badge and its user.
    public enum GetBadge: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.GetBadge"
        public typealias Parameters = ByIdentifier
        public struct Reply: Codable, Sendable {
            public var badge: Badge
            public var user: User
        }
    }

    public enum BindTag: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.BindTag"
        public struct Parameters: Codable, Sendable {
            /// Hex, separators allowed.
            public var uid: String
            public var deviceId: DeviceID
            public var actor: String?
            public init(uid: String, deviceId: DeviceID, actor: String? = nil) {
                self.uid = uid
                self.deviceId = deviceId
                self.actor = actor
            }
        }
        public struct Reply: Codable, Sendable { public var binding: TagBinding }
    }

    public enum UnbindTag: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.UnbindTag"
        public struct Parameters: Codable, Sendable {
            public var uid: String
            public var actor: String?
            public init(uid: String, actor: String? = nil) {
                self.uid = uid
                self.actor = actor
            }
        }
        public typealias Reply = VarlinkNothing
    }

    public enum ListTagBindings: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.ListTagBindings"
        public struct Parameters: Codable, Sendable {
            public var deviceId: DeviceID
            public init(deviceId: DeviceID) { self.deviceId = deviceId }
        }
        public struct Reply: Codable, Sendable { public var bindings: [TagBinding] }
    }

    public enum Import: VarlinkMethod {
        public static let name = "io.roombridge.Inventory.Import"
        public struct Parameters: Codable, Sendable {
            public var kind: ImportKind
            public var csv: String
            public var dryRun: Bool?
            public var partial: Bool?
            public var actor: String?
            public init(kind: ImportKind, csv: String, dryRun: Bool? = nil, partial: Bool? = nil, actor: String? = nil) {
                self.kind = kind
                self.csv = csv
                self.dryRun = dryRun
                self.partial = partial
                self.actor = actor
            }
        }
        public struct Reply: Codable, Sendable {
            public var added: [String]
            public var updated: [String]
            public var unchanged: [String]
            public var problems: [ImportProblem]
            public var written: Bool
        }
    }
}
