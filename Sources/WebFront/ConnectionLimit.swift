import Logging
import NIOCore
import Synchronization

/// Bounds the HTTP connections open at once (issue 33: 1,100 connections that sent half a
/// request line and then nothing used up the open file limit, and the kiosk stopped loading).
///
/// When every place is taken, a new connection takes the place of the one that has waited
/// longest without sending a whole request head — a slow or silent client — so that an attacker
/// who keeps opening half requests cannot keep a real browser out; only when every open
/// connection is busy with a request (or a page's event stream) is the new one closed instead.
/// Refusals are logged at most once every ten seconds.
final class ConnectionLimit: Sendable {
    let maximum: Int
    private struct State {
        var open = 0
        /// Connections that have not sent a whole request head yet, oldest first.
        var waiting: [(id: ObjectIdentifier, channel: any Channel)] = []
        var lastWarning: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    init(maximum: Int) { self.maximum = maximum }

    /// What to do with a connection that just opened: keep it (having closed an older, silent
    /// one to make room when needed), or close it.
    fileprivate func admit(_ channel: any Channel) -> (keep: Bool, evict: (any Channel)?, warn: Bool) {
        state.withLock { s in
            s.open += 1
            var evict: (any Channel)?
            if s.open > maximum {
                guard !s.waiting.isEmpty else {
                    let warn = s.lastWarning.map { ContinuousClock.now - $0 > .seconds(10) } ?? true
                    if warn { s.lastWarning = .now }
                    return (false, nil, warn)
                }
                evict = s.waiting.removeFirst().channel
            }
            s.waiting.append((ObjectIdentifier(channel), channel))
            return (true, evict, false)
        }
    }

    /// The connection sent a whole request head: it is a client, not a slow one.
    fileprivate func served(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { s in s.waiting.removeAll { $0.id == id } }
    }

    fileprivate func closed(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { s in
            s.open -= 1
            s.waiting.removeAll { $0.id == id }
        }
    }

    /// One per connection, in its pipeline after the HTTP decoder (it sees request parts).
    final class Handler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Any
        private let limit: ConnectionLimit
        private let logger: Logger
        private var counted = false
        private var headed = false

        init(limit: ConnectionLimit, logger: Logger) {
            self.limit = limit
            self.logger = logger
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let (keep, evict, warn) = limit.admit(context.channel)
            counted = true
            evict?.close(promise: nil)
            guard !keep else { return }
            if warn {
                logger.warning("refusing HTTP connections: \(limit.maximum) are open, each busy with a request (--max-connections)")
            }
            context.close(promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if !headed {
                headed = true
                limit.served(context.channel)
            }
            context.fireChannelRead(data)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if counted { limit.closed(context.channel) }
            counted = false
        }
    }
}
