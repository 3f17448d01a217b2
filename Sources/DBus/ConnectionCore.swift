internal import CDBus
import Dispatch
import Glibc
import Synchronization

/// The state of one connection. libdbus objects are only touched on `queue`; `shared` is the
/// state also read from other threads.
final class ConnectionCore: Sendable {
    struct Shared {
        var connected = true
        var nextID: UInt64 = 0
        var subscriptions: [UInt64: Subscription] = [:]
        var disconnectWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Known owners of well-known names used as match-rule senders (nil = no owner).
        var owners: [String: String?] = [:]
        var ownerTrackers: [String: Int] = [:]

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    struct Subscription {
        var rule: DBusMatchRule
        var continuation: AsyncStream<DBusMessage>.Continuation
    }

    let queue: DispatchQueue
    let shared = Mutex(Shared())
    let uniqueName: String?
    let isBusConnection: Bool
    let canPassFDs: Bool
    /// Answers incoming method calls (nil: libdbus answers them); see `DBusCallHandler`.
    let callHandler = Mutex<(any DBusCallHandler)?>(nil)

    /// Queue-confined: only touched on `queue` (a serial queue), which the compiler cannot see.
    nonisolated(unsafe) var conn: OpaquePointer?
    /// Queue-confined, as `conn`.
    nonisolated(unsafe) var pendingCalls: [ObjectIdentifier: PendingReply] = [:]

    private init(queue: DispatchQueue, conn: OpaquePointer, uniqueName: String?, isBus: Bool) {
        self.queue = queue
        self.conn = conn
        self.uniqueName = uniqueName
        self.isBusConnection = isBus
        self.canPassFDs = dbus_connection_can_send_type(conn, TypeCode.unixFD) != 0
    }

    /// Connects (blocking; runs on `queue`).
    static func open(_ bus: DBusConnection.Bus, queue: DispatchQueue) -> Result<ConnectionCore, DBusError> {
        var err = CDBus.DBusError()
        dbus_error_init(&err)
        defer { dbus_error_free(&err) }
        var connection: OpaquePointer?
        var register = true
        var what: String
        // libdbus reads DBUS_SYSTEM_BUS_ADDRESS / DBUS_SESSION_BUS_ADDRESS only once per process
        // (at the first dbus_bus_get*), so read them here on every open.
        var address: String?
        switch bus {
        case .system:
            what = "the system bus"
            address = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
            if address == nil { connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &err) }
        case .session:
            what = "the session bus"
            address = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
            if address == nil { connection = dbus_bus_get_private(DBUS_BUS_SESSION, &err) }
        case .address(let a, let reg):
            what = "'\(a)'"
            address = a
            register = reg
        }
        if let address {
            connection = address.withCString { dbus_connection_open_private($0, &err) }
            if let c = connection, register, dbus_bus_register(c, &err) == 0 {
                dbus_connection_close(c)
                dbus_connection_unref(c)
                connection = nil
            }
        }
        guard let c = connection else {
            let name = dbus_error_is_set(&err) != 0 ? String(cString: err.name) : DBusError.failedName
            let text = dbus_error_is_set(&err) != 0 ? String(cString: err.message) : "unknown error"
            return .failure(DBusError(name: name, message: "Cannot connect to \(what): \(text). Check that the bus is running and the address (DBUS_SYSTEM_BUS_ADDRESS / DBUS_SESSION_BUS_ADDRESS) is right."))
        }
        // dbus_bus_get* default to calling _exit() when the bus disconnects; never do that.
        dbus_connection_set_exit_on_disconnect(c, 0)
        let isBus: Bool
        switch bus {
        case .system, .session: isBus = true
        case .address: isBus = register
        }
        let unique = isBus ? dbus_bus_get_unique_name(c).map { String(cString: $0) } : nil
        let core = ConnectionCore(queue: queue, conn: c, uniqueName: unique, isBus: isBus)
        core.installMainLoop(c)
        return .success(core)
    }

    // MARK: Queue helpers

    /// Closes the connection from `deinit` of the public handle.
    func closeInBackground() {
        queue.async { self.teardown() }
    }

    /// Closes and releases the libdbus connection (on the queue). Idempotent.
    func teardown() {
        guard let c = conn else { return }
        if dbus_connection_get_is_connected(c) != 0 { dbus_connection_flush(c) }
        dbus_connection_close(c)
        // Delivers the local Disconnected signal and completes pending calls with errors.
        while dbus_connection_dispatch(c) == DBUS_DISPATCH_DATA_REMAINS {}
        uninstallMainLoop(c)
        conn = nil
        markDisconnected()
        callHandler.withLock { $0 }?.connectionClosed()  // handlers often capture the connection: break that cycle
        let leftover = pendingCalls.values
        pendingCalls = [:]
        for box in leftover {
            if let p = box.pending {
                box.pending = nil
                dbus_pending_call_cancel(p)
                dbus_pending_call_unref(p)
            }
            box.resume(.failure(DBusError.disconnected()))
        }
        dbus_connection_unref(c)
    }

    /// Marks the connection disconnected: ends signal streams, wakes waiters. Idempotent.
    func markDisconnected() {
        let (subs, waiters) = shared.withLock { s -> ([Subscription], [CheckedContinuation<Void, Never>]) in
            guard s.connected else { return ([], []) }
            s.connected = false
            let subs = Array(s.subscriptions.values)
            let waiters = Array(s.disconnectWaiters.values)
            s.subscriptions = [:]
            s.disconnectWaiters = [:]
            return (subs, waiters)
        }
        subs.forEach { $0.continuation.finish() }
        waiters.forEach { $0.resume() }
    }

    func waitUntilDisconnected() async {
        let id = shared.withLock { $0.makeID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
                let resumeNow = shared.withLock { s -> Bool in
                    if !s.connected || Task.isCancelled { return true }
                    s.disconnectWaiters[id] = cont
                    return false
                }
                if resumeNow { cont.resume() }
            }
        } onCancel: {
            let cont = shared.withLock { $0.disconnectWaiters.removeValue(forKey: id) }
            cont?.resume()
        }
    }

    // MARK: Sending

    /// Queues a message for sending (FIFO with every other send from the same thread/task).
    func send(_ msg: RawMessage) throws(DBusError) {
        guard shared.withLock({ $0.connected }) else { throw DBusError.disconnected() }
        if msg.containsUnixFDs, !canPassFDs {
            throw DBusError(name: DBusError.notSupportedName, message: "this connection cannot pass unix file descriptors")
        }
        queue.async {
            guard let c = self.conn else { return }
            _ = dbus_connection_send(c, msg.ptr, nil)
        }
    }

    /// Emits a signal (broadcast, or unicast to `destination`).
    func emitSignal(path: DBusObjectPath, interface: String, member: String, arguments: [DBusValue],
                    destination: String?) throws {
        let msg = try RawMessage.signal(path: path, interface: interface, member: member)
        if let destination { try msg.setDestination(destination) }
        try msg.append(arguments)
        try send(msg)
    }

    func sendWithReply(_ msg: RawMessage, timeout: Duration) async throws -> RawMessage {
        let box = PendingReply(core: self)
        let ms = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        let timeoutMs = Int32(clamping: max(1, ms))
        queue.async { self.startCall(box, msg, timeoutMs) }
        return try await withTaskCancellationHandler {
            try await box.wait().get()
        } onCancel: {
            box.resume(.failure(CancellationError()))
            queue.async { self.dropCall(box) }
        }
    }

    private func startCall(_ box: PendingReply, _ msg: RawMessage, _ timeoutMs: Int32) {
        guard !box.isDone else { return }
        guard let c = conn else {
            box.resume(.failure(DBusError.disconnected()))
            return
        }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(c, msg.ptr, &pending, timeoutMs) != 0, let p = pending else {
            box.resume(.failure(DBusError.disconnected()))
            return
        }
        box.pending = p
        pendingCalls[ObjectIdentifier(box)] = box
        _ = dbus_pending_call_set_notify(p, pendingNotify, Unmanaged.passRetained(box).toOpaque(), releasePending)
        if dbus_pending_call_get_completed(p) != 0 { completeCall(box) }
    }

    /// The reply arrived or the call timed out (on the queue).
    func completeCall(_ box: PendingReply) {
        guard let p = box.pending else { return }
        box.pending = nil
        pendingCalls[ObjectIdentifier(box)] = nil
        let reply = dbus_pending_call_steal_reply(p)
        dbus_pending_call_unref(p)
        // libdbus completes outstanding calls with a synthesized NoReply error when the
        // connection drops: report that as a disconnection.
        if let reply, dbus_message_get_type(reply) == 3,
           let name = dbus_message_get_error_name(reply), String(cString: name) == DBusError.noReplyName,
           let c = conn, dbus_connection_get_is_connected(c) == 0 {
            dbus_message_unref(reply)
            box.resume(.failure(DBusError.disconnected("no reply before the connection closed")))
        } else if let reply {
            box.resume(.success(RawMessage(owning: reply)))
        } else {
            box.resume(.failure(DBusError.disconnected("no reply")))
        }
    }

    private func dropCall(_ box: PendingReply) {
        guard let p = box.pending else { return }
        box.pending = nil
        pendingCalls[ObjectIdentifier(box)] = nil
        dbus_pending_call_cancel(p)
        dbus_pending_call_unref(p)
    }

    // MARK: Incoming messages

    /// The connection filter (on the queue, inside dbus_connection_dispatch). Returns true if handled.
    func filter(_ ptr: OpaquePointer) -> Bool {
        let msg = RawMessage(retaining: ptr)
        switch msg.type {
        case 4:  // signal
            if msg.interface == "org.freedesktop.DBus.Local", msg.member == "Disconnected" {
                markDisconnected()
                queue.async { self.teardown() }
                return true
            }
            deliverSignal(msg)
            return false
        case 1:  // method call
            guard let handler = callHandler.withLock({ $0 }) else { return false }
            handler.handle(DBusIncomingCall(raw: msg, core: self))
            return true
        default:
            return false
        }
    }

    private func deliverSignal(_ msg: RawMessage) {
        guard shared.withLock({ !$0.subscriptions.isEmpty || !$0.ownerTrackers.isEmpty }) else { return }
        guard let snapshot = try? msg.snapshot() else { return }
        // Keep the owner cache of tracked well-known names current.
        if snapshot.sender == "org.freedesktop.DBus", snapshot.member == "NameOwnerChanged",
           snapshot.interface == "org.freedesktop.DBus", snapshot.body.count == 3,
           case .string(let name) = snapshot.body[0], case .string(let newOwner) = snapshot.body[2] {
            shared.withLock { s in
                if s.ownerTrackers[name] != nil { s.owners[name] = .some(newOwner.isEmpty ? nil : newOwner) }
            }
        }
        let targets = shared.withLock { s in
            s.subscriptions.values.filter { sub in
                sub.rule.matches(snapshot, senderOwner: { name in s.owners[name] })
            }.map(\.continuation)
        }
        targets.forEach { $0.yield(snapshot) }
    }
}
