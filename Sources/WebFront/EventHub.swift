import Foundation
import Logging
import Synchronization
import Varlink
import VarlinkNIO

/// One thing the hub tells its subscribers.
public enum HubMessage: Sendable, Equatable {
    /// The daemon's state (at first, and again after the Watch connection was re-opened).
    case snapshot(DaemonState)
    /// One daemon event, with the facts looked up for a lending outcome.
    case event(DaemonEvent, OutcomeFacts)
    /// roombridged cannot be reached; taps are not being recorded by anyone we can see.
    case offline
}

/// Fans roombridged's `io.roombridge.State.Watch` out to any number of browsers.
///
/// roombridge-web keeps ONE Watch connection for the live events, and no browser request opens
/// another: a browser that reconnects with `Last-Event-ID: n` is given the events after `n`
/// from the hub's own ring of the last ``replayBuffer`` events (with their facts), then the
/// live ones, in order. When the hub no longer keeps every event after `n`, the browser gets a
/// fresh snapshot instead. The hub's own Watch resumes after its connection broke from the
/// daemon's replay ring (`Watch(since:)`), when the daemon is the same run.
public actor EventHub {
    private let link: DaemonLink
    private let logger: Logger
    private let zone = Mutex<TimeZone?>(nil)

    /// The kiosk's time zone as the daemon last reported it (`State.timeZone`); nil before the
    /// first state, or from a daemon that does not report one.
    public nonisolated var daemonTimeZone: TimeZone? { zone.withLock { $0 } }
    private var state: DaemonState?
    /// The daemon run `state` belongs to (its `startedAt`): event numbers start again with a new run.
    private var daemonRun: String?
    /// Whether the Watch is open; `starting` until the first attempt has succeeded or failed,
    /// so that a browser arriving at start-up waits for the state instead of seeing "offline".
    private enum Link { case starting, online, offline }
    private var linkState = Link.starting

    private struct Subscriber {
        let continuation: AsyncStream<HubMessage>.Continuation
        /// Until the browser's first message: the `Last-Event-ID` it came with.
        var resumeAfter: Int?
    }
    /// The last events of the current daemon run, oldest first, for browsers that resume.
    private var recent: [(DaemonEvent, OutcomeFacts)] = []
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
    /// events after its `Last-Event-ID` when the hub still keeps all of them, else the snapshot.
    private func start(_ id: Int) {
        guard let subscriber = subscribers[id] else { return }
        subscribers[id]?.resumeAfter = nil
        guard linkState == .online, let state else {
            subscriber.continuation.yield(.offline)
            return
        }
        guard let last = subscriber.resumeAfter, last <= state.seq else {
            subscriber.continuation.yield(.snapshot(state))
            return
        }
        if last == state.seq { return }
        guard let first = recent.firstIndex(where: { $0.0.seq == last + 1 }) else {
            subscriber.continuation.yield(.snapshot(state))
            return
        }
        for (e, f) in recent[first...] { subscriber.continuation.yield(.event(e, f)) }
    }

    private func publish(_ message: HubMessage) {
        for subscriber in subscribers.values { subscriber.continuation.yield(message) }
    }

    private func began(_ snapshot: DaemonState) {
        let waiting = linkState == .starting
        // The ring stays only while it runs up to this snapshot in the same daemon run.
        if snapshot.startedAt != daemonRun || recent.last?.0.seq != snapshot.seq { recent.removeAll() }
        state = snapshot
        daemonRun = snapshot.startedAt
        if let name = snapshot.timeZone, let tz = TimeZone(identifier: name) { zone.withLock { $0 = tz } }
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

    private func received(_ event: DaemonEvent, _ facts: OutcomeFacts) {
        if var s = state {
            s.seq = event.seq
            if let c = event.curtain { s = s.applying(c) }
            if let o = event.lending { s.lending.lastOutcome = o }
            if let change = event.presence { s.presence = s.presence?.applying(change) }
            state = s
        }
        var facts = facts
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
        let now = try? await link.read("io.roombridge.State.GetState", NoParameters(), returning: StateReply.self)
        return now?.state.startedAt == daemonRun ? state.seq : nil
    }

    /// Keeps the Watch open until the task is cancelled, re-opening it after the daemon goes
    /// away (backing off from 0.2 s to 5 s between attempts).
    public func run() async {
        var backoff = Duration.milliseconds(200)
        while !Task.isCancelled {
            do {
                let since = await resumePoint()
                let (client, replies) = try await link.watch(since: since)
                defer { Task { await client.close() } }
                for try await parameters in replies {
                    let reply = try JSONValueDecoder().decode(WatchReply.self, from: parameters)
                    if let s = reply.state {
                        began(s)
                        backoff = .milliseconds(200)
                        logger.info("watching roombridged at \(link.socketPath) from seq \(s.seq)")
                    } else if let after = reply.resumedAfter {
                        resumed()
                        backoff = .milliseconds(200)
                        logger.info("watching roombridged at \(link.socketPath) again after seq \(after)")
                    } else if let e = reply.event {
                        received(e, await facts(for: e))
                    }
                }
                logger.notice("roombridged ended the Watch")
            } catch {
                logger.notice("Watch of roombridged failed: \(error)")
            }
            lost()
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    /// Looks up what the kiosk shows about an outcome beyond the outcome itself. A failed
    /// lookup leaves the facts out (the kiosk then shows the device ID instead of the model).
    private func facts(for event: DaemonEvent) async -> OutcomeFacts {
        guard let outcome = event.lending else { return OutcomeFacts() }
        switch outcome.kind {
        case "lent":
            guard let id = outcome.deviceId else { return OutcomeFacts() }
            let detail = try? await link.read("io.roombridge.Inventory.GetDevice", DeviceID(id: id), returning: DeviceDetail.self)
            return OutcomeFacts(model: detail?.device.model, dueAt: detail?.device.rental?.dueAt)
        case "returned":
            guard let id = outcome.deviceId else { return OutcomeFacts() }
            let detail = try? await link.read("io.roombridge.Inventory.GetDevice", DeviceID(id: id), returning: DeviceDetail.self)
            return OutcomeFacts(model: detail?.device.model)
        case "armed":
            let session = try? await link.read("io.roombridge.Lending.GetSession", NoParameters(), returning: SessionReply.self)
            return OutcomeFacts(sessionExpiresAt: session?.session?.expiresAt)
        default:
            return OutcomeFacts()
        }
    }
}

struct DeviceID: Encodable, Sendable { var id: String }
struct StateReply: Decodable, Sendable { var state: DaemonState }
struct SessionReply: Decodable, Sendable {
    struct Session: Decodable, Sendable { var expiresAt: String }
    var session: Session?
}

extension EventHub {
    /// Ends every subscriber's stream (shutdown).
    func finishAll() {
        for subscriber in subscribers.values { subscriber.continuation.finish() }
    }
}
