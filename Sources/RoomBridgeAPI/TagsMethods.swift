import RoomBridgeCore
import Varlink

/// `io.roombridge.Tags`'s methods as the clients call them (see ``InventoryAPI``).
public enum TagsAPI {
    public static let interface = "io.roombridge.Tags"

    /// The most recent tap on any reader (nil before the first).
    public enum GetLastTap: VarlinkMethod {
        public static let name = "io.roombridge.Tags.GetLastTap"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var tap: Tap? }
    }

    /// Writes the device record to the next writable tag placed on a reader and binds its UID.
    public enum Write: VarlinkMethod {
        public static let name = "io.roombridge.Tags.Write"
        public typealias Parameters = TagWriteRequest
        public typealias Reply = TagWriteReport
    }

    /// Cancels a pending write; `cancelled` is false when none was waiting.
    public enum CancelWrite: VarlinkMethod {
        public static let name = "io.roombridge.Tags.CancelWrite"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var cancelled: Bool }
    }
}

/// A request to register a device tag: write the device record, read it back, bind the UID.
public struct TagWriteRequest: Sendable, Codable, Equatable {
    public var deviceId: String
    /// A URI record written before the device record (phones open it when tapped).
    public var uri: String?
    /// Make the tag read-only afterwards (irreversible).
    public var lock: Bool?
    /// Re-register a tag already bound to another device.
    public var force: Bool?
    /// How long to wait for a tag (default 60 s).
    public var timeoutSeconds: Int?

    public init(deviceId: String, uri: String? = nil, lock: Bool? = nil, force: Bool? = nil, timeoutSeconds: Int? = nil) {
        self.deviceId = deviceId
        self.uri = uri
        self.lock = lock
        self.force = force
        self.timeoutSeconds = timeoutSeconds
    }
}

/// What a successful registration did.
public struct TagWriteReport: Sendable, Codable, Equatable {
    public var uid: TagUID
    public var tagType: String
    /// The tag was factory-blank and got a capability container first.
    public var formatted: Bool
    public var locked: Bool

    public init(uid: TagUID, tagType: String, formatted: Bool, locked: Bool) {
        self.uid = uid
        self.tagType = tagType
        self.formatted = formatted
        self.locked = locked
    }
}
