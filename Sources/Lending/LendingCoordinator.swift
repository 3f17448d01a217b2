#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RoomBridgeCore

/// The lending state machine: the one path every lending action takes — a tap at a reader or a
/// client's request — so that the store, the arm session and `SystemState` (and so every
/// `Watch` client) agree.
///
/// It holds the arm session, identifies taps (device-tag.md order), decides with
/// ``LendingRules``, performs the resulting store operation, publishes each outcome as a
/// `lending` event, mirrors the session into `SystemState`, and ends the session with a
/// `disarmed` event when it times out.
public actor LendingCoordinator {
    public nonisolated let store: any InventoryStore
    let state: SystemState
    /// The rules' tunables.
    public private(set) var policy: LendingPolicy
    /// The reader/kiosk name recorded on rentals.
    public private(set) var location: String?
    let clock: any LendingClock
    private var armed: LendingArm?
    /// The last lend or return per device, within the repeat window (double taps).
    private var recent: [DeviceID: RecentChange] = [:]
    private var expiry: Task<Void, Never>?
    /// Overdue announcements (see LendingCoordinator+Overdue.swift): on once started, and the
    /// check scheduled for the next due date.
    var watchingOverdue = false
    var overdueTimer: Task<Void, Never>?

    /// - Parameter clock: the time and the timers' waits (injected for tests).
    public init(store: any InventoryStore, state: SystemState, policy: LendingPolicy = LendingPolicy(),
                location: String? = nil, clock: any LendingClock = SystemLendingClock()) {
        self.store = store
        self.state = state
        self.policy = policy
        self.location = location
        self.clock = clock
    }

    /// - Parameter now: the time (for tests that set it); the timers wait in real time.
    public init(store: any InventoryStore, state: SystemState, policy: LendingPolicy = LendingPolicy(),
                location: String? = nil, now: @escaping @Sendable () -> Date) {
        self.init(store: store, state: state, policy: policy, location: location, clock: SystemLendingClock(read: now))
    }

    /// The time now, on the injected clock.
    func now() -> Date { clock.now() }

    /// New lending settings (a configuration reload), used from the next action on; the armed
    /// session keeps its expiry.
    public func reconfigure(policy: LendingPolicy, location: String?) {
        self.policy = policy
        self.location = location
    }

    /// The active session, if any (an expired session is dropped).
    public func session() -> LendingArm? {
        if let a = armed, !a.isActive(at: now()) { armed = nil }
        return armed
    }

    /// A tap at a reader: identifies it (device record, UID binding, badge), applies the rules,
    /// records the lend or return, and publishes the outcome. Store failures become
    /// ``TapOutcome/failed(reason:)``.
    @discardableResult
    public func handle(_ tap: Tap) async -> TapOutcome {
        let outcome = await decideAndRecord(tap)
        await publish(outcome, uid: tap.uid, reader: tap.reader)
        return outcome
    }

    /// Arms lending for a user from a client (as a badge tap would), replacing any session.
    /// - Throws: ``LendingError/noSuchUser(_:)``.
    @discardableResult
    public func arm(userId: UserID) async throws -> LendingArm {
        guard let user = try await store.user(id: userId) else { throw LendingError.noSuchUser(userId) }
        let previous = session()
        let new = LendingRules.arm(user, now: now(), policy: policy)
        armed = new
        await publish(.armed(new, replacing: previous), uid: nil, reader: nil)
        return new
    }

    /// Ends the lend session.
    @discardableResult
    public func disarm() async -> TapOutcome {
        let outcome = TapOutcome.disarmed(session()?.userId)
        armed = nil
        await publish(outcome, uid: nil, reader: nil)
        return outcome
    }

    /// Lends a device by ID (devices without a tag), with the default loan period unless `dueAt`
    /// is given; `actor` is who asks (a client's Unix user, or the person signed in to the web).
    public func lend(deviceId: DeviceID, userId: UserID, dueAt: Date? = nil, by actor: ChangeActor? = nil) async throws -> Rental {
        let t = now()
        let request = LendRequest(deviceId: deviceId, userId: userId, at: t, dueAt: dueAt ?? policy.dueDate(for: t),
                                  location: location, lentBy: actor, maxActivePerUser: policy.maxActivePerUser,
                                  bookingGuard: policy.bookingGuard)
        let rental = try await store.lend(request)
        remember(rental, .lent)
        await refreshOverdue()
        await publish(await lentOutcome(rental, requested: request), uid: nil, reader: nil)
        return rental
    }

    /// Returns a device by ID; `returnedBy` is who brought it back (a user a client names, else
    /// the client itself); `note` describes its condition, and `markBroken` sets its status to
    /// broken in the same transaction.
    public func returnDevice(deviceId: DeviceID, returnedBy: ChangeActor? = nil, note: String? = nil,
                             markBroken: Bool = false) async throws -> Rental {
        let rental = try await store.returnDevice(ReturnRequest(deviceId: deviceId, at: now(), returnedBy: returnedBy,
                                                                location: location, note: note, markBroken: markBroken))
        remember(rental, .returned)
        await refreshOverdue()
        await publish(.returned(deviceId: rental.deviceId, model: rental.model, borrowerId: rental.userId,
                                borrowerName: rental.userName, returnedBy: rental.returnedBy), uid: nil, reader: nil)
        return rental
    }

    /// Renews the device's active rental until `dueAt`: the rental goes on (no return, no new
    /// lend); the device log records the new due date and who renewed it.
    public func renew(deviceId: DeviceID, dueAt: Date, by actor: ChangeActor? = nil) async throws -> Rental {
        let rental = try await store.renew(deviceId: deviceId, dueAt: dueAt, at: now(), by: actor)
        await refreshOverdue()
        return rental
    }

    // MARK: Bookings

    /// Books a device for a user from `startsAt` to `endsAt` (see ``InventoryStore/book(_:)``) and
    /// announces it as a `booking` event.
    public func book(deviceId: DeviceID, userId: UserID, startsAt: Date, endsAt: Date, by actor: ChangeActor?) async throws -> Booking {
        let booking = try await store.book(BookingRequest(deviceId: deviceId, userId: userId, startsAt: startsAt, endsAt: endsAt,
                                                          at: now(), by: actor))
        await state.recordBooking(booking.notice(.booked))
        return booking
    }

    /// Cancels a booking and announces it.
    public func cancelBooking(id: BookingID, by actor: ChangeActor?) async throws -> Booking {
        let booking = try await store.cancelBooking(id: id, at: now(), by: actor)
        await state.recordBooking(booking.notice(.cancelled))
        return booking
    }

    // MARK: Stocktakes

    /// Opens a stocktake of `scope`: from now on device taps (here and at every kiosk on the
    /// database) count devices and lend nothing, until it is closed.
    public func startStocktake(_ scope: StocktakeScope, by actor: ChangeActor?) async throws -> Stocktake {
        let stocktake = try await store.startStocktake(scope, at: now(), by: actor)
        await mirror(stocktake)
        return stocktake
    }

    /// Closes the open stocktake (or `id`) and returns its report.
    public func closeStocktake(id: StocktakeID?, by actor: ChangeActor?) async throws -> StocktakeReport {
        var open = id
        if open == nil { open = try await store.openStocktake()?.id }
        guard let id = open else {
            throw LendingError.invalidField("id", reason: "no stocktake is open; start one with roombridgectl stocktake start")
        }
        let report = try await store.closeStocktake(id: id, at: now(), by: actor)
        await mirror(nil)
        return report
    }

    /// Reads the open stocktake into `SystemState` (one started or closed at another kiosk).
    public func refreshStocktake() async throws {
        await mirror(try await store.openStocktake())
    }

    private func mirror(_ stocktake: Stocktake?) async {
        await state.setStocktake(stocktake?.status) { change, status in
            let scope = StocktakeScope(kind: status.scope, value: status.scopeValue)?.description ?? status.scope
            return change == .started
                ? "Stocktake \(status.id) of \(scope) started: tap devices to count them; lending waits until it is closed."
                : "Stocktake \(status.id) of \(scope) closed: \(status.counted) counted, \(status.unexpected) unexpected."
        }
    }

    /// A tap during a stocktake: a device is counted, a tag not in the inventory noted as unexpected,
    /// a badge arms nobody. Rentals are not touched.
    private func count(_ tap: Tap, _ identity: TapIdentity, in stocktake: Stocktake) async -> TapOutcome {
        let uid = tap.uid
        let outcome: TapOutcome
        do {
            switch identity {
            case .badge:
                return .stocktakeRunning
            case .device(let record):
                let result = try await store.recordStocktakeTap(stocktake: stocktake.id, uid: uid, deviceId: record.device.id,
                                                                at: now(), location: location)
                outcome = .counted(deviceId: record.device.id, model: record.device.model, again: result == .counted(again: true))
            case .unknownTag, .unknownDevice, .unregisteredTag:
                _ = try await store.recordStocktakeTap(stocktake: stocktake.id, uid: uid, deviceId: nil, at: now(), location: location)
                outcome = .unexpected(uid: uid, deviceId: tap.device?.deviceId)
            }
            try await refreshStocktake()
        } catch {
            return .failed(reason: "\(error)")
        }
        return outcome
    }

    // MARK: Taps

    private func decideAndRecord(_ tap: Tap) async -> TapOutcome {
        let identity: TapIdentity
        let stocktake: Stocktake?
        do {
            identity = try await identify(tap)
            // Asked at every tap: a stocktake started at another kiosk on the database counts here too.
            stocktake = try await store.openStocktake()
        } catch {
            return .failed(reason: "\(error)")
        }
        await mirror(stocktake)
        if let stocktake { return await count(tap, identity, in: stocktake) }
        var recentChange: RecentChange?
        if case .device(let record) = identity { recentChange = recent[record.device.id] }
        var decision = LendingRules.decide(identity, session: session(), now: now(), policy: policy, location: location,
                                           recent: recentChange)
        do {
            switch decision.operation {
            case .lend(let request):
                let rental = try await store.lend(request)
                remember(rental, .lent)
                await refreshOverdue()
                decision.outcome = await lentOutcome(rental, requested: request)
            case .returnDevice(let request):
                let rental = try await store.returnDevice(request)
                remember(rental, .returned)
                await refreshOverdue()
            case nil:
                break
            }
        } catch LendingError.limitReached(let userId, let userName, let limit, let devices) {
            guard case .device(let record) = identity else { return .failed(reason: "limit reached") }
            return .limitReached(deviceId: record.device.id, model: record.device.model, userId: userId,
                                 userName: userName, limit: limit, deviceIds: devices)
        } catch LendingError.booked(let deviceId, let bookerId, let bookerName, let startsAt) {
            guard case .device(let record) = identity else { return .failed(reason: "booked") }
            return .booked(deviceId: deviceId, model: record.device.model, bookerId: bookerId, bookerName: bookerName,
                           startsAt: startsAt)
        } catch {
            return .failed(reason: "\(error)")
        }
        // Only a badge changes the session; otherwise keep whatever is current now (a client
        // may have armed or disarmed while the store was working).
        if case .armed = decision.outcome { armed = decision.session }
        return decision.outcome
    }

    /// The `lent` outcome of a rental the store made from `requested`. A due date other than the
    /// one asked for was set by a booking: the next person's start (said, so the borrower knows
    /// why), or the end of the borrower's own booking, which the lend fulfilled.
    private func lentOutcome(_ rental: Rental, requested: LendRequest) async -> TapOutcome {
        var bookedFrom: Date?
        if let due = rental.dueAt, due != requested.dueAt.map(StoreConventions.stored),
           let next = try? await store.bookings(BookingQuery(deviceId: rental.deviceId, from: due), page: PageRequest(limit: 1)).items.first,
           next.startsAt == due, next.userId != rental.userId {
            bookedFrom = next.startsAt
        }
        return .lent(deviceId: rental.deviceId, model: rental.model, userId: rental.userId, userName: rental.userName,
                     dueAt: rental.dueAt, bookedFrom: bookedFrom)
    }

    /// Remembers a lend or return for the repeat window, forgetting those older than it.
    private func remember(_ rental: Rental, _ kind: RecentChange.Kind) {
        let t = now()
        recent = recent.filter { t.timeIntervalSince($0.value.at) < policy.repeatWindow }
        recent[rental.deviceId] = RecentChange(deviceId: rental.deviceId, kind: kind, userName: rental.userName, at: t)
    }

    private func identify(_ tap: Tap) async throws -> TapIdentity {
        // Both lookups always: a device record alone proves nothing (see TapIdentification).
        var deviceOnTag: DeviceRecord?
        if let id = tap.device?.deviceId { deviceOnTag = try await store.device(id: id) }
        let binding = try await store.resolve(uid: tap.uid)
        return TapIdentification.identify(tap, deviceOnTag: deviceOnTag, uidBinding: binding)
    }

    // MARK: Publishing

    private func publish(_ outcome: TapOutcome, uid: TagUID?, reader: String?) async {
        await state.recordLending(outcome.published(uid: uid, reader: reader, at: now()))
        await mirrorSession()
    }

    /// Copies the session into `SystemState` and schedules its expiry.
    private func mirrorSession() async {
        let current = session()
        await state.setArm(current)
        expiry?.cancel()
        expiry = nil
        guard let current else { return }
        let clock = self.clock
        expiry = Task { [weak self] in
            guard (try? await clock.sleep(until: current.expiresAt)) != nil, !Task.isCancelled else { return }
            await self?.expire(current)
        }
    }

    private func expire(_ ended: LendingArm) async {
        guard session() == nil else { return }  // renewed or replaced meanwhile
        await state.setArm(nil)
        await state.recordLending(LendingOutcome(kind: .disarmed, userId: ended.userId, userName: ended.userName,
                                                 message: "The lending session of \(ended.userName) timed out; tap a badge to lend again.",
                                                 at: now()))
        expiry = nil
    }
}

extension TapOutcome {
    /// The outcome as `SystemState` and its clients see it.
    public func published(uid: TagUID?, reader: String?, at: Date) -> LendingOutcome {
        var o = LendingOutcome(kind: .failed, uid: uid, reader: reader, message: message, at: at)
        switch self {
        case .armed(let session, _):
            o.kind = .armed; o.userId = session.userId; o.userName = session.userName
        case .disarmed(let user):
            o.kind = .disarmed; o.userId = user
        case .lent(let deviceId, let model, let userId, let userName, let dueAt, let bookedFrom):
            o.kind = .lent; o.deviceId = deviceId; o.model = model; o.dueAt = dueAt; o.userId = userId; o.userName = userName
            o.bookedFrom = bookedFrom
        case .booked(let deviceId, let model, let bookerId, let bookerName, let startsAt):
            o.refuse(.booked); o.deviceId = deviceId; o.model = model; o.bookedFrom = startsAt
            o.bookedFor = bookerName; o.userId = bookerId
        case .returned(let deviceId, let model, let borrowerId, let borrowerName, _):
            o.kind = .returned; o.deviceId = deviceId; o.model = model; o.userId = borrowerId; o.userName = borrowerName
        case .badgeRequired(let deviceId, let model):
            o.kind = .badgeRequired; o.deviceId = deviceId; o.model = model
        case .refused(let deviceId, let model, let status):
            o.refuse(status == .broken ? .deviceBroken : .deviceDisposed); o.deviceId = deviceId; o.model = model
        case .unknownDevice(let deviceId, let tagUID):
            o.kind = .unknownDevice; o.deviceId = deviceId; o.uid = tagUID
        case .unknownTag(let tagUID):
            o.kind = .unknownTag; o.uid = tagUID
        case .repeated(let deviceId, let model, let change, let userName):
            o.refuse(change == .lent ? .alreadyLent : .alreadyReturned); o.deviceId = deviceId; o.model = model; o.userName = userName
        case .limitReached(let deviceId, let model, let userId, let userName, _, _):
            o.refuse(.limitReached); o.deviceId = deviceId; o.model = model; o.userId = userId; o.userName = userName
        case .unregisteredTag(let deviceId, let model, let tagUID, _):
            o.refuse(.unregisteredTag); o.deviceId = deviceId; o.model = model; o.uid = tagUID
        case .counted(let deviceId, let model, let again):
            o.kind = .counted; o.deviceId = deviceId; o.model = model; o.reason = again ? "again" : nil
        case .unexpected(let tagUID, let deviceId):
            o.kind = .unexpected; o.uid = tagUID; o.deviceId = deviceId
        case .stocktakeRunning:
            o.refuse(.stocktake)
        case .failed(let reason):
            o.kind = .failed; o.reason = reason
        }
        return o
    }
}

extension LendingOutcome {
    /// Kind `refused` for `refusal`; `reason` repeats its name for clients older than `refusal` (until the next release).
    mutating func refuse(_ refusal: Refusal) {
        kind = .refused
        self.refusal = refusal
        reason = refusal.rawValue
    }
}

extension Booking {
    /// The booking as a `booking` event announces it.
    public func notice(_ change: BookingNotice.Change) -> BookingNotice {
        let span = "\(LendingFormat.iso8601(startsAt)) to \(LendingFormat.iso8601(endsAt))"
        let message = change == .booked
            ? "\(model) (\(deviceId)) booked for \(userName) from \(span)."
            : "The booking of \(model) (\(deviceId)) for \(userName) from \(span) was cancelled."
        return BookingNotice(change: change, bookingId: id, deviceId: deviceId, model: model, userId: userId, userName: userName,
                             startsAt: startsAt, endsAt: endsAt, by: change == .booked ? bookedBy : cancelledBy, message: message)
    }
}

extension Stocktake {
    /// The stocktake as `SystemState` shows it.
    public var status: StocktakeStatus {
        StocktakeStatus(id: id, scope: scope.kind, scopeValue: scope.value, startedAt: startedAt, counted: counted,
                        unexpected: unexpected)
    }
}
