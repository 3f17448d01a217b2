import NIOCore
import Synchronization
import Varlink

/// Everything the server's tasks hand to one event loop: replies to write and actions to run,
/// in the order submitted. What is submitted while the loop has not yet run the queue is
/// written in one turn of the loop, each connection flushed once, and an event posted to many
/// connections is copied into a buffer once. One submission per loop instead of one per
/// connection is what lets an event reach a thousand watchers within a few milliseconds.
final class LoopQueue: Sendable {
    enum Item: Sendable {
        /// A reply from a call's task; `promise` completes once it is written.
        case write(any Channel, [UInt8], EventLoopPromise<Void>)
        /// A reply posted for a `more` call (``ChannelReplyPoster``).
        case post(ChannelReplyPoster, [UInt8])
        case run(@Sendable () -> Void)
    }

    private struct Pending {
        var items: [Item] = []
        /// A drain is submitted to the loop and has not yet taken the items.
        var scheduled = false
    }

    let eventLoop: any EventLoop
    private let pending = Mutex(Pending())

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Items queued without a kick after which the loop is woken anyway, so that it writes to
    /// the first connections while the rest are still being posted.
    static let batch = 64

    /// Queues `item`; with `kick` false it waits for the next ``kick()`` (or a submission with
    /// kick, or ``batch`` items), so that posting one event to many connections wakes the loop
    /// a few times rather than once per connection.
    func submit(_ item: Item, kick: Bool = true) {
        let schedule = pending.withLock { p in
            p.items.append(item)
            guard kick || p.items.count >= Self.batch, !p.scheduled else { return false }
            p.scheduled = true
            return true
        }
        if schedule { eventLoop.execute { self.drain() } }
    }

    /// Has the loop write what is queued.
    func kick() {
        let schedule = pending.withLock { p in
            guard !p.scheduled, !p.items.isEmpty else { return false }
            p.scheduled = true
            return true
        }
        if schedule { eventLoop.execute { self.drain() } }
    }

    private func drain() {
        let items = pending.withLock { p in
            p.scheduled = false
            var taken: [Item] = []
            swap(&taken, &p.items)
            return taken
        }
        var toFlush: [any Channel] = []
        var flushing = Set<ObjectIdentifier>()
        func flushLater(_ channel: any Channel) {
            if flushing.insert(ObjectIdentifier(channel)).inserted { toFlush.append(channel) }
        }
        // The buffer for the last posted bytes: the same event posted to every watcher shares it.
        var sharedBase: UnsafeRawPointer?
        var sharedCount = -1
        var sharedBuffer = ByteBuffer()
        for item in items {
            switch item {
            case .write(let channel, let bytes, let promise):
                channel.write(ByteBuffer(bytes: bytes), promise: promise)
                flushLater(channel)
            case .post(let poster, let bytes):
                let base = bytes.withUnsafeBytes { UnsafeRawPointer($0.baseAddress) }
                if base != sharedBase || bytes.count != sharedCount {
                    (sharedBase, sharedCount, sharedBuffer) = (base, bytes.count, ByteBuffer(bytes: bytes))
                }
                poster.channel.write(sharedBuffer).whenComplete { _ in poster.written() }
                flushLater(poster.channel)
            case .run(let action):
                for channel in toFlush { channel.flush() }
                toFlush.removeAll()
                flushing.removeAll()
                action()
            }
        }
        for channel in toFlush { channel.flush() }
    }
}

/// Posts the continuing replies of one `more` call through its loop's ``LoopQueue``, counting
/// the ones not yet written.
final class ChannelReplyPoster: VarlinkReplyPoster {
    let channel: any Channel
    private let queue: LoopQueue
    private let unwritten = Atomic<Int>(0)

    init(channel: any Channel, queue: LoopQueue) {
        self.channel = channel
        self.queue = queue
    }

    func post(framed: [UInt8], limit: Int) -> VarlinkPostResult {
        guard channel.isActive else { return .closed }
        if unwritten.add(1, ordering: .relaxed).newValue > limit {
            unwritten.subtract(1, ordering: .relaxed)
            return .tooSlow
        }
        queue.submit(.post(self, framed), kick: false)
        return .queued
    }

    func flush() {
        queue.kick()
    }

    /// One posted reply was written (or failed with the connection).
    func written() {
        unwritten.subtract(1, ordering: .relaxed)
    }
}
