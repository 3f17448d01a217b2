import Logging
import NIOCore
import Varlink

/// One server connection on its event loop: frames the messages, answers at once the calls an
/// interface can answer without waiting (``VarlinkService/answerWithoutTask(to:context:)``, e.g.
/// `GetState` from its cached serialization: no task, no thread hop), and hands every other
/// message, in order, to the connection's task.
///
/// Calls an interface answers by synchronous work off the loop (``VarlinkOffloadingInterface``,
/// e.g. `GetDevice`'s point lookup) go from here to the work's thread and back, not through the
/// task.
///
/// Order is kept: a call is answered at once or offloaded only while the task has nothing in
/// hand, the messages read while an offloaded call runs wait until its reply is written, and the
/// task reports each finished call (``callFinished()``) after its last reply was written. The
/// handler also keeps the idle and stall timers (a partial message, or replies the client does
/// not read), and stops reading from the socket while the
/// task has ``maxQueued`` messages waiting (so a client that pipelines calls cannot fill memory).
final class VarlinkConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Messages handed to the task and not yet answered, beyond which reading pauses.
    static let maxQueued = 16

    private var decoder: VarlinkFrameDecoder
    private let service: VarlinkService
    private let callContext: VarlinkCallContext
    private let toTask: AsyncStream<[UInt8]>.Continuation
    private let idleTimeout: TimeAmount
    private let stallTimeout: TimeAmount
    private let logFrameError: @Sendable (VarlinkFrameError) -> Void
    private let logTimeout: @Sendable (_ reason: String) -> Void
    private var context: ChannelHandlerContext?
    private var queued = 0
    /// An offloaded call is running (``VarlinkOffloadingInterface``); the
    /// messages read meanwhile wait in ``held``.
    private var offloading = false
    private var held: [[UInt8]] = []
    /// The client half-closed while an offloaded call ran: stop once it and ``held`` are answered.
    private var inputEnded = false
    private var readHeldBack = false
    private var closing = false
    /// The idle timer while nothing is buffered, the stall timer once part of a message has
    /// arrived (not restarted by more parts, so trickling bytes does not keep a connection open).
    private var timer: (scheduled: Scheduled<Void>, stall: Bool)?
    /// Runs while the channel is not writable (the client does not read what we send); at the
    /// stall timeout it closes the connection, whether or not a call is still waiting to write.
    private var writeStall: Scheduled<Void>?

    init(service: VarlinkService, callContext: VarlinkCallContext, maxMessageSize: Int,
         idleTimeout: Duration, stallTimeout: Duration, toTask: AsyncStream<[UInt8]>.Continuation,
         logFrameError: @escaping @Sendable (VarlinkFrameError) -> Void,
         logTimeout: @escaping @Sendable (_ reason: String) -> Void) {
        self.service = service
        self.callContext = callContext
        self.decoder = VarlinkFrameDecoder(maxMessageSize: maxMessageSize)
        self.idleTimeout = .nanoseconds(idleTimeout.nanoseconds)
        self.stallTimeout = .nanoseconds(stallTimeout.nanoseconds)
        self.toTask = toTask
        self.logFrameError = logFrameError
        self.logTimeout = logTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        armTimer()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            writeStall?.cancel()
            writeStall = nil
        } else if writeStall == nil, !closing {
            let channel = context.channel
            let log = logTimeout
            writeStall = context.eventLoop.scheduleTask(in: stallTimeout) {
                log("closing connection: the client has not read its replies for the stall timeout")
                channel.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        decoder.append(unwrapInboundIn(data).readableBytesView)
        while !closing {
            let message: [UInt8]?
            do {
                message = try decoder.nextMessage()
            } catch {
                // The stream cannot be framed any more: say why, then close. Close our side first
                // and discard what the client still sends, so that it reads the error and then the
                // end instead of a reset for bytes left unread; the end of its input (or two
                // seconds) closes the connection.
                logFrameError(error)
                closing = true
                cancelTimer()
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: VarlinkReply(VarlinkError.invalidParameter("")).framedBytes())))
                    .whenComplete { _ in channel.close(mode: .output, promise: nil) }
                let task = toTask
                context.eventLoop.scheduleTask(in: .seconds(2)) {
                    task.finish()
                    channel.close(promise: nil)
                }
                return
            }
            guard let message else { break }
            cancelTimer()
            held.append(message)
        }
        dispatchHeld(context: context)
        armTimer()
    }

    /// Answers or hands on the messages read, in order: at once when nothing is in hand
    /// (immediate replies), by offloaded work when nothing is in hand (the messages after it
    /// wait here until its reply is written), else through the task.
    private func dispatchHeld(context: ChannelHandlerContext) {
        var wrote = false
        var taken = 0
        while taken < held.count, !offloading, !closing {
            let message = held[taken]
            taken += 1
            if queued == 0, context.channel.isWritable,
               let answer = service.answerWithoutTask(to: message, context: callContext) {
                switch answer {
                case .now(let reply):
                    context.write(wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
                    wrote = true
                case .offloaded(let start):
                    offloading = true
                    let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
                    let eventLoop = context.eventLoop
                    start { reply in
                        eventLoop.execute { handler.value.offloadFinished(reply) }
                    }
                }
                continue
            }
            queued += 1
            toTask.yield(message)
        }
        held.removeFirst(taken)
        if wrote { context.flush() }
    }

    /// The offloaded call's reply, on the event loop: written, then what waited behind it.
    private func offloadFinished(_ reply: [UInt8]) {
        offloading = false
        guard let context, !closing else { return }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
        dispatchHeld(context: context)
        if inputEnded, !offloading {
            stop()
            return
        }
        resumeReadingIfHeldBack(context: context)
        armTimer()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client sent all it will send (half-close): answer what it sent, then close.
        if let e = event as? ChannelEvent, case .inputClosed = e {
            // An offloaded call and the messages behind it are answered first.
            if offloading { inputEnded = true } else { stop() }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func read(context: ChannelHandlerContext) {
        if queued + held.count >= Self.maxQueued {
            readHeldBack = true
        } else {
            context.read()
        }
    }

    /// The task answered one message (its replies are written); called on the event loop.
    func callFinished() {
        queued -= 1
        guard let context, !closing else { return }
        resumeReadingIfHeldBack(context: context)
        armTimer()
    }

    private func resumeReadingIfHeldBack(context: ChannelHandlerContext) {
        if readHeldBack, queued + held.count < Self.maxQueued {
            readHeldBack = false
            context.read()
        }
    }

    /// While no call runs, one timer watches the connection.
    private func armTimer() {
        guard let context, !closing, queued == 0, !offloading, held.isEmpty else { return }
        let stall = decoder.hasPartialMessage
        if let timer, timer.stall == stall || !stall { return }
        cancelTimer()
        let channel = context.channel
        let log = logTimeout
        let scheduled = context.eventLoop.scheduleTask(in: stall ? stallTimeout : idleTimeout) {
            log(stall ? "closing connection: incomplete message stalled" : "closing idle connection")
            channel.close(promise: nil)
        }
        timer = (scheduled, stall)
    }

    private func cancelTimer() {
        timer?.scheduled.cancel()
        timer = nil
    }

    private func stop() {
        closing = true
        cancelTimer()
        writeStall?.cancel()
        writeStall = nil
        toTask.finish()
    }
}
