#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import struct RoomBridgeCore.TagUID

/// A stocktake's store-assigned number.
public typealias StocktakeID = Int64

/// Which devices a stocktake expects on the shelf (disposed ones never).
public enum StocktakeScope: Sendable, Hashable {
    /// Every device.
    case all
    /// The devices of one group.
    case group(GroupID)
    /// The devices at one kiosk: those whose last rental was returned there (or, while lent, lent
    /// there). A device never lent has no location and is in no location's scope.
    case location(String)

    /// The scope's kind, as stored and on the wire.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case all, group, location
    }

    /// The stored and wire form: (`all`, nil), (`group`, ID), (`location`, name).
    public var kind: String { kindValue.rawValue }

    public var kindValue: Kind {
        switch self {
        case .all: .all
        case .group: .group
        case .location: .location
        }
    }

    public var value: String? {
        switch self {
        case .all: nil
        case .group(let id): id
        case .location(let name): name
        }
    }

    /// The scope a stored (`kind`, `value`) names; nil for anything else.
    public init?(kind: String, value: String?) {
        switch (kind, value) {
        case ("all", _): self = .all
        case ("group", let v?) where !v.isEmpty: self = .group(v)
        case ("location", let v?) where !v.isEmpty: self = .location(v)
        default: return nil
        }
    }

    /// "all devices", "group android-phone", "location front desk".
    public var description: String {
        switch self {
        case .all: "all devices"
        case .group(let id): "group \(id)"
        case .location(let name): "location \(name)"
        }
    }
}

/// A count of the shelf by tapping (glossary "stocktake"). While one is open, a device tap at any
/// kiosk sharing the database records the device as found and changes nothing about rentals.
public struct Stocktake: Sendable, Hashable, Codable {
    public var id: StocktakeID
    public var scope: StocktakeScope
    public var startedAt: Date
    public var startedBy: String?
    /// Nil while open.
    public var closedAt: Date?
    public var closedBy: String?
    /// Distinct devices of the inventory tapped so far, and tags tapped that are not in it.
    public var counted: Int
    public var unexpected: Int

    public init(id: StocktakeID, scope: StocktakeScope, startedAt: Date, startedBy: String? = nil, closedAt: Date? = nil,
                closedBy: String? = nil, counted: Int = 0, unexpected: Int = 0) {
        self.id = id
        self.scope = scope
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.closedAt = closedAt
        self.closedBy = closedBy
        self.counted = counted
        self.unexpected = unexpected
    }

    public var isOpen: Bool { closedAt == nil }

    private enum CodingKeys: String, CodingKey {
        case id, scope, scopeValue, startedAt, startedBy, closedAt, closedBy, counted, unexpected
    }

    /// On the wire the scope is two fields, `scope` (`all`, `group`, `location`) and `scopeValue`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decode(StocktakeScope.Kind.self, forKey: .scope)
        guard let scope = StocktakeScope(kind: kind.rawValue, value: try c.decodeIfPresent(String.self, forKey: .scopeValue)) else {
            throw DecodingError.dataCorruptedError(forKey: .scopeValue, in: c, debugDescription: "a \(kind.rawValue) stocktake needs scopeValue")
        }
        self.init(id: try c.decode(Int64.self, forKey: .id), scope: scope, startedAt: try c.decode(Date.self, forKey: .startedAt),
                  startedBy: try c.decodeIfPresent(String.self, forKey: .startedBy),
                  closedAt: try c.decodeIfPresent(Date.self, forKey: .closedAt),
                  closedBy: try c.decodeIfPresent(String.self, forKey: .closedBy),
                  counted: try c.decode(Int.self, forKey: .counted), unexpected: try c.decode(Int.self, forKey: .unexpected))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(scope.kindValue, forKey: .scope)
        try c.encodeIfPresent(scope.value, forKey: .scopeValue)
        try c.encode(startedAt, forKey: .startedAt)
        try c.encodeIfPresent(startedBy, forKey: .startedBy)
        try c.encodeIfPresent(closedAt, forKey: .closedAt)
        try c.encodeIfPresent(closedBy, forKey: .closedBy)
        try c.encode(counted, forKey: .counted)
        try c.encode(unexpected, forKey: .unexpected)
    }
}

/// One line of a closed stocktake's report, stored by value: it reads the same after the device
/// or the user is deleted.
public struct StocktakeEntry: Sendable, Hashable, Codable {
    public enum List: String, Sendable, Hashable, Codable, CaseIterable {
        /// In scope and tapped (lent or not: it is here).
        case found
        /// In scope, not lent, not tapped.
        case missing
        /// In scope, lent and not tapped: not expected on the shelf; `userId`/`userName` has it.
        case lent
        /// Tapped but not expected: a tag not in the inventory (`uid`), or a device of another scope.
        case unexpected
    }
    public var list: List
    public var deviceId: DeviceID?
    public var model: String?
    public var serialNumber: String?
    /// For `lent`: who has it.
    public var userId: UserID?
    public var userName: String?
    /// The tag's UID, for what was tapped.
    public var uid: TagUID?
    /// When it was tapped (found, unexpected), and where.
    public var tappedAt: Date?
    public var location: String?

    public init(list: List, deviceId: DeviceID? = nil, model: String? = nil, serialNumber: String? = nil, userId: UserID? = nil,
                userName: String? = nil, uid: TagUID? = nil, tappedAt: Date? = nil, location: String? = nil) {
        self.list = list
        self.deviceId = deviceId
        self.model = model
        self.serialNumber = serialNumber
        self.userId = userId
        self.userName = userName
        self.uid = uid
        self.tappedAt = tappedAt
        self.location = location
    }
}

/// A closed stocktake and its four lists, each ordered by device ID (unexpected tags by UID).
public struct StocktakeReport: Sendable, Hashable, Codable {
    public var stocktake: Stocktake
    public var entries: [StocktakeEntry]

    public init(stocktake: Stocktake, entries: [StocktakeEntry]) {
        self.stocktake = stocktake
        self.entries = entries
    }

    public func list(_ list: StocktakeEntry.List) -> [StocktakeEntry] { entries.filter { $0.list == list } }

    /// The report as CSV (the history export's conventions: RFC 4180, CRLF, dates in the options'
    /// zone, formulas neutralised, an optional byte order mark): one line per entry.
    public func csv(options: RentalExport.CSVOptions = .init()) -> String {
        func date(_ d: Date?) -> String { d.map { LendingFormat.spreadsheet($0, timeZone: options.timeZone) } ?? "" }
        var out = options.byteOrderMark ? "\u{FEFF}" : ""
        out += Self.csvHeader.joined(separator: ",") + "\r\n"
        for e in entries {
            let fields = [e.list.rawValue, e.deviceId ?? "", e.model ?? "", e.serialNumber ?? "", e.userId ?? "",
                          e.userName ?? "", e.uid?.hex ?? "", date(e.tappedAt), e.location ?? ""]
            out += fields.map { RentalExport.csvField($0, neutralizeFormulas: options.neutralizeFormulas) }
                .joined(separator: ",") + "\r\n"
        }
        return out
    }

    public static let csvHeader = ["list", "device_id", "model", "serial_number", "user_id", "user_name", "uid", "tapped_at",
                                   "location"]
}

/// What a tap during a stocktake recorded.
public enum StocktakeTapResult: Sendable, Hashable {
    /// A device of the inventory; `again`: it was tapped before in this stocktake.
    case counted(again: Bool)
    /// A tag that is not in the inventory (recorded by UID).
    case unexpected
}
