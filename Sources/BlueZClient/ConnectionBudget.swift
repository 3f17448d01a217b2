/// How many curtains may hold a link on one adapter at once (`curtain.connections`).
///
/// A controller has a limited number of connection slots, and cheap ones (a Raspberry Pi's, an ESP32 proxy's) few.
/// bluetoothd's `Adapter1` tells a client no such number (doc/adapter-api.txt), so clients that drive many devices
/// keep their own count, as Home Assistant and ESPHome do (docs/bluez-notes.md, "Connection budget"). The curtains
/// of an adapter share one budget:
/// - a curtain takes a slot before it connects; beyond the budget it waits, first come first served: commands
///   queue, they are not refused;
/// - a persistent curtain (our own controller) keeps its slot for as long as it runs, across reconnects;
/// - an on-demand curtain (SwitchBot) gives its slot back when it releases the link, and releases it early (right
///   after its command) when another curtain is waiting for a slot.
public actor ConnectionBudget {
    /// The number of links at once.
    public nonisolated let limit: Int
    private var holders: [String] = []
    private var waiters: [(who: String, ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextTicket = 0
    /// Woken when a curtain starts waiting, so that a holder in its hold gives its slot back.
    private var wanted: [String: @Sendable () -> Void] = [:]

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The curtains holding a slot now, in the order they took it.
    public var holding: [String] { holders }

    /// The curtains waiting for a slot, first first.
    public var waiting: [String] { waiters.map(\.who) }

    /// Takes a slot for `who`, waiting in line while the budget is spent. Throws `CancellationError` when the task
    /// is cancelled while it waits (it then holds nothing). Taking a slot already held is a no-op.
    public func acquire(_ who: String) async throws {
        if holders.contains(who) { return }
        if holders.count < limit, waiters.isEmpty {
            holders.append(who)
            return
        }
        let ticket = nextTicket
        nextTicket += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                waiters.append((who, ticket, continuation))
                for (holder, wake) in wanted where holder != who { wake() }
            }
        } onCancel: {
            Task { await self.cancel(ticket) }
        }
    }

    /// Gives `who`'s slot back (nothing when it holds none); the first in line takes it.
    public func release(_ who: String) {
        guard let index = holders.firstIndex(of: who) else { return }
        holders.remove(at: index)
        grant()
    }

    /// Whether a curtain other than `who` waits for a slot.
    public func isWanted(by who: String) -> Bool {
        waiters.contains { $0.who != who }
    }

    /// Calls `wake` whenever a curtain starts waiting (nil: no longer); `who` then looks at ``isWanted(by:)``.
    public func onWanted(_ who: String, _ wake: (@Sendable () -> Void)?) {
        wanted[who] = wake
    }

    private func grant() {
        while holders.count < limit, !waiters.isEmpty {
            let next = waiters.removeFirst()
            holders.append(next.who)
            next.continuation.resume()
        }
    }

    private func cancel(_ ticket: Int) {
        guard let index = waiters.firstIndex(where: { $0.ticket == ticket }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }
}
