import Logging
import NIOCore
import Synchronization

/// Bounds the HTTP connections open at once (issue 33: 1,100 connections that sent half a
/// request line and then nothing used up the open file limit, and the kiosk stopped loading).
/// A connection past the bound is closed as soon as it is set up; the refusals are logged at
/// most once every ten seconds.
final class ConnectionLimit: Sendable {
    let maximum: Int
    private let open = Atomic<Int>(0)
    private let lastWarning = Mutex<ContinuousClock.Instant?>(nil)

    init(maximum: Int) { self.maximum = maximum }

    /// Connections open now.
    var current: Int { open.load(ordering: .relaxed) }

    /// One per connection, in its pipeline.
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Any
        private let limit: ConnectionLimit
        private let logger: Logger
        private var counted = false

        init(limit: ConnectionLimit, logger: Logger) {
            self.limit = limit
            self.logger = logger
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let now = limit.open.wrappingAdd(1, ordering: .relaxed).newValue
            counted = true
            guard now > limit.maximum else { return }
            let warn = limit.lastWarning.withLock { last -> Bool in
                guard last.map({ ContinuousClock.now - $0 > .seconds(10) }) ?? true else { return false }
                last = .now
                return true
            }
            if warn { logger.warning("refusing HTTP connections: \(limit.maximum) are open (--max-connections)") }
            context.close(promise: nil)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if counted { limit.open.wrappingSubtract(1, ordering: .relaxed) }
            counted = false
        }
    }
}
