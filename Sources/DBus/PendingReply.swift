internal import CDBus
import Synchronization

/// One outstanding method call. `pending` is confined to the connection queue; the result is
/// set exactly once (reply, timeout, cancellation or disconnection) and handed over through the
/// lock, the continuation only wakes the caller.
final class PendingReply: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var result: Result<RawMessage, any Error>?
    }
    private let state = Mutex(State())
    let core: ConnectionCore
    /// Confined to the connection's queue, which the compiler cannot see.
    nonisolated(unsafe) var pending: OpaquePointer?

    init(core: ConnectionCore) { self.core = core }

    var isDone: Bool { state.withLock { $0.result != nil } }

    /// Suspends until a result is set (returns at once if it already is).
    func wait() async -> Result<RawMessage, any Error> {
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.result != nil { return true }
                s.continuation = cont
                return false
            }
            if ready { cont.resume() }
        }
        return state.withLock { $0.result! }
    }

    /// Sets the result unless one is already set.
    func resume(_ result: Result<RawMessage, any Error>) {
        let cont = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard s.result == nil else { return nil }
            s.result = result
            defer { s.continuation = nil }
            return s.continuation
        }
        cont?.resume()
    }
}

let pendingNotify: DBusPendingCallNotifyFunction = { _, data in
    guard let data else { return }
    let box = Unmanaged<PendingReply>.fromOpaque(data).takeUnretainedValue()
    box.core.completeCall(box)
}

let releasePending: DBusFreeFunction = { data in
    guard let data else { return }
    Unmanaged<PendingReply>.fromOpaque(data).release()
}
