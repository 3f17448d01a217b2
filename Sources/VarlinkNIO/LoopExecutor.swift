import NIOCore

/// An event loop as a task executor: a connection's call loop runs on the loop that reads and writes its
/// socket, so a message read wakes no other thread. The calls of an interface that runs on the connection's
/// thread (`VarlinkInterface.runsOnConnectionThread`, e.g. one that only reads the store) stay here: a store
/// read hops loop → store thread → loop and its reply is written in the same turn of the loop, instead of
/// loop → cooperative pool → store thread → pool → loop, each hop a thread wake-up (docs/benchmarks.md,
/// "GetDevice over the socket"). The calls of other interfaces move to the cooperative pool, as before.
///
/// Only the calls' own code runs here; what they await keeps its own executor (an actor's, the store's
/// threads). Calls must not block, as anywhere in async code.
final class LoopExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // From the loop itself this only queues the job for this turn; from another thread NIO
        // wakes the loop once for everything submitted before it runs.
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
