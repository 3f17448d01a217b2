#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import struct RoomBridgeCore.TagUID

/// A page request for keyset paging: at most `limit` items after `cursor`.
public struct PageRequest: Sendable, Hashable {
    /// Largest allowed page size.
    public static let maximumLimit = 1000
    /// Items per page (1...``maximumLimit``; clamped).
    public var limit: Int
    /// Opaque cursor from a previous ``Page/nextCursor``; nil for the first page.
    public var cursor: String?

    public init(limit: Int = 100, cursor: String? = nil) {
        self.limit = min(max(limit, 1), Self.maximumLimit)
        self.cursor = cursor
    }

    /// The first page with the default size.
    public static let first = PageRequest()
}

/// One page of results. `nextCursor` is nil on the last page.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    /// Pass as ``PageRequest/cursor`` to get the next page; nil when there is none.
    public var nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

extension Page: Equatable where Item: Equatable {}

/// Filters for listing devices; nil fields do not filter.
public struct DeviceFilter: Sendable, Hashable {
    public var groupId: GroupID?
    public var status: DeviceStatus?
    /// true: lent devices only; false: available devices only.
    public var isLent: Bool?
    public var isNFCRegistered: Bool?
    /// Case-insensitive substring of model, serial number or ID.
    public var text: String?

    public init(
        groupId: GroupID? = nil, status: DeviceStatus? = nil, isLent: Bool? = nil,
        isNFCRegistered: Bool? = nil, text: String? = nil
    ) {
        self.groupId = groupId
        self.status = status
        self.isLent = isLent
        self.isNFCRegistered = isNFCRegistered
        self.text = text
    }
}

/// Which rentals a history query returns: those whose `rentedAt` is in `[since, until)` (or,
/// ``overlapping``, that were out at some time in it), newest first. Nil fields do not filter.
public struct HistoryQuery: Sendable, Hashable {
    public var deviceId: DeviceID?
    public var userId: UserID?
    public var since: Date?
    public var until: Date?
    /// false: only returned rentals.
    public var includeActive: Bool
    /// true: `since`/`until` select the rentals whose time out overlaps `[since, until)` — lent
    /// before `until` and not returned before `since` — instead of those lent in it.
    public var overlapping: Bool

    public init(
        deviceId: DeviceID? = nil, userId: UserID? = nil, since: Date? = nil, until: Date? = nil,
        includeActive: Bool = true, overlapping: Bool = false
    ) {
        self.overlapping = overlapping
        self.deviceId = deviceId
        self.userId = userId
        self.since = since
        self.until = until
        self.includeActive = includeActive
    }
}

/// A lend to perform atomically.
public struct LendRequest: Sendable, Hashable {
    public var deviceId: DeviceID
    public var userId: UserID
    public var at: Date
    /// Nil for an open-ended loan (see ``LendingPolicy/dueDate(for:)``).
    public var dueAt: Date?
    /// Reader/kiosk name.
    public var location: String?
    /// Who lends it (the armed user at a reader, a client's Unix user, …).
    public var lentBy: ChangeActor?
    /// The most active rentals the user may have, this one included (``LendingPolicy/maxActivePerUser``);
    /// the store checks it in the lend's transaction. Nil: no limit.
    public var maxActivePerUser: Int?
    /// How long before a booking's start the device is kept for its booker
    /// (``BookingRules/admit(_:next:)``, `lending.booking_guard`).
    public var bookingGuard: TimeInterval

    public init(deviceId: DeviceID, userId: UserID, at: Date, dueAt: Date? = nil, location: String? = nil,
                lentBy: ChangeActor? = nil, maxActivePerUser: Int? = nil, bookingGuard: TimeInterval = BookingRules.defaultGuard) {
        self.maxActivePerUser = maxActivePerUser
        self.bookingGuard = bookingGuard
        self.deviceId = deviceId
        self.userId = userId
        self.at = at
        self.dueAt = dueAt
        self.location = location
        self.lentBy = lentBy
    }
}

/// A return to perform atomically.
public struct ReturnRequest: Sendable, Hashable {
    public var deviceId: DeviceID
    public var at: Date
    /// Who brought it back, when known.
    public var returnedBy: ChangeActor?
    /// Reader/kiosk name.
    public var location: String?

    /// The device's condition as the person returning it describes it ("cracked screen").
    public var note: String?
    /// Also set the device's status to `broken`, in the same transaction (logged).
    public var markBroken: Bool

    public init(deviceId: DeviceID, at: Date, returnedBy: ChangeActor? = nil, location: String? = nil,
                note: String? = nil, markBroken: Bool = false) {
        self.note = note
        self.markBroken = markBroken
        self.deviceId = deviceId
        self.at = at
        self.returnedBy = returnedBy
        self.location = location
    }
}

/// The persistence the lending domain needs. Implementations perform each mutating call in
/// one transaction; `lend` relies on the backend's uniqueness guarantee (one active rental
/// per device) as the final arbiter, so two processes sharing a backend never lend a device
/// twice. Errors are ``LendingError`` unless the backend itself fails.
public protocol InventoryStore: Sendable {
    // MARK: Groups
    func groups() async throws -> [DeviceGroup]
    func addGroup(_ group: DeviceGroup) async throws
    func updateGroup(_ group: DeviceGroup) async throws
    /// Fails with ``LendingError/groupInUse(_:deviceCount:)`` while devices use it.
    func deleteGroup(id: GroupID) async throws

    // MARK: Devices
    /// Adds a device and one `add` log row per field, recording `actor` on them.
    func addDevice(_ device: Device, at: Date, by actor: ChangeActor?) async throws
    /// Replaces a device's fields and logs one `update` row per changed field (old, new).
    /// Returns the log rows written (empty when nothing changed).
    @discardableResult
    func updateDevice(_ device: Device, at: Date, by actor: ChangeActor?) async throws -> [DeviceLogEntry]
    /// Deletes a device (its history and log stay). Refused while it is lent.
    func deleteDevice(id: DeviceID, at: Date, by actor: ChangeActor?) async throws
    func device(id: DeviceID) async throws -> DeviceRecord?
    /// The device record and its tag bindings, read together (nil when there is no such device).
    func deviceDetail(id: DeviceID) async throws -> DeviceDetail?
    /// The reads this store can also make synchronously, on its own threads (nil by default).
    var blockingReads: (any BlockingInventoryReads)? { get }
    func devices(_ filter: DeviceFilter, page: PageRequest) async throws -> Page<DeviceRecord>
    /// A device's change log, newest first (also for deleted devices).
    func deviceLog(deviceId: DeviceID, page: PageRequest) async throws -> Page<DeviceLogEntry>

    // MARK: Users
    func addUser(_ user: User) async throws
    func updateUser(_ user: User) async throws
    /// Deletes a user and their badges (history stays). Refused while they have devices. Their
    /// bookings still to come (booked, ending after `at`) are cancelled, by `actor`.
    func deleteUser(id: UserID, at: Date, by actor: ChangeActor?) async throws
    func user(id: UserID) async throws -> User?
    /// Users ordered by ID; `nameContains` filters case-insensitively.
    func users(nameContains: String?, page: PageRequest) async throws -> Page<User>

    // MARK: Badges and tag bindings
    /// Binds a badge to a user. The identifier must not be bound to a device tag.
    func addBadge(_ badge: Badge) async throws
    func deleteBadge(identifier: TagUID) async throws
    func badges(userId: UserID) async throws -> [Badge]
    /// Every badge, ordered by identifier.
    func allBadges(page: PageRequest) async throws -> Page<Badge>
    /// Binds a tag UID to a device. The UID must not be a badge.
    func bindTag(_ binding: TagBinding) async throws
    /// Unbinds a tag; the device's last tag gone, it is no longer NFC-registered (logged as done by `actor`).
    func unbindTag(uid: TagUID, by actor: ChangeActor?) async throws
    func tagBindings(deviceId: DeviceID) async throws -> [TagBinding]
    /// Binds `uid` to the device and marks it NFC-registered, in one transaction, logging
    /// the flag change (the last step of tag registration in device-tag.md).
    func registerTag(uid: TagUID, deviceId: DeviceID, at: Date, by actor: ChangeActor?) async throws
    /// What a UID is bound to (device tag or badge), if anything.
    func resolve(uid: TagUID) async throws -> UIDBinding?

    // MARK: Rentals
    /// Lends atomically, applying the device's next booking in the same transaction
    /// (``BookingRules/admit(_:next:)``: fulfils it, refuses with
    /// ``LendingError/booked(_:userId:userName:startsAt:)``, or clips the due date to its start).
    /// Fails with ``LendingError/alreadyLent(_:userId:userName:since:)``,
    /// ``LendingError/notLendable(_:status:)``, ``LendingError/noSuchDevice(_:)``,
    /// ``LendingError/noSuchUser(_:)`` or, when the request carries a limit the user has
    /// reached, ``LendingError/limitReached(_:userName:limit:deviceIds:)`` (see
    /// ``LendingRules/checkLimit(userId:userName:active:limit:)``).
    func lend(_ request: LendRequest) async throws -> Rental
    /// Returns atomically (with its note, and the status change to broken when asked); fails
    /// with ``LendingError/notLent(_:)``.
    func returnDevice(_ request: ReturnRequest) async throws -> Rental
    /// Moves the due date of the device's active rental to `dueAt` (a renewal: the rental goes
    /// on, nothing is returned or lent again) and logs it in the device log (field `dueAt`).
    /// Fails with ``LendingError/notLent(_:)``, ``LendingError/noSuchDevice(_:)``, or
    /// ``LendingError/booked(_:userId:userName:startsAt:)`` when the new due date runs into another person's booking.
    func renew(deviceId: DeviceID, dueAt: Date, at: Date, by actor: ChangeActor?) async throws -> Rental
    /// Applies an import (``InventoryImport/read(_:csv:at:)``) in one transaction, idempotent by
    /// ID: new records are added, differing ones updated, equal ones left alone; a line the store
    /// refuses becomes a problem. Nothing is written in a dry run, or when any line is bad
    /// unless `partial`.
    func importLines(_ lines: [ImportLine], problems: [ImportProblem], dryRun: Bool, partial: Bool,
                     at: Date, by actor: ChangeActor?) async throws -> ImportReport
    /// Active rentals, oldest first; `userId` filters ("what does user U have").
    func activeRentals(userId: UserID?, page: PageRequest) async throws -> Page<Rental>
    /// Active rentals with a due date before `now`, most overdue first.
    func overdueRentals(at now: Date, page: PageRequest) async throws -> Page<Rental>
    /// The active rentals past their due date at `now` that were not announced yet for that due
    /// date, marked announced in the same transaction: each is returned once, also across
    /// restarts and when two daemons share the store. Oldest due date first.
    func claimOverdueAnnouncements(at now: Date) async throws -> [Rental]
    /// How many active rentals are past their due date at `now`.
    func overdueCount(at now: Date) async throws -> Int
    /// The earliest due date among active rentals not announced as overdue for it (when the
    /// next announcement is due; a past date: one is due now).
    func nextOverdueAnnouncement() async throws -> Date?
    /// Rental history, newest first.
    func history(_ query: HistoryQuery, page: PageRequest) async throws -> Page<Rental>
    /// The dashboard's facts for [`from`, `until`) at `now` (``DashboardFacts``): each a range
    /// query or an aggregate over an index, never every rental.
    func dashboardFacts(from: Date, until: Date, now: Date) async throws -> DashboardFacts

    // MARK: Bookings
    /// Books a device (``BookingRules/validate(_:)``, ``BookingRules/checkRental(_:for:)``); fails with
    /// ``LendingError/bookingOverlaps(_:existing:userName:startsAt:endsAt:)`` when another booking
    /// of the device holds part of the time. The store's constraint decides between two kiosks
    /// booking at once: exactly one wins.
    func book(_ request: BookingRequest) async throws -> Booking
    /// Cancels a booking that is still `booked`.
    func cancelBooking(id: BookingID, at: Date, by actor: ChangeActor?) async throws -> Booking
    func booking(id: BookingID) async throws -> Booking?
    /// Bookings overlapping the query's range, by start time.
    func bookings(_ query: BookingQuery, page: PageRequest) async throws -> Page<Booking>

    // MARK: Stocktakes
    /// Opens a stocktake of `scope`; fails with ``LendingError/stocktakeOpen(_:)`` while one is
    /// open (one at a time per database, also across daemons), ``LendingError/noSuchGroup(_:)``.
    func startStocktake(_ scope: StocktakeScope, at: Date, by actor: ChangeActor?) async throws -> Stocktake
    /// The open stocktake, if any.
    func openStocktake() async throws -> Stocktake?
    /// Records a tap during stocktake `id`: the tag's UID and the inventory device it names (nil:
    /// not in the inventory). Changes nothing about rentals. Fails with ``LendingError/stocktakeClosed(_:)``.
    func recordStocktakeTap(stocktake id: StocktakeID, uid: TagUID, deviceId: DeviceID?, at: Date,
                            location: String?) async throws -> StocktakeTapResult
    /// Closes stocktake `id` and stores its four lists by value, in one transaction.
    func closeStocktake(id: StocktakeID, at: Date, by actor: ChangeActor?) async throws -> StocktakeReport
    /// A stocktake with its report (no entries while it is open).
    func stocktakeReport(id: StocktakeID) async throws -> StocktakeReport?
    /// Stocktakes, newest first.
    func stocktakes(page: PageRequest) async throws -> Page<Stocktake>

    // MARK: Outbox
    // `lend`, `returnDevice`, `renew` and `claimOverdueAnnouncements` write one entry per event and
    // per route of the store's configuration in their own transaction (``OutboxEvent/inserts``);
    // with no routes they write none.
    /// The routes transactions write outbox entries for now.
    var outboxRoutes: [OutboxRoute] { get }
    /// Replaces the routes that later transactions write entries for (a reloaded configuration);
    /// a transaction already running keeps the routes it started with.
    func setOutboxRoutes(_ routes: [OutboxRoute])
    /// Pending entries due at `now` (``OutboxEntry/nextAttemptAt``), in order; an entry waits
    /// while an earlier pending entry of the same device and target exists (delivery in order per
    /// device). `targets` limits them to these targets (the configured ones: entries of a target
    /// removed from the configuration stay, and must not fill every batch); nil: every target.
    func pendingOutbox(limit: Int, now: Date, targets: [String]?) async throws -> [OutboxEntry]
    /// The target accepted the entry.
    func markDelivered(seq: Int64, at: Date) async throws
    /// An attempt failed with `error`; the entry is tried again at `next`.
    func markAttemptFailed(seq: Int64, next: Date, error: String) async throws
    /// Counts per target and state, ordered by target.
    func outboxCounts() async throws -> [OutboxCounts]
    /// Entries, newest first; `state` filters.
    func outboxEntries(state: OutboxState?, page: PageRequest) async throws -> Page<OutboxEntry>
    /// A pending or dropped entry is tried again at `now`. Fails with ``LendingError/noSuchOutboxEntry(_:)``,
    /// or ``LendingError/invalidField(_:reason:)`` when it was delivered.
    func retryOutbox(seq: Int64, now: Date) async throws
    /// A pending entry is dropped: never sent, and it no longer holds back the device's later
    /// entries. Fails with ``LendingError/noSuchOutboxEntry(_:)``, or
    /// ``LendingError/invalidField(_:reason:)`` when it was delivered.
    func dropOutbox(seq: Int64) async throws
    /// Deletes delivered and dropped entries older than `before`; returns how many.
    func pruneOutbox(before: Date) async throws -> Int
    /// Writes entries made outside a lending change (reminders, ``ReminderEvent``) in one
    /// transaction, except those whose event and target are in the outbox already; returns how
    /// many were new.
    func enqueueOutbox(_ entries: [OutboxEntry]) async throws -> Int
}

/// Reads a store can make synchronously, for a caller on a thread that may block, with the
/// threads to make them on (``InventoryStore/blockingReads``): a client's point lookup then
/// goes from the socket's event loop to the store's thread and back, and through no task.
public protocol BlockingInventoryReads: Sendable {
    /// Runs `work` on the store's read threads (never the cooperative pool or an event loop).
    func schedule(_ work: @escaping @Sendable () -> Void)
    /// ``InventoryStore/deviceDetail(id:)``, blocking; call it only from ``schedule(_:)``'s work.
    func deviceDetail(id: DeviceID) throws -> DeviceDetail?
}

extension InventoryStore {
    /// The store's synchronous reads, for a store whose reads are local and short (SQLite); nil
    /// (the default) where every read is a round trip to a server (PostgreSQL).
    public var blockingReads: (any BlockingInventoryReads)? { nil }

    /// ``deviceDetail(id:)`` as two reads side by side, for a store whose reads are independent
    /// round trips (PostgreSQL's connection pool); SQLite reads both in one transaction.
    public func deviceDetail(id: DeviceID) async throws -> DeviceDetail? {
        async let tags = tagBindings(deviceId: id)
        guard let record = try await device(id: id) else { return nil }
        return DeviceDetail(record: record, tags: try await tags)
    }

    /// ``addDevice(_:at:by:)`` with no actor known.
    public func addDevice(_ device: Device, at: Date) async throws { try await addDevice(device, at: at, by: nil) }

    /// ``updateDevice(_:at:by:)`` with no actor known.
    @discardableResult
    public func updateDevice(_ device: Device, at: Date) async throws -> [DeviceLogEntry] {
        try await updateDevice(device, at: at, by: nil)
    }

    /// ``deleteUser(id:at:by:)`` now, with no actor known.
    public func deleteUser(id: UserID) async throws { try await deleteUser(id: id, at: Date(), by: nil) }

    /// ``deleteDevice(id:at:by:)`` with no actor known.
    public func deleteDevice(id: DeviceID, at: Date) async throws { try await deleteDevice(id: id, at: at, by: nil) }

    /// ``unbindTag(uid:by:)`` with no actor known.
    public func unbindTag(uid: TagUID) async throws { try await unbindTag(uid: uid, by: nil) }

    /// ``registerTag(uid:deviceId:at:by:)`` with no actor known.
    public func registerTag(uid: TagUID, deviceId: DeviceID, at: Date) async throws {
        try await registerTag(uid: uid, deviceId: deviceId, at: at, by: nil)
    }

    /// ``pendingOutbox(limit:now:targets:)`` of every target.
    public func pendingOutbox(limit: Int, now: Date) async throws -> [OutboxEntry] {
        try await pendingOutbox(limit: limit, now: now, targets: nil)
    }

    /// Every rental matching `query`, fetched page by page (for exports).
    public func allHistory(_ query: HistoryQuery, pageSize: Int = PageRequest.maximumLimit) async throws -> [Rental] {
        var result: [Rental] = []
        var request = PageRequest(limit: pageSize)
        while true {
            let page = try await history(query, page: request)
            result += page.items
            guard let next = page.nextCursor else { return result }
            request.cursor = next
        }
    }
}
