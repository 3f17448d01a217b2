import Foundation
import Synchronization

/// The threads SQLite reads run on: never the cooperative pool or an event loop.
///
/// A read goes to the thread that became idle last (each thread parks on a semaphore of its
/// own), so that back-to-back lookups run on one thread whose caches, stack and SQLite reader
/// connection are warm; the others take reads only while it is busy (a report, an export).
/// With a concurrent `DispatchQueue`, or threads waiting on one condition variable, each read
/// woke whichever thread had waited longest: a cold one, and the lookup's own work took twice
/// as long there (docs/benchmarks.md, "Store at scale", and the issue 30 notes).
///
/// One set for the process, started at the first read: the daemon opens one store, and tests
/// open many without closing every one, so threads per store would leak.
final class ReadThreads: Sendable {
    static let shared = ReadThreads(count: 4, name: "rb-store-read")

    private final class Worker: Sendable {
        let wake = DispatchSemaphore(value: 0)
    }

    private struct Queue: ~Copyable {
        var jobs: [@Sendable () -> Void] = []
        var next = 0
        /// Idle workers, the one idle the shortest time last.
        var idle: [Worker] = []

        mutating func take() -> (@Sendable () -> Void)? {
            guard next < jobs.count else { return nil }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            } else if next >= 256 {  // never drained under a steady load: drop what was taken
                jobs.removeFirst(next)
                next = 0
            }
            return job
        }
    }

    private let queue = Mutex(Queue())

    private init(count: Int, name: String) {
        for i in 0..<count {
            let worker = Worker()
            let thread = Thread { [self] in
                Thread.current.name = "\(name)-\(i)"
                run(worker)
            }
            thread.start()
        }
    }

    /// Runs `job` on one of the threads, in the order scheduled as threads become free.
    func schedule(_ job: @escaping @Sendable () -> Void) {
        let worker = queue.withLock { q -> Worker? in
            q.jobs.append(job)
            return q.idle.popLast()
        }
        worker?.wake.signal()
    }

    private func run(_ worker: Worker) {
        while true {
            let job = queue.withLock { q -> (@Sendable () -> Void)? in
                if let job = q.take() { return job }
                q.idle.append(worker)
                return nil
            }
            if let job { job() } else { worker.wake.wait() }
        }
    }
}
