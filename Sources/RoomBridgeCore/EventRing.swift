/// The latest events, oldest first, at most `capacity` of them: what `SystemState` can replay
/// to a subscriber that resumes after a `seq` it has seen.
struct EventRing: Sendable {
    let capacity: Int
    private var storage: [Event] = []
    /// Index of the oldest event in `storage` once it is full.
    private var head = 0

    init(capacity: Int) {
        precondition(capacity > 0, "capacity must be positive")  // invariant: SystemState checks it first
        self.capacity = capacity
        storage.reserveCapacity(min(capacity, 4096))
    }

    mutating func append(_ event: Event) {
        if storage.count < capacity {
            storage.append(event)
        } else {
            storage[head] = event
            head = (head + 1) % capacity
        }
    }

    /// Every event after `since`, oldest first, if the ring still holds all of them; `latest` is
    /// the `seq` of the last event emitted. Nil when `since` is older than the ring's oldest
    /// event minus one, or newer than `latest` (another run of the daemon numbered it).
    func events(after since: UInt64, latest: UInt64) -> [Event]? {
        guard since <= latest else { return nil }
        if since == latest { return [] }
        guard let oldest = storage.isEmpty ? nil : storage[head].seq, oldest <= since + 1 else { return nil }
        let ordered = storage[head...] + storage[..<head]
        return Array(ordered.drop { $0.seq <= since })
    }
}
