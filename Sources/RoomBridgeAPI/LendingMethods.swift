#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import RoomBridgeCore
import Varlink

/// `io.roombridge.Lending`'s methods as the clients call them (see ``InventoryAPI``).
public enum LendingAPI {
    public static let interface = "io.roombridge.Lending"

    /// The reply of the methods that answer with one rental. (`overdue`, which the daemon adds to
    /// each rental, is the rule ``Rental/isOverdue(at:)`` at the reply's moment; clients apply
    /// the same rule when they show it.)
    public struct RentalReply: Codable, Sendable { public var rental: Rental }

    /// A page of rentals.
    public struct RentalPage: Codable, Sendable {
        public var rentals: [Rental]
        public var nextCursor: String?
    }

    public enum Arm: VarlinkMethod {
        public static let name = "io.roombridge.Lending.Arm"
        public struct Parameters: Codable, Sendable {
            public var userId: UserID
            public init(userId: UserID) { self.userId = userId }
        }
        public struct Reply: Codable, Sendable { public var session: LendingArm }
    }

    public enum Disarm: VarlinkMethod {
        public static let name = "io.roombridge.Lending.Disarm"
        public typealias Parameters = VarlinkNothing
        public typealias Reply = VarlinkNothing
    }

    public enum GetSession: VarlinkMethod {
        public static let name = "io.roombridge.Lending.GetSession"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var session: LendingArm? }
    }

    public enum Lend: VarlinkMethod {
        public static let name = "io.roombridge.Lending.Lend"
        public struct Parameters: Codable, Sendable {
            public var deviceId: DeviceID
            public var userId: UserID
            /// Default: the configured loan period (none: open-ended).
            public var dueAt: Date?
            /// The person signed in to a trusted front end ("web:NAME via unix:USER").
            public var actor: String?
            public init(deviceId: DeviceID, userId: UserID, dueAt: Date? = nil, actor: String? = nil) {
                self.deviceId = deviceId
                self.userId = userId
                self.dueAt = dueAt
                self.actor = actor
            }
        }
        public typealias Reply = RentalReply
    }

    public enum Return: VarlinkMethod {
        public static let name = "io.roombridge.Lending.Return"
        public struct Parameters: Codable, Sendable {
            public var deviceId: DeviceID
            /// The user who brought it back; without it the caller (or `actor`) is recorded.
            public var returnedBy: UserID?
            public var actor: String?
            /// The device's condition ("cracked screen"), kept in the history.
            public var note: String?
            /// Also set the device's status to broken, in the same transaction.
            public var broken: Bool?
            public init(deviceId: DeviceID, returnedBy: UserID? = nil, actor: String? = nil, note: String? = nil, broken: Bool? = nil) {
                self.deviceId = deviceId
                self.returnedBy = returnedBy
                self.actor = actor
                self.note = note
                self.broken = broken
            }
        }
        public typealias Reply = RentalReply
    }

    public enum Renew: VarlinkMethod {
        public static let name = "io.roombridge.Lending.Renew"
        public struct Parameters: Codable, Sendable {
            public var deviceId: DeviceID
            public var dueAt: Date
            public var actor: String?
            public init(deviceId: DeviceID, dueAt: Date, actor: String? = nil) {
                self.deviceId = deviceId
                self.dueAt = dueAt
                self.actor = actor
            }
        }
        public typealias Reply = RentalReply
    }

    /// The reply of the methods that answer with one booking.
    public struct BookingReply: Codable, Sendable { public var booking: Booking }

    public enum Book: VarlinkMethod {
        public static let name = "io.roombridge.Lending.Book"
        public struct Parameters: Codable, Sendable {
            public var deviceId: DeviceID
            public var userId: UserID
            public var startsAt: Date
            public var endsAt: Date
            public var actor: String?
            public init(deviceId: DeviceID, userId: UserID, startsAt: Date, endsAt: Date, actor: String? = nil) {
                self.deviceId = deviceId
                self.userId = userId
                self.startsAt = startsAt
                self.endsAt = endsAt
                self.actor = actor
            }
        }
        public typealias Reply = BookingReply
    }

    public enum CancelBooking: VarlinkMethod {
        public static let name = "io.roombridge.Lending.CancelBooking"
        public struct Parameters: Codable, Sendable {
            public var id: BookingID
            public var actor: String?
            public init(id: BookingID, actor: String? = nil) {
                self.id = id
                self.actor = actor
            }
        }
        public typealias Reply = BookingReply
    }

    public enum ListBookings: VarlinkMethod {
        public static let name = "io.roombridge.Lending.ListBookings"
        public struct Parameters: Codable, Sendable {
            public var deviceId: DeviceID?
            public var userId: UserID?
            public var from: Date?
            public var until: Date?
            public var includeCancelled: Bool?
            public var limit: Int?
            public var cursor: String?
            public init(deviceId: DeviceID? = nil, userId: UserID? = nil, from: Date? = nil, until: Date? = nil,
                        includeCancelled: Bool? = nil, limit: Int? = nil, cursor: String? = nil) {
                self.deviceId = deviceId
                self.userId = userId
                self.from = from
                self.until = until
                self.includeCancelled = includeCancelled
                self.limit = limit
                self.cursor = cursor
            }
        }
        public struct Reply: Codable, Sendable {
            public var bookings: [Booking]
            public var nextCursor: String?
        }
    }

    public struct StocktakeReply: Codable, Sendable { public var report: StocktakeReport }

    public enum StartStocktake: VarlinkMethod {
        public static let name = "io.roombridge.Lending.StartStocktake"
        public struct Parameters: Codable, Sendable {
            /// `all`, `group` or `location`.
            public var scope: String
            public var scopeValue: String?
            public var actor: String?
            public init(scope: StocktakeScope, actor: String? = nil) {
                self.scope = scope.kind
                self.scopeValue = scope.value
                self.actor = actor
            }
        }
        public struct Reply: Codable, Sendable { public var stocktake: Stocktake }
    }

    public enum CloseStocktake: VarlinkMethod {
        public static let name = "io.roombridge.Lending.CloseStocktake"
        public struct Parameters: Codable, Sendable {
            public var id: StocktakeID?
            public var actor: String?
            public init(id: StocktakeID? = nil, actor: String? = nil) {
                self.id = id
                self.actor = actor
            }
        }
        public typealias Reply = StocktakeReply
    }

    public enum GetStocktake: VarlinkMethod {
        public static let name = "io.roombridge.Lending.GetStocktake"
        public struct Parameters: Codable, Sendable {
            public var id: StocktakeID?
            public init(id: StocktakeID? = nil) { self.id = id }
        }
        public typealias Reply = StocktakeReply
    }

    public enum ListStocktakes: VarlinkMethod {
        public static let name = "io.roombridge.Lending.ListStocktakes"
        public struct Parameters: Codable, Sendable {
            public var limit: Int?
            public var cursor: String?
            public init(limit: Int? = nil, cursor: String? = nil) {
                self.limit = limit
                self.cursor = cursor
            }
        }
        public struct Reply: Codable, Sendable {
            public var stocktakes: [Stocktake]
            public var nextCursor: String?
        }
    }

    public enum ExportStocktake: VarlinkMethod {
        public static let name = "io.roombridge.Lending.ExportStocktake"
        public struct Parameters: Codable, Sendable {
            public var id: StocktakeID
            /// `csv` or `json`.
            public var format: String
            public var timeZone: String?
            public var byteOrderMark: Bool?
            public init(id: StocktakeID, format: String, timeZone: String? = nil, byteOrderMark: Bool? = nil) {
                self.id = id
                self.format = format
                self.timeZone = timeZone
                self.byteOrderMark = byteOrderMark
            }
        }
        public struct Reply: Codable, Sendable {
            public var text: String
            public var count: Int
        }
    }

    public enum GetMonthlyReport: VarlinkMethod {
        public static let name = "io.roombridge.Lending.GetMonthlyReport"
        public struct Parameters: Codable, Sendable {
            /// `YYYY-MM`.
            public var month: String
            public var timeZone: String?
            public init(month: String, timeZone: String? = nil) {
                self.month = month
                self.timeZone = timeZone
            }
        }
        public struct Reply: Codable, Sendable { public var report: MonthlyLendingReport }
    }

    public enum GetDashboard: VarlinkMethod {
        public static let name = "io.roombridge.Lending.GetDashboard"
        public struct Parameters: Codable, Sendable {
            /// 1…366; the daemon's default (30) when nil.
            public var days: Int?
            public var timeZone: String?
            public init(days: Int? = nil, timeZone: String? = nil) {
                self.days = days
                self.timeZone = timeZone
            }
        }
        public struct Reply: Codable, Sendable { public var dashboard: LendingDashboard }
    }

    public enum ListActive: VarlinkMethod {
        public static let name = "io.roombridge.Lending.ListActive"
        public typealias Parameters = UserPageParameters
        public typealias Reply = RentalPage
    }

    public enum ListOverdue: VarlinkMethod {
        public static let name = "io.roombridge.Lending.ListOverdue"
        public struct Parameters: Codable, Sendable {
            public var limit: Int?
            public var cursor: String?
            public init(limit: Int? = nil, cursor: String? = nil) {
                self.limit = limit
                self.cursor = cursor
            }
        }
        public typealias Reply = RentalPage
    }

    /// Which rentals: those that started in [since, until), of a device or a user.
    public struct HistoryRange: Codable, Sendable, Equatable {
        public var deviceId: DeviceID?
        public var userId: UserID?
        public var since: Date?
        public var until: Date?
        /// Leave out active rentals.
        public var returnedOnly: Bool?
        public init(deviceId: DeviceID? = nil, userId: UserID? = nil, since: Date? = nil, until: Date? = nil, returnedOnly: Bool? = nil) {
            self.deviceId = deviceId
            self.userId = userId
            self.since = since
            self.until = until
            self.returnedOnly = returnedOnly
        }
    }

    public enum History: VarlinkMethod {
        public static let name = "io.roombridge.Lending.History"
        /// On the wire the range's fields, `limit` and `cursor`, side by side.
        public struct Parameters: Codable, Sendable {
            public var range: HistoryRange
            public var limit: Int?
            public var cursor: String?
            public init(_ range: HistoryRange = HistoryRange(), limit: Int? = nil, cursor: String? = nil) {
                self.range = range
                self.limit = limit
                self.cursor = cursor
            }
            enum CodingKeys: String, CodingKey { case limit, cursor }
            public init(from decoder: any Decoder) throws {
                range = try HistoryRange(from: decoder)
                let c = try decoder.container(keyedBy: CodingKeys.self)
                limit = try c.decodeIfPresent(Int.self, forKey: .limit)
                cursor = try c.decodeIfPresent(String.self, forKey: .cursor)
            }
            public func encode(to encoder: any Encoder) throws {
                try range.encode(to: encoder)
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encodeIfPresent(limit, forKey: .limit)
                try c.encodeIfPresent(cursor, forKey: .cursor)
            }
        }
        public typealias Reply = RentalPage
    }

    /// `ExportHistory`'s formats.
    public enum ExportFormat: String, Codable, Sendable, CaseIterable {
        case csv, json
    }

    public enum ExportHistory: VarlinkMethod {
        public static let name = "io.roombridge.Lending.ExportHistory"
        /// On the wire the page's fields (`History.Parameters`) and the export's, side by side.
        public struct Parameters: Codable, Sendable {
            public var page: History.Parameters
            public var format: ExportFormat
            /// Spreadsheet dates' zone (tz name); default the kiosk's.
            public var timeZone: String?
            public var byteOrderMark: Bool?
            public init(_ range: HistoryRange = HistoryRange(), format: ExportFormat, timeZone: String? = nil,
                        byteOrderMark: Bool? = nil, limit: Int? = nil, cursor: String? = nil) {
                page = History.Parameters(range, limit: limit, cursor: cursor)
                self.format = format
                self.timeZone = timeZone
                self.byteOrderMark = byteOrderMark
            }
            enum CodingKeys: String, CodingKey { case format, timeZone, byteOrderMark }
            public init(from decoder: any Decoder) throws {
                page = try History.Parameters(from: decoder)
                let c = try decoder.container(keyedBy: CodingKeys.self)
                format = try c.decode(ExportFormat.self, forKey: .format)
                timeZone = try c.decodeIfPresent(String.self, forKey: .timeZone)
                byteOrderMark = try c.decodeIfPresent(Bool.self, forKey: .byteOrderMark)
            }
            public func encode(to encoder: any Encoder) throws {
                try page.encode(to: encoder)
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(format, forKey: .format)
                try c.encodeIfPresent(timeZone, forKey: .timeZone)
                try c.encodeIfPresent(byteOrderMark, forKey: .byteOrderMark)
            }
        }
        public struct Reply: Codable, Sendable {
            public var text: String
            public var count: Int
            public var nextCursor: String?
        }
    }
}

/// `io.roombridge.State`'s methods as the clients call them.
public enum StateAPI {
    public static let interface = "io.roombridge.State"

    public enum GetState: VarlinkMethod {
        public static let name = "io.roombridge.State.GetState"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var state: StateSnapshot }
    }

    /// Call with `more`: the state (or `resumedAfter`), then one event per reply.
    public enum Watch: VarlinkMethod {
        public static let name = "io.roombridge.State.Watch"
        public struct Parameters: Codable, Sendable {
            /// The `seq` of the last event the client saw, to resume after it.
            public var since: Int?
            public init(since: Int? = nil) { self.since = since }
        }
        public struct Reply: Codable, Sendable {
            public var state: StateSnapshot?
            public var event: Event?
            public var resumedAfter: Int?
        }
    }

    public enum GetTimeline: VarlinkMethod {
        public static let name = "io.roombridge.State.GetTimeline"
        public typealias Parameters = VarlinkNothing
        public struct Reply: Codable, Sendable { public var timeline: Timeline }
    }
}
