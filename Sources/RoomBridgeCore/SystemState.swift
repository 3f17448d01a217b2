#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Everything the daemon knows, at one instant.
public struct StateSnapshot: Sendable, Codable, Equatable {
    /// The sequence number of the last event this snapshot includes (0 before any event).
    public var seq: UInt64
    public var startedAt: Date
    /// The kiosk's time zone (a tz database name such as `Asia/Tokyo`): the zone people read
    /// times and days in. Times themselves are UTC.
    public var timeZone: String
    /// Every configured reader, in configuration order.
    public var readers: [ReaderStatus]
    /// The most recent tap on any reader.
    public var lastTap: Tap?
    /// The current or last tag write request.
    public var tagWrite: TagWriteStatus?
    /// The curtain, for clients that know one: the only configured curtain, or with several the first by name
    /// (`connection: disabled` when none is configured). `curtains` has them all.
    public var curtain: CurtainState
    /// Every configured curtain, sorted by name (`id`); empty when the curtain side is off.
    public var curtains: [CurtainState] = []
    public var lending: LendingState
    public var counters: Counters
    /// Who or what is in the room (iBeacon regions); `.disabled` when no region is configured.
    public var presence: PresenceState = PresenceState()
    /// The lending database: which backend, and since when it does not answer (PostgreSQL).
    public var database: DatabaseState = DatabaseState()

    public init(seq: UInt64 = 0, startedAt: Date, timeZone: String = "UTC", readers: [ReaderStatus] = [], lastTap: Tap? = nil,
                tagWrite: TagWriteStatus? = nil, curtain: CurtainState = CurtainState(connection: .disabled),
                curtains: [CurtainState] = [], lending: LendingState = LendingState(), counters: Counters = Counters(),
                presence: PresenceState = PresenceState(), database: DatabaseState = DatabaseState()) {
        self.seq = seq
        self.startedAt = startedAt
        self.timeZone = timeZone
        self.readers = readers
        self.lastTap = lastTap
        self.tagWrite = tagWrite
        self.curtain = curtain
        self.curtains = curtains
        self.lending = lending
        self.counters = counters
        self.presence = presence
        self.database = database
    }

    /// The lending side of the state.
    public struct LendingState: Sendable, Codable, Equatable {
        /// The armed lend session, if one is active.
        public var armed: LendingArm?
        /// Seconds until `armed` expires, at the snapshot's instant.
        public var remainingSeconds: Double?
        /// The most recent lending outcome.
        public var lastOutcome: LendingOutcome?
        /// How many active rentals are past their due date; nil until the lending store was
        /// first asked.
        public var overdue: Int? = nil
        /// The open stocktake, while one is: the kiosk is in stocktake mode (taps count devices).
        public var stocktake: StocktakeStatus? = nil

        public init(armed: LendingArm? = nil, remainingSeconds: Double? = nil, lastOutcome: LendingOutcome? = nil, overdue: Int? = nil,
                    stocktake: StocktakeStatus? = nil) {
            self.stocktake = stocktake
            self.armed = armed
            self.remainingSeconds = remainingSeconds
            self.lastOutcome = lastOutcome
            self.overdue = overdue
        }
    }

    /// Counters since the daemon started.
    public struct Counters: Sendable, Codable, Equatable {
        public var events: UInt64 = 0
        public var taps: UInt64 = 0
        public var removals: UInt64 = 0
        public var lent: UInt64 = 0
        public var returned: UInt64 = 0
        public var refused: UInt64 = 0
        public var curtainRequests: UInt64 = 0
        /// Subscribers (Watch clients) right now.
        public var subscribers: UInt64 = 0
        /// Subscribers dropped because they fell behind.
        public var subscribersDropped: UInt64 = 0
        public init() {}
    }
}

/// Why a subscription ended with an error.
public enum SubscriptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The subscriber did not keep up: more than `bufferLimit` events were waiting for it.
    case tooSlow(bufferLimit: Int)
    /// The daemon is shutting down.
    case shuttingDown

    public var description: String {
        switch self {
        case .tooSlow(let n):
            "the subscriber fell more than \(n) events behind and was dropped; read events as they come and resubscribe"
        case .shuttingDown:
            "roombridged is shutting down"
        }
    }
}

/// A subscriber's view: the state at subscription time, then every later event, with no gap.
public struct Subscription: Sendable {
    /// The state including every event up to `snapshot.seq`.
    public let snapshot: StateSnapshot
    /// Set when the subscriber asked to resume after a `seq` and the replay ring still held every
    /// later event: `events` then starts with the event after `resumedAfter` (the replayed ones
    /// first), not after `snapshot.seq`. Nil: `events` starts after `snapshot.seq`.
    public let resumedAfter: UInt64?
    /// Every event after `snapshot.seq`, in order. Ends with `SubscriptionError.tooSlow` when the
    /// subscriber falls more than its buffer behind, or `.shuttingDown`.
    public let events: AsyncThrowingStream<Event, any Error>
}

/// A subscriber that the state feeds on its own executor, for a transport that queues each
/// event without suspending (``SystemState/subscribe(since:counted:receiver:)``): no task waits
/// per subscriber, so an event reaches many of them in one pass.
public struct EventReceiver: Sendable {
    /// What ``receive`` did with an event.
    public enum Delivery: Sendable, Hashable {
        case accepted
        /// The subscriber has `bufferLimit` events waiting: the state drops it and calls ``end``.
        case tooSlow
        /// The subscriber is gone: the state forgets it without calling ``end``.
        case gone
    }

    /// Takes the next event, in order; called on the actor, so it must not block.
    public let receive: @Sendable (Event) -> Delivery
    /// Called after every receiver has taken an event (or the replayed ones), so that a
    /// transport can send what it queued for many subscribers in one pass.
    public let flush: @Sendable () -> Void
    /// Called once when the state ends the subscription (too slow, or shutting down).
    public let end: @Sendable (SubscriptionError) -> Void

    public init(receive: @escaping @Sendable (Event) -> Delivery, flush: @escaping @Sendable () -> Void,
                end: @escaping @Sendable (SubscriptionError) -> Void) {
        self.receive = receive
        self.flush = flush
        self.end = end
    }
}

/// What ``SystemState/subscribe(since:counted:receiver:)`` starts from.
public struct ReceiverSubscription: Sendable {
    /// As ``Subscription/snapshot``.
    public let snapshot: StateSnapshot
    /// As ``Subscription/resumedAfter``; the replayed events were passed to the receiver.
    public let resumedAfter: UInt64?
    /// Events the receiver may hold unsent before it answers `.tooSlow` (the buffer limit, plus
    /// the replayed events).
    public let bufferLimit: Int
    /// For ``SystemState/unsubscribe(_:)``.
    public let id: UInt64
}

/// The one place that holds the daemon's state.
///
/// Adapters (NFC readers, the curtain client, the lending service) report changes through its
/// methods; each change becomes an ``Event`` with the next sequence number and is fanned out to
/// every subscriber. A subscriber has a bounded buffer: one that falls behind is dropped with
/// ``SubscriptionError/tooSlow(bufferLimit:)``; the actor never waits for a subscriber.
/// The latest `replayLimit` events are kept in a ring, so that a subscriber that reconnects can
/// resume after the last event it saw (``subscribe(since:bufferLimit:counted:)``).
public actor SystemState {
    private let now: @Sendable () -> Date
    private let defaultBufferLimit: Int
    /// The latest events, oldest first, at most `replayLimit` of them.
    private var recent: EventRing
    private var seq: UInt64 = 0
    private let startedAt: Date
    private let timeZone: String
    private var readerOrder: [String] = []
    private var readers: [String: ReaderStatus] = [:]
    private var lastTap: Tap?
    private var tagWrite: TagWriteStatus?
    /// The configured curtains, in order (sorted by name); each one's `id` is set.
    private var curtains: [CurtainState] = []
    /// The curtain groups, sorted by name (``declareCurtainGroups(_:)``).
    private var groups: [CurtainGroup] = []
    /// The curtains as requests left them whose `curtain` event is still to come (``announceCurtainRequests()``).
    private var unannounced: [CurtainState] = []
    private var arm: LendingArm?
    private var lastOutcome: LendingOutcome?
    private var overdueCount: Int?
    private var stocktake: StocktakeStatus?
    private var counters = StateSnapshot.Counters()
    private var presence = PresenceState()
    private var database = DatabaseState()
    /// Today's curtain positions and presence stays, for ``timeline()``.
    private var day: TimelineRecorder
    private enum Sink {
        case stream(AsyncThrowingStream<Event, any Error>.Continuation)
        case receiver(EventReceiver)

        func end(_ error: SubscriptionError) {
            switch self {
            case .stream(let continuation): continuation.finish(throwing: error)
            case .receiver(let receiver): receiver.end(error)
            }
        }
    }
    /// A reference, so that the fan-out loop copies a pointer per subscriber rather than a tuple
    /// of closures (perf showed those copies going through generic value witnesses).
    private final class Subscriber {
        let sink: Sink
        let limit: Int
        let counted: Bool

        init(_ sink: Sink, limit: Int, counted: Bool) {
            self.sink = sink
            self.limit = limit
            self.counted = counted
        }
    }
    private var subscribers: [UInt64: Subscriber] = [:]
    private var countedSubscribers: UInt64 = 0
    private var nextSubscriberID: UInt64 = 0
    private var closed = false
    /// The state as of the last change, readable without waiting for the actor.
    private let published: Mutex<Published>

    /// What ``latestSnapshot()`` reads: the snapshot without the time-dependent arm fields.
    private struct Published: Sendable {
        var revision: UInt64
        var base: StateSnapshot
        var arm: LendingArm?
    }

    /// The state as of its last change, with a number that changes whenever it does.
    public struct Versioned: Sendable {
        /// Increases with every change of the state (events, subscriber counts, the arm).
        public let revision: UInt64
        public let snapshot: StateSnapshot
        /// `true` while a lend session is armed: `snapshot.lending.remainingSeconds` then
        /// changes with time alone, so the snapshot must not be reused.
        public let timeDependent: Bool
    }

    /// - Parameters:
    ///   - bufferLimit: events a subscriber may fall behind before it is dropped.
    ///   - replayLimit: the latest events kept for subscribers that resume after a `seq`.
    ///   - timeZone: the kiosk's time zone, as the state reports it.
    ///   - now: the wall clock (injected in tests).
    ///   - curtain: the state of one curtain (named by its `id`, else `curtain`); `.disabled` means no curtain
    ///     is configured. ``declareCurtains(_:)`` replaces it with the configured list.
    public init(bufferLimit: Int = 1024, replayLimit: Int = 1024, curtain: CurtainState = CurtainState(),
                timeZone: String = "UTC", now: @escaping @Sendable () -> Date = { Date() }) {
        // Invariants of the caller: the daemon passes state.subscriber_buffer and state.replay_buffer, which
        // the configuration accepts only when positive (ConfigKeys.swift).
        precondition(bufferLimit > 0, "bufferLimit must be positive")
        precondition(replayLimit > 0, "replayLimit must be positive")
        self.now = now
        self.recent = EventRing(capacity: replayLimit)
        var named = curtain
        named.id = curtain.id ?? "curtain"
        self.curtains = curtain.connection == .disabled ? [] : [named]
        self.defaultBufferLimit = bufferLimit
        let started = now()
        self.startedAt = started
        self.timeZone = timeZone
        self.day = TimelineRecorder(timeZone: timeZone, startedAt: started)
        self.published = Mutex(Published(revision: 0, base: StateSnapshot(
            seq: 0, startedAt: started, timeZone: timeZone, readers: [], lastTap: nil, tagWrite: nil,
            curtain: Self.primary(of: curtains), curtains: curtains, lending: .init(armed: nil, remainingSeconds: nil, lastOutcome: nil), counters: StateSnapshot.Counters()), arm: nil))
    }

    // MARK: Reading

    /// The whole state now.
    public func snapshot() -> StateSnapshot {
        Self.withArm(baseSnapshot(), arm, at: now())
    }

    /// The state as of its last change, read without waiting for the actor (for readers on
    /// a hot path, e.g. `GetState`); the same as ``snapshot()`` once the actor has finished
    /// the change it is making.
    public nonisolated func latestSnapshot() -> Versioned {
        let p = published.withLock { $0 }
        guard p.arm != nil else { return Versioned(revision: p.revision, snapshot: p.base, timeDependent: false) }
        return Versioned(revision: p.revision, snapshot: Self.withArm(p.base, p.arm, at: now()), timeDependent: true)
    }

    /// The snapshot without the arm (its fields depend on the time of reading).
    private func baseSnapshot() -> StateSnapshot {
        StateSnapshot(
            seq: seq, startedAt: startedAt, timeZone: timeZone,
            readers: readerOrder.compactMap { readers[$0] },
            lastTap: lastTap, tagWrite: tagWrite, curtain: Self.primary(of: curtains), curtains: curtains,
            lending: .init(armed: nil, remainingSeconds: nil, lastOutcome: lastOutcome, overdue: overdueCount, stocktake: stocktake),
            counters: counters, presence: presence, database: database)
    }

    private static func withArm(_ base: StateSnapshot, _ arm: LendingArm?, at t: Date) -> StateSnapshot {
        var s = base
        guard let a = arm, a.expiresAt > t else { return s }
        s.lending.armed = a
        s.lending.remainingSeconds = max(0, a.expiresAt.timeIntervalSince(t))
        return s
    }

    /// Makes the current state what ``latestSnapshot()`` returns; every change ends with it.
    private func publish() {
        let base = baseSnapshot()
        let arm = self.arm
        published.withLock { p in
            p.revision += 1
            p.base = base
            p.arm = arm
        }
    }

    /// The curtain clients that know one see (``StateSnapshot/curtain``).
    public func curtainState() -> CurtainState { Self.primary(of: curtains) }

    /// The curtain named `id`, or nil when no such curtain is configured.
    public func curtainState(_ id: String) -> CurtainState? { curtains.first { $0.id == id } }

    /// The configured curtains' names, in order.
    public func curtainIDs() -> [String] { curtains.compactMap(\.id) }

    /// The curtain groups of the configuration (`[curtain.groups]`), sorted by name.
    public func curtainGroups() -> [CurtainGroup] { groups }

    /// ``curtainIDs()`` and ``curtainGroups()`` in one visit to the actor: what a curtain command's name can mean.
    public func curtainNames() -> (curtains: [String], groups: [CurtainGroup]) { (curtainIDs(), groups) }

    /// Sets the curtain groups (at start and on a reload).
    public func declareCurtainGroups(_ groups: [CurtainGroup]) { self.groups = groups.sorted { $0.name < $1.name } }

    private static func primary(of curtains: [CurtainState]) -> CurtainState {
        curtains.first ?? CurtainState(connection: .disabled)
    }

    /// The armed lend session, if it has not expired.
    public func currentArm() -> LendingArm? {
        guard let a = arm, a.expiresAt > now() else { return nil }
        return a
    }

    /// The last event's sequence number. Cheap; the watchdog uses it to check that the actor answers.
    public func ping() -> UInt64 { seq }

    /// Subscribes to every change from now on, or from just after `since`.
    /// - Parameters:
    ///   - since: the `seq` of the last event the subscriber has seen. When the replay ring
    ///     still holds every event after it, the subscription resumes there (`resumedAfter` is
    ///     set and the missed events come first); when it does not (`since` is older than the
    ///     ring, or newer than the latest event, as after a restart), the subscription starts
    ///     from the snapshot, as without `since`.
    ///   - bufferLimit: overrides the default buffer limit for this subscriber (replayed events
    ///     do not count against it).
    ///   - counted: whether the subscriber counts in `counters.subscribers` (clients do; the
    ///     daemon's own listeners, such as the systemd status line, do not).
    public func subscribe(since: UInt64? = nil, bufferLimit: Int? = nil, counted: Bool = true) -> Subscription {
        let limit = max(1, bufferLimit ?? defaultBufferLimit)
        let replay = since.flatMap { recent.events(after: $0, latest: seq) }
        let (stream, continuation) = AsyncThrowingStream<Event, any Error>.makeStream(
            bufferingPolicy: .bufferingOldest(limit + (replay?.count ?? 0)))
        let snap = snapshot()
        let resumedAfter = replay == nil ? nil : since
        for event in replay ?? [] { continuation.yield(event) }
        if closed {
            continuation.finish(throwing: SubscriptionError.shuttingDown)
            return Subscription(snapshot: snap, resumedAfter: resumedAfter, events: stream)
        }
        nextSubscriberID += 1
        let id = nextSubscriberID
        add(Subscriber(.stream(continuation), limit: limit, counted: counted), id)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.unsubscribe(id) }
        }
        return Subscription(snapshot: snap, resumedAfter: resumedAfter, events: stream)
    }

    /// Subscribes `receiver` to every change from now on, or from just after `since` (as
    /// ``subscribe(since:bufferLimit:counted:)``); the replayed events are passed to it before
    /// this returns. The receiver keeps its own buffer of at most the returned `bufferLimit`.
    /// End it with ``unsubscribe(_:)``.
    public func subscribe(since: UInt64? = nil, counted: Bool = true, receiver: EventReceiver) -> ReceiverSubscription {
        let replay = since.flatMap { recent.events(after: $0, latest: seq) }
        let limit = defaultBufferLimit + (replay?.count ?? 0)
        let snap = snapshot()
        let resumedAfter = replay == nil ? nil : since
        nextSubscriberID += 1
        let id = nextSubscriberID
        let subscription = ReceiverSubscription(snapshot: snap, resumedAfter: resumedAfter, bufferLimit: limit, id: id)
        defer { receiver.flush() }
        for event in replay ?? [] where receiver.receive(event) != .accepted { return subscription }
        if closed {
            receiver.end(.shuttingDown)
            return subscription
        }
        add(Subscriber(.receiver(receiver), limit: defaultBufferLimit, counted: counted), id)
        return subscription
    }

    /// Forgets a subscriber (nothing happens if it is already gone).
    public func unsubscribe(_ id: UInt64) {
        if remove(id) != nil { publish() }
    }

    private func add(_ subscriber: Subscriber, _ id: UInt64) {
        subscribers[id] = subscriber
        if subscriber.counted { countedSubscribers += 1 }
        counters.subscribers = countedSubscribers
        publish()
    }

    /// Removes a subscriber and updates the count (the caller publishes).
    private func remove(_ id: UInt64) -> Subscriber? {
        guard let subscriber = subscribers.removeValue(forKey: id) else { return nil }
        if subscriber.counted { countedSubscribers -= 1 }
        counters.subscribers = countedSubscribers
        return subscriber
    }

    /// Ends every subscription with ``SubscriptionError/shuttingDown``; later subscriptions end at once.
    public func shutdown() {
        closed = true
        let all = subscribers
        subscribers.removeAll()
        countedSubscribers = 0
        counters.subscribers = 0
        publish()
        for s in all.values { s.sink.end(.shuttingDown) }
    }

    // MARK: Changes reported by adapters

    /// Declares the configured readers, in order, as disconnected. Emits no event.
    public func declareReaders(_ names: [String]) {
        for name in names where readers[name] == nil {
            readerOrder.append(name)
            readers[name] = ReaderStatus(name: name, state: .disconnected, since: now())
        }
        publish()
    }

    /// Records a reader's new status; emits `reader` when state, connstring or error changed.
    public func updateReader(_ status: ReaderStatus) {
        if let old = readers[status.name] {
            guard old.state != status.state || old.connstring != status.connstring
                || old.lastError != status.lastError else { return }
        } else {
            readerOrder.append(status.name)
        }
        readers[status.name] = status
        emit(.reader(status))
    }

    /// Records a tap.
    public func recordTap(_ tap: Tap) {
        lastTap = tap
        counters.taps += 1
        emit(.tagArrived(tap))
    }

    /// Records a tag leaving the field.
    public func recordRemoval(_ removal: TagRemoval) {
        counters.removals += 1
        emit(.tagRemoved(removal))
    }

    /// Records a tag write request's progress.
    public func updateTagWrite(_ status: TagWriteStatus) {
        tagWrite = status
        emit(.tagWrite(status))
    }

    /// Sets the configured curtains (sorted by name): new ones start `searching`, kept ones keep their state, and
    /// each one no longer configured is reported once with `connection: disabled`, then dropped.
    public func declareCurtains(_ ids: [String]) {
        let old = curtains
        curtains = ids.sorted().map { id in old.first { $0.id == id } ?? CurtainState(id: id, connection: .searching) }
        for gone in old where !ids.contains(gone.id ?? "") {
            var removed = gone
            removed.connection = .disabled
            emit(.curtain(removed))
        }
        for added in curtains where !old.contains(where: { $0.id == added.id }) { emit(.curtain(added)) }
        publish()
    }

    /// Replaces a curtain's state (`new.id` names it; nil: the first); emits `curtain` when anything changed.
    /// A curtain that is not configured (any more) is left alone.
    public func updateCurtain(_ new: CurtainState) {
        let id = new.id ?? curtains.first?.id
        guard let index = curtains.firstIndex(where: { $0.id == id }) else { return }
        var named = new
        named.id = id
        guard named != curtains[index] else { return }
        curtains[index] = named
        // This event shows the request still to be announced for this curtain: it announces it.
        unannounced.removeAll { $0.id == id && $0.lastRequest == named.lastRequest }
        emit(.curtain(named))
    }

    /// Changes the curtain named `id` in place (nil: the first); emits `curtain` when anything changed.
    public func updateCurtain(_ id: String? = nil, _ change: @Sendable (inout CurtainState) -> Void) {
        guard var new = id == nil ? curtains.first : curtains.first(where: { $0.id == id }) else { return }
        change(&new)
        new.id = new.id ?? id
        updateCurtain(new)
    }

    /// Records a curtain request (what a person or client last asked of the curtain `id`, nil: the first) and
    /// counts it. Its `curtain` event follows as ``recordCurtainRequest(_:for:)-([String?])`` says.
    public func recordCurtainRequest(_ request: CurtainRequest, for id: String? = nil) {
        recordCurtainRequest(request, for: [id])
    }

    /// Records one request made of several curtains at once (a group command), counting each, in one visit to
    /// the actor. ``snapshot()`` shows it at once; the `curtain` event that shows it to watchers comes with
    /// ``announceCurtainRequests()``, which the curtain's controller calls once the curtain answered the command,
    /// or with the next event, whichever is first (the curtain's own next event carries the request: no second
    /// event of its own). So a watcher still sees the request before anything the curtain does after it, and the
    /// command does not wait for the event to be serialized for every watcher (about 0.1 ms on a small machine)
    /// before it writes to the curtain.
    public func recordCurtainRequest(_ request: CurtainRequest, for ids: [String?]) {
        guard !ids.isEmpty else { return }
        for id in ids {
            counters.curtainRequests += 1
            let named = id ?? curtains.first?.id
            guard let index = curtains.firstIndex(where: { $0.id == named }) else { continue }
            curtains[index].lastRequest = request
            unannounced.append(curtains[index])
        }
        publish()
    }

    /// Emits the `curtain` events of the requests recorded since (``recordCurtainRequest(_:for:)-([String?])``):
    /// each curtain as the request left it (one that a reload removed since then is left out).
    public func announceCurtainRequests() {
        guard !unannounced.isEmpty else { return }
        let states = unannounced
        unannounced = []
        for state in states where curtains.contains(where: { $0.id == state.id }) {
            emitNow(.curtain(state))
        }
    }

    /// The database's backend and availability changed (no event: GetState and the status line show it).
    public func updateDatabase(_ new: DatabaseState) {
        guard new != database else { return }
        database = new
        publish()
    }

    /// Today in the room: each configured curtain's position and each region's stays, from the kiosk's midnight
    /// (or the daemon's start) until now.
    public func timeline() -> Timeline {
        day.timeline(now: now(), timeZone: timeZone, curtainIDs: curtains.compactMap(\.id))
    }

    /// The current presence state.
    public func presenceState() -> PresenceState { presence }

    /// Replaces the presence state; emits `presence` with `change` when one is given (an entry, exit, proximity
    /// change or scanning status change), nothing otherwise (RSSI and distance updates).
    public func updatePresence(_ new: PresenceState, change: PresenceChangeEvent?) {
        presence = new
        if let change { emit(.presence(change)) } else { publish() }
    }

    /// Sets or clears the armed lend session. Emits nothing by itself; report the
    /// matching ``LendingOutcome`` (armed/disarmed) with ``recordLending(_:)``.
    public func setArm(_ newArm: LendingArm?) {
        arm = newArm
        publish()
    }

    /// Records a lending outcome and counts it.
    public func recordLending(_ outcome: LendingOutcome) {
        lastOutcome = outcome
        switch outcome.kind {
        case .lent: counters.lent += 1
        case .returned: counters.returned += 1
        case .refused, .badgeRequired, .failed: counters.refused += 1
        case .armed, .disarmed, .unknownTag, .unknownDevice, .counted, .unexpected: break
        }
        emit(.lending(outcome))
    }

    /// Reports what another kiosk sharing the database did (``LendingOutcome/origin`` set): Watch
    /// clients see it; this kiosk's last outcome (the feedback at its reader) and counters stay.
    public func recordRemoteLending(_ outcome: LendingOutcome) {
        emit(.lending(outcome))
    }

    /// The open stocktake (nil: none), as the lending store reports it. A stocktake that starts or
    /// ends (by its ID) is announced as a `stocktake` event; a changed count only changes the state.
    public func setStocktake(_ status: StocktakeStatus?, message: (StocktakeNotice.Change, StocktakeStatus) -> String) {
        guard status != stocktake else { return }
        let previous = stocktake
        stocktake = status
        if let previous, previous.id != status?.id {
            emit(.stocktake(StocktakeNotice(change: .closed, status: previous, message: message(.closed, previous))))
        }
        if let status, status.id != previous?.id {
            emit(.stocktake(StocktakeNotice(change: .started, status: status, message: message(.started, status))))
        }
        publish()
    }

    /// Sets how many active rentals are overdue. Emits nothing by itself: the change that moved
    /// it (a return, a renewal, an ``recordOverdue(_:)``) is the event.
    public func setOverdueCount(_ count: Int) {
        guard count != overdueCount else { return }
        overdueCount = count
        publish()
    }

    /// Announces a rental that passed its due time.
    public func recordOverdue(_ notice: OverdueNotice) {
        emit(.overdue(notice))
    }

    /// Reports an outbox target failing too long, or recovering after that.
    public func recordOutbox(_ notice: OutboxNotice) {
        emit(.outbox(notice))
    }

    /// Announces a curtain's battery falling to a threshold.
    public func recordBattery(_ notice: BatteryNotice) {
        emit(.battery(notice))
    }

    /// Announces a booking made or cancelled.
    public func recordBooking(_ notice: BookingNotice) {
        emit(.booking(notice))
    }

    // MARK: Fan-out

    private func emit(_ payload: Event.Payload) {
        announceCurtainRequests()
        emitNow(payload)
    }

    private func emitNow(_ payload: Event.Payload) {
        seq += 1
        counters.events += 1
        let event = Event(seq: seq, at: now(), payload: payload)
        recent.append(event)
        switch payload {
        case .curtain(let curtain): day.curtain(curtain, at: event.at)
        case .presence(let change): day.presence(change, at: event.at)
        default: break
        }
        // Before any subscriber sees the event, so that a GetState after it includes it.
        publish()
        var dropped: [UInt64] = []
        var gone: [UInt64] = []
        for (id, sub) in subscribers {
            switch sub.sink {
            case .stream(let continuation):
                switch continuation.yield(event) {
                case .enqueued: break
                case .dropped: dropped.append(id)
                case .terminated: gone.append(id)
                @unknown default: break
                }
            case .receiver(let receiver):
                switch receiver.receive(event) {
                case .accepted: break
                case .tooSlow: dropped.append(id)
                case .gone: gone.append(id)
                }
            }
        }
        for sub in subscribers.values {
            if case .receiver(let receiver) = sub.sink { receiver.flush() }
        }
        for id in gone { _ = remove(id) }
        for id in dropped {
            if let sub = remove(id) {
                if sub.counted { counters.subscribersDropped += 1 }
                sub.sink.end(.tooSlow(bufferLimit: sub.limit))
            }
        }
        if !gone.isEmpty || !dropped.isEmpty { publish() }
    }
}
