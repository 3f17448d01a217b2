import Foundation
import Logging
import Synchronization
import Varlink
import VarlinkNIO
import RoomBridgeAPI
import struct RoomBridgeCore.StateSnapshot
import struct RoomBridgeCore.StocktakeStatus

/// One thing the hub tells its subscribers.
public enum HubMessage: Sendable, Equatable {
    /// The daemon's state (at first, and again after the Watch connection was re-opened).
    case snapshot(StateSnapshot)
    /// One daemon event, with the facts looked up for a lending outcome.
    case event(WatchedEvent, OutcomeFacts)
    /// roombridged cannot be reached; taps are not being recorded by anyone we can see.
    case offline
}

/// Fans roombridged's `io.roombridge.State.Watch` out to any number of browsers.
///
/// roombridge-web keeps ONE Watch connection for the live events. A browser that reconnects
/// with `Last-Event-ID: n` is given the events after `n` from the hub's own ring of the last
/// ``replayBuffer`` events (with their facts), then the live ones, in order. Events older than
/// the ring (roombridge-web itself was restarted, say) are asked of the daemon's replay ring
/// (`Watch(since:)`) by ONE backfill at a time, which every browser that waits for old events
/// shares; when the daemon does not keep them either, the browser gets a fresh snapshot, and
/// the hub remembers that, so later browsers asking as far back get theirs without asking the
/// daemon. So browsers never turn into daemon connections: at most the Watch, one backfill and
/// the calls' pooled connection (docs/web.md). The hub's own Watch resumes after its connection
/// broke from the daemon's replay ring, when the daemon is the same run.
public actor EventHub {
    private let link: DaemonLink
    private let logger: Logger
    private let zone = Mutex<TimeZone?>(nil)

    /// The kiosk's time zone as the daemon last reported it (`State.timeZone`); nil before the
    /// first state, or from a daemon that does not report one.
    public nonisolated var daemonTimeZone: TimeZone? { zone.withLock { $0 } }
    private var state: StateSnapshot?
    /// The daemon run `state` belongs to (its `startedAt`): event numbers start again with a new run.
    private var daemonRun: Date?
    /// Whether the Watch is open; `starting` until the first attempt has succeeded or failed,
    /// so that a browser arriving at start-up waits for the state instead of seeing "offline".
    private enum Link { case starting, online, offline }
    private var linkState = Link.starting

    private struct Subscriber {
        let continuation: AsyncStream<HubMessage>.Continuation
        /// Until the browser's first message: the `Last-Event-ID` it came with.
        var resumeAfter: Int?
        /// While the browser waits for a backfill: the live messages held back from it (what it
        /// is given when the backfill ends covers them).
        var held: [HubMessage]? = nil
    }
    /// The backfill under way, if any (one at a time, shared by every waiting browser).
    private var backfilling = false
    /// The daemon run's events up to this one are kept neither here nor by the daemon (a
    /// backfill found so): a browser resuming at or before it gets a snapshot at once.
    private var replayFloor = 0
    /// The last events of the current daemon run, oldest first, for browsers that resume.
    private var recent: [(WatchedEvent, OutcomeFacts)] = []
    /// Events the hub keeps for browsers that resume (a few minutes of a busy desk).
    static let replayBuffer = 512
    private var subscribers: [Int: Subscriber] = [:]
    private var nextSubscriber = 0

    /// Live messages a subscriber may fall behind (a browser that stops reading loses the oldest).
    static let subscriberBuffer = 1024

    public init(link: DaemonLink, logger: Logger = Logger(label: "roombridge-web.watch")) {
        self.link = link
        self.logger = logger
    }

    /// Subscribes; `lastEventID` is the browser's `Last-Event-ID`. The stream starts with the
    /// missed events when the daemon still keeps all of them, else with the current snapshot
    /// (or `offline`).
    public func subscribe(lastEventID: Int?) -> AsyncStream<HubMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: HubMessage.self, bufferingPolicy: .bufferingNewest(Self.subscriberBuffer))
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = Subscriber(continuation: continuation, resumeAfter: lastEventID)
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        if linkState != .starting { start(id) }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    /// Gives a new subscriber what it needs first, once the hub knows the daemon's state: the
    /// events after its `Last-Event-ID` when the hub keeps all of them, else (once a backfill
    /// has tried the daemon) the snapshot.
    private func start(_ id: Int) {
        guard let subscriber = subscribers[id] else { return }
        guard linkState == .online, let state else {
            subscribers[id]?.resumeAfter = nil
            subscriber.continuation.yield(.offline)
            return
        }
        guard let last = subscriber.resumeAfter, last <= Int(state.seq) else {
            subscribers[id]?.resumeAfter = nil
            subscriber.continuation.yield(.snapshot(state))
            return
        }
        if last == Int(state.seq) {
            subscribers[id]?.resumeAfter = nil
            return
        }
        if let first = recent.firstIndex(where: { $0.0.seq == last + 1 }) {
            subscribers[id]?.resumeAfter = nil
            for (e, f) in recent[first...] { subscriber.continuation.yield(.event(e, f)) }
            return
        }
        if last <= replayFloor || (recent.first.map { last + 1 > $0.0.seq } ?? false) {
            subscribers[id]?.resumeAfter = nil
            subscriber.continuation.yield(.snapshot(state))
            return
        }
        // Older than the ring: wait, with the live messages held back, for the shared backfill.
        if subscribers[id]?.held == nil { subscribers[id]?.held = [] }
        backfill()
    }

    /// Asks the daemon once for the events the waiting browsers lack (from the oldest of them
    /// up to the ring), then starts every waiting browser again.
    private func backfill() {
        guard !backfilling, let state else { return }
        let wanted = subscribers.values.compactMap { $0.held != nil ? $0.resumeAfter : nil }
        guard let after = wanted.min() else { return }
        let through = (recent.first?.0.seq).map { $0 - 1 } ?? Int(state.seq)
        guard after < through else { return finishBackfill(after: after, [], run: daemonRun) }
        backfilling = true
        let run = daemonRun
        Task {
            let events = await replay(after: after, through: through)
            finishBackfill(after: after, events, run: run)
        }
    }

    /// `run`: the daemon run the backfill asked; events of a run that has ended since are dropped.
    private func finishBackfill(after: Int, _ events: [(WatchedEvent, OutcomeFacts)]?, run: Date?) {
        backfilling = false
        if run != daemonRun {
            // The daemon restarted meanwhile: its numbers start again, and `began` reset the ring.
        } else if let events, !events.isEmpty, events.last.map({ $0.0.seq + 1 == (recent.first?.0.seq ?? $0.0.seq + 1) }) == true {
            recent.insert(contentsOf: events, at: 0)
        } else {
            replayFloor = max(replayFloor, after)
        }
        // Started again now, each waiting browser gets what it lacks up to this moment (the ring
        // holds the live events that came meanwhile, or the snapshot or `offline` is current),
        // so the messages held back for it are not sent again.
        for (id, subscriber) in subscribers where subscriber.held != nil {
            subscribers[id]?.held = nil
            start(id)
        }
        // Keep the ring to its size (what was just served has been handed out).
        if recent.count > Self.replayBuffer { recent.removeFirst(recent.count - Self.replayBuffer) }
        backfill()
    }

    /// The events after `last` through `target`, from the daemon's replay ring, with their
    /// facts; nil when the daemon no longer keeps them (or cannot be asked).
    private func replay(after last: Int, through target: Int) async -> [(WatchedEvent, OutcomeFacts)]? {
        do {
            let (client, replies) = try await link.watch(since: last)
            defer { Task { await client.close() } }
            var events: [(WatchedEvent, OutcomeFacts)] = []
            for try await parameters in replies {
                let reply = try WatchReply.decode(parameters)
                if reply.state != nil { return nil }
                if let e = reply.event {
                    if e.seq > target { return events }
                    events.append((e, await facts(for: e)))
                    if e.seq >= target { return events }
                }
            }
        } catch {
            logger.notice("replay after \(last) from roombridged failed: \(error)")
        }
        return nil
    }

    private func publish(_ message: HubMessage) {
        for (id, subscriber) in subscribers {
            if subscriber.held != nil {
                subscribers[id]?.held?.append(message)
            } else {
                subscriber.continuation.yield(message)
            }
        }
    }

    private func began(_ snapshot: StateSnapshot) {
        let waiting = linkState == .starting
        // The ring stays only while it runs up to this snapshot in the same daemon run.
        if snapshot.startedAt != daemonRun || recent.last?.0.seq != Int(snapshot.seq) { recent.removeAll() }
        if snapshot.startedAt != daemonRun { replayFloor = 0 }
        state = snapshot
        daemonRun = snapshot.startedAt
        if let tz = TimeZone(identifier: snapshot.timeZone) { zone.withLock { $0 = tz } }
        linkState = .online
        if waiting {
            for id in subscribers.keys { start(id) }
        } else {
            publish(.snapshot(snapshot))
        }
    }

    /// The Watch was re-opened after the last event seen and the daemon still had every later
    /// one: the browsers, told `offline` meanwhile, get the state as it was (its `seq` is the
    /// last event they saw) and then the missed events as they arrive.
    private func resumed() {
        linkState = .online
        if let state { publish(.snapshot(state)) }
    }

    private func received(_ event: WatchedEvent, _ facts: OutcomeFacts) {
        if var s = state {
            s.seq = UInt64(event.seq)
            if let c = event.curtain { s = s.applying(c) }
            if let o = event.lending { s.lending.lastOutcome = o }
            if let change = event.presence { s.presence = s.presence.applying(change) }
            s.lending.stocktake = Self.stocktake(after: event, facts, s.lending.stocktake)
            state = s
        }
        var facts = facts
        if event.stocktake != nil || event.countsInStocktake { facts.stocktake = state?.lending.stocktake }
        if event.presence != nil { facts.presence = state?.presence }
        if event.curtain != nil { facts.curtains = state?.allCurtains }
        if let previous = recent.last, previous.0.seq + 1 != event.seq { recent.removeAll() }
        recent.append((event, facts))
        if recent.count > Self.replayBuffer { recent.removeFirst(recent.count - Self.replayBuffer) }
        publish(.event(event, facts))
    }

    private func lost() {
        guard linkState != .offline else { return }
        let waiting = linkState == .starting
        linkState = .offline
        if waiting {
            for id in subscribers.keys { start(id) }
        } else {
            publish(.offline)
        }
    }

    /// Where to resume the Watch: the last event seen, if the daemon is still the same run
    /// (its `startedAt` unchanged; a restarted daemon numbers its events from 1 again).
    private func resumePoint() async -> Int? {
        guard let state, let daemonRun else { return nil }
        let now = try? await link.read(StateAPI.GetState.self, .init())
        return now?.state.startedAt == daemonRun ? Int(state.seq) : nil
    }

    /// Keeps the Watch open until the task is cancelled, re-opening it after the daemon goes
    /// away (backing off from 0.2 s to 5 s between attempts).
    public func run() async {
        // The shared client's rule: reopened after the daemon went away, backing off 0.2 s to 5 s.
        let events = link.client.resubscribing("io.roombridge.State.Watch", parameters: { [self] in
            await resumePoint().map { ["since": .int(Int64($0))] } ?? [:]
        }, retrying: { _ in true })
        do {
            for try await item in events {
                switch item {
                case .interrupted(let error, let retryIn):
                    logger.notice("Watch of roombridged at \(link.socketPath) ended (\(error)); again in \(retryIn)")
                    lost()
                case .reply(let parameters):
                    guard let reply = try? WatchReply.decode(parameters) else {
                        logger.error("roombridged sent a Watch reply this roombridge-web does not understand; are they the same version?")
                        continue
                    }
                    if let s = reply.state {
                        began(s)
                        logger.info("watching roombridged at \(link.socketPath) from seq \(s.seq)")
                    } else if let after = reply.resumedAfter {
                        resumed()
                        logger.info("watching roombridged at \(link.socketPath) again after seq \(after)")
                    } else if let e = reply.event {
                        received(e, await facts(for: e))
                    }
                }
            }
        } catch {
            logger.error("Watch of roombridged ended: \(error)")
        }
    }

    /// What the kiosk shows about an outcome beyond its kind: the model and due date the outcome carries, and for a
    /// badge the session's end, looked up (a failed lookup leaves it out: no countdown).
    private func facts(for event: WatchedEvent) async -> OutcomeFacts {
        guard let outcome = event.lending else { return OutcomeFacts() }
        switch outcome.kind {
        case .lent:
            // The outcome carries the model and the due date: no lookup between the tap and the screen.
            return OutcomeFacts(model: outcome.model, dueAt: outcome.dueAt)
        case .returned:
            return OutcomeFacts(model: outcome.model)
        case .counted, .unexpected:
            // The count after the tap, as the daemon has it (taps at other kiosks on the database count too).
            let now = try? await link.read(StateAPI.GetState.self, .init())
            return OutcomeFacts(model: outcome.model, stocktake: now?.state.lending.stocktake)
        case .armed:
            let session = try? await link.read(LendingAPI.GetSession.self, .init())
            return OutcomeFacts(sessionExpiresAt: session?.session.map { WireTime.string($0.expiresAt) })
        default:
            return OutcomeFacts()
        }
    }
}


extension EventHub {
    /// The open stocktake after `event`: set when one starts, gone when it closes, and after a tap that
    /// counted a device or noted an unexpected tag the daemon's count (`facts`), else `current` counted on
    /// here (the count could not be read).
    static func stocktake(after event: WatchedEvent, _ facts: OutcomeFacts, _ current: StocktakeStatus?) -> StocktakeStatus? {
        if let notice = event.stocktake { return notice.change == .started ? notice.status : nil }
        guard event.countsInStocktake, let outcome = event.lending else { return current }
        if let known = facts.stocktake { return known }
        guard var s = current else { return nil }
        if outcome.kind == .unexpected { s.unexpected += 1 } else if outcome.reason != "again" { s.counted += 1 }
        return s
    }

    /// Ends every subscriber's stream (shutdown).
    func finishAll() {
        for subscriber in subscribers.values { subscriber.continuation.finish() }
    }
}
