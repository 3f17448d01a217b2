import Logging
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
/// roombridge-web keeps ONE Watch connection and a bounded ring of the latest events, so a
/// browser that reconnects with `Last-Event-ID: n` gets every event after `n` that is still in
/// the ring (the ring holds `ringCapacity` events; docs/web.md). A browser further behind, or
/// one that reconnects after the Watch itself was re-opened (the daemon restarted, or this
/// process lost the connection), gets a fresh snapshot instead: the daemon has no replay, so
/// events older than the ring cannot be recovered.
public actor EventHub {
    public static let ringCapacity = 256

    private let link: DaemonLink
    private let logger: Logger
    private var ring: [(DaemonEvent, OutcomeFacts)] = []
    private var state: DaemonState?
    /// Whether the Watch is open; `starting` until the first attempt has succeeded or failed,
    /// so that a browser arriving at start-up waits for the state instead of seeing "offline".
    private enum Link { case starting, online, offline }
    private var linkState = Link.starting
    private var subscribers: [Int: AsyncStream<HubMessage>.Continuation] = [:]
    private var nextSubscriber = 0

    public init(link: DaemonLink, logger: Logger = Logger(label: "roombridge-web.watch")) {
        self.link = link
        self.logger = logger
    }

    /// Subscribes; `lastEventID` is the browser's `Last-Event-ID`. The stream starts with the
    /// missed events when the ring still has all of them, else with the current snapshot
    /// (or `offline`).
    public func subscribe(lastEventID: Int?) -> AsyncStream<HubMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: HubMessage.self, bufferingPolicy: .bufferingNewest(Self.ringCapacity))
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        for message in catchUp(after: lastEventID) { continuation.yield(message) }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    /// What a subscriber that has seen everything up to `lastEventID` needs first.
    func catchUp(after lastEventID: Int?) -> [HubMessage] {
        guard linkState != .starting else { return [] }
        guard linkState == .online, let state else { return [.offline] }
        guard let last = lastEventID else { return [.snapshot(state)] }
        let latest = ring.last?.0.seq ?? state.seq
        if last == latest { return [] }
        guard last < latest, let first = ring.first?.0.seq, first <= last + 1 else { return [.snapshot(state)] }
        return ring.filter { $0.0.seq > last }.map { .event($0.0, $0.1) }
    }

    private func publish(_ message: HubMessage) {
        for continuation in subscribers.values { continuation.yield(message) }
    }

    private func began(_ snapshot: DaemonState) {
        ring.removeAll()
        state = snapshot
        linkState = .online
        publish(.snapshot(snapshot))
    }

    private func received(_ event: DaemonEvent, _ facts: OutcomeFacts) {
        ring.append((event, facts))
        if ring.count > Self.ringCapacity { ring.removeFirst(ring.count - Self.ringCapacity) }
        if var s = state {
            s.seq = event.seq
            if let c = event.curtain { s.curtain = c }
            if let o = event.lending { s.lending.lastOutcome = o }
            state = s
        }
        publish(.event(event, facts))
    }

    private func lost() {
        guard linkState != .offline else { return }
        linkState = .offline
        publish(.offline)
    }

    /// Keeps the Watch open until the task is cancelled, re-opening it after the daemon goes
    /// away (backing off from 0.2 s to 5 s between attempts).
    public func run() async {
        var backoff = Duration.milliseconds(200)
        while !Task.isCancelled {
            do {
                let (client, replies) = try await link.watch()
                defer { Task { await client.close() } }
                for try await parameters in replies {
                    let reply = try JSONValueDecoder().decode(WatchReply.self, from: parameters)
                    if let s = reply.state {
                        began(s)
                        backoff = .milliseconds(200)
                        logger.info("watching roombridged at \(link.socketPath) from seq \(s.seq)")
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
            let detail = try? await link.call("io.roombridge.Inventory.GetDevice", DeviceID(id: id), returning: DeviceDetail.self)
            return OutcomeFacts(model: detail?.device.model, dueAt: detail?.device.rental?.dueAt)
        case "returned":
            guard let id = outcome.deviceId else { return OutcomeFacts() }
            let detail = try? await link.call("io.roombridge.Inventory.GetDevice", DeviceID(id: id), returning: DeviceDetail.self)
            return OutcomeFacts(model: detail?.device.model)
        case "armed":
            let session = try? await link.call("io.roombridge.Lending.GetSession", NoParameters(), returning: SessionReply.self)
            return OutcomeFacts(sessionExpiresAt: session?.session?.expiresAt)
        default:
            return OutcomeFacts()
        }
    }
}

struct DeviceID: Encodable, Sendable { var id: String }
struct SessionReply: Decodable, Sendable {
    struct Session: Decodable, Sendable { var expiresAt: String }
    var session: Session?
}

extension EventHub {
    /// Ends every subscriber's stream (shutdown).
    func finishAll() {
        for continuation in subscribers.values { continuation.finish() }
    }
}
