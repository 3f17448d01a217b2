import Synchronization

/// A count that tasks and callbacks on any thread add to, and a test reads.
public final class Counter: Sendable {
    private let count = Mutex(0)
    public init() {}
    public func increment() { count.withLock { $0 += 1 } }
    public var value: Int { count.withLock { $0 } }
}
