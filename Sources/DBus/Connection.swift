internal import CDBus
import Dispatch
import Glibc


/// A connection to a D-Bus message bus (or a peer), integrated with Dispatch.
///
/// - The connection never exits the process when the bus goes away (libdbus's default for bus
///   connections): observe `waitUntilDisconnected()` and reconnect instead.
/// - All libdbus work for a connection runs on one private serial queue; the public API can be
///   used from any thread or task. Method handlers and stream consumers never run on that queue.
/// - Call `close()` when done; dropping the last reference closes the connection too.
public final class DBusConnection: Sendable {
    /// Which bus to connect to.
    public enum Bus: Sendable, Hashable {
        /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `unix:path=/run/dbus/system_bus_socket`).
        case system
        /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
        case session
        /// An explicit address such as `unix:path=/tmp/x/bus`. With `registerWithBus: false` the
        /// connection is peer-to-peer (no `Hello`, no unique name, no match rules on a bus).
        case address(String, registerWithBus: Bool = true)
    }

    let core: ConnectionCore

    private init(core: ConnectionCore) { self.core = core }

    deinit { core.closeInBackground() }

    /// Opens a connection (connects and registers with the bus on a private queue, not on the
    /// Swift cooperative pool).
    public static func open(_ bus: Bus) async throws -> DBusConnection {
        let queue = DispatchQueue(label: "roombridge.dbus.connection")
        let result: Result<ConnectionCore, DBusError> = await withCheckedContinuation { cont in
            queue.async { cont.resume(returning: ConnectionCore.open(bus, queue: queue)) }
        }
        return DBusConnection(core: try result.get())
    }

    /// The unique bus name (`:1.42`), nil for peer-to-peer connections.
    public var uniqueName: String? { core.uniqueName }

    /// False once the connection was closed or the bus went away.
    public var isConnected: Bool { core.shared.withLock { $0.connected } }

    /// True if unix file descriptors (`h`) can be passed on this connection.
    public var canPassUnixFDs: Bool { core.canPassFDs }

    /// Returns when the connection is disconnected (immediately if it already is), or when the
    /// calling task is cancelled.
    public func waitUntilDisconnected() async {
        await core.waitUntilDisconnected()
    }

    /// Flushes queued messages, closes the connection, ends all signal streams and fails all
    /// pending calls with `DBusError.disconnected`. Idempotent.
    public func close() async {
        await withCheckedContinuation { (cont: CheckedContinuation<Void, Never>) in
            core.queue.async {
                self.core.teardown()
                cont.resume()
            }
        }
    }

    // MARK: Method calls

    /// Calls a method and returns the reply body.
    ///
    /// Throws the remote error verbatim as `DBusError(name, message)`, `DBusError` with name
    /// `org.freedesktop.DBus.Error.NoReply` on timeout, `DBusError.disconnected` when the
    /// connection is gone, or `CancellationError` if the task is cancelled (the pending call is
    /// then cancelled in libdbus; a late reply is dropped).
    public func call(destination: String?, path: DBusObjectPath, interface: String?, member: String,
                     arguments: [DBusValue] = [], timeout: Duration = .seconds(25)) async throws -> [DBusValue] {
        try await callReturningMessage(destination: destination, path: path, interface: interface,
                                       member: member, arguments: arguments, timeout: timeout).body
    }

    /// Like `call`, returning the whole reply message (sender, signature, body).
    public func callReturningMessage(destination: String?, path: DBusObjectPath, interface: String?, member: String,
                                     arguments: [DBusValue] = [], timeout: Duration = .seconds(25)) async throws -> DBusMessage {
        let msg = try RawMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
        try msg.append(arguments)
        if msg.containsUnixFDs, !core.canPassFDs {
            throw DBusError(name: DBusError.notSupportedName, message: "this connection cannot pass unix file descriptors")
        }
        let reply = try await core.sendWithReply(msg, timeout: timeout)
        let snapshot = try reply.snapshot()
        if snapshot.kind == .error {
            let name = snapshot.errorName ?? DBusError.failedName
            if name == DBusError.noReplyName, !isConnected { throw DBusError.disconnected("no reply before the bus went away") }
            let text: String
            if case .string(let s)? = snapshot.body.first { text = s } else { text = "" }
            throw DBusError(name: name, message: text)
        }
        return snapshot
    }

    /// Sends a method call without waiting for (or wanting) a reply.
    public func callNoReply(destination: String?, path: DBusObjectPath, interface: String?, member: String,
                            arguments: [DBusValue] = []) throws {
        let msg = try RawMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
        msg.setNoReply(true)
        try msg.append(arguments)
        try core.send(msg)
    }

    /// Emits a signal (broadcast, or unicast to `destination`).
    public func emitSignal(path: DBusObjectPath, interface: String, member: String,
                           arguments: [DBusValue] = [], destination: String? = nil) throws {
        let msg = try RawMessage.signal(path: path, interface: interface, member: member)
        if let destination { try msg.setDestination(destination) }
        try msg.append(arguments)
        try core.send(msg)
    }

    // MARK: Signals

    /// Subscribes to messages matching `rule`: adds the match rule on the bus (awaiting its
    /// acceptance, so no signal sent after this returns is missed) and filters locally. The
    /// stream ends when the connection closes; stopping iteration removes the rule.
    public func signals(matching rule: DBusMatchRule) async throws -> AsyncStream<DBusMessage> {
        try await core.subscribe(rule)
    }
}

/// The state of one connection. libdbus objects are only touched on `queue`; `shared` is the
/// state also read from other threads.
final class ConnectionCore: @unchecked Sendable {
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
    let shared = Locked(Shared())
    let uniqueName: String?
    let isBusConnection: Bool
    let canPassFDs: Bool
    let objects = ObjectRegistry()

    /// Queue-confined.
    var conn: OpaquePointer?
    var pendingCalls: [ObjectIdentifier: PendingReply] = [:]

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
        objects.removeAll()  // handlers often capture the connection: break that cycle
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
            objects.handle(msg, core: self)
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

    // MARK: Subscriptions

    func subscribe(_ rule: DBusMatchRule) async throws -> AsyncStream<DBusMessage> {
        let (stream, continuation) = AsyncStream<DBusMessage>.makeStream()
        let trackedSender = rule.sender.flatMap { s in
            (s.hasPrefix(":") || s == "org.freedesktop.DBus") ? nil : s
        }
        // Register locally first so that nothing routed after AddMatch is missed.
        let id: UInt64? = shared.withLock { s in
            guard s.connected else { return nil }
            let id = s.makeID()
            s.subscriptions[id] = Subscription(rule: rule, continuation: continuation)
            return id
        }
        guard let id else { throw DBusError.disconnected() }
        if isBusConnection {
            do {
                if let trackedSender { try await trackOwner(trackedSender) }
                _ = try await callBus("AddMatch", [.string(rule.string)])
            } catch {
                shared.withLock { _ = $0.subscriptions.removeValue(forKey: id) }
                if let trackedSender { untrackOwner(trackedSender) }
                throw error
            }
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let stillConnected = self.shared.withLock { s in
                s.subscriptions[id] = nil
                return s.connected
            }
            guard stillConnected, self.isBusConnection else { return }
            self.callBusNoReply("RemoveMatch", [.string(rule.string)])
            if let trackedSender { self.untrackOwner(trackedSender) }
        }
        return stream
    }

    /// Starts tracking the owner of a well-known name used as a match-rule sender.
    private func trackOwner(_ name: String) async throws {
        let first = shared.withLock { s in
            s.ownerTrackers[name, default: 0] += 1
            return s.ownerTrackers[name] == 1
        }
        guard first else { return }
        _ = try await callBus("AddMatch", [.string(DBusMatchRule.nameOwnerChanged(name).string)])
        let owner: String?
        do {
            owner = try await callBus("GetNameOwner", [.string(name)]).first?.string()
        } catch let e as DBusError where e.name == DBusError.nameHasNoOwnerName {
            owner = nil
        }
        shared.withLock { s in
            if s.owners[name] == nil { s.owners[name] = .some(owner) }
        }
    }

    private func untrackOwner(_ name: String) {
        let last = shared.withLock { s in
            s.ownerTrackers[name, default: 1] -= 1
            if s.ownerTrackers[name] == 0 {
                s.ownerTrackers[name] = nil
                s.owners[name] = nil
                return true
            }
            return false
        }
        if last { callBusNoReply("RemoveMatch", [.string(DBusMatchRule.nameOwnerChanged(name).string)]) }
    }

    func callBus(_ member: String, _ args: [DBusValue]) async throws -> [DBusValue] {
        let msg = try RawMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                            interface: "org.freedesktop.DBus", member: member)
        try msg.append(args)
        let reply = try await sendWithReply(msg, timeout: .seconds(25))
        let snap = try reply.snapshot()
        if snap.kind == .error {
            if case .string(let s)? = snap.body.first {
                throw DBusError(name: snap.errorName ?? DBusError.failedName, message: s)
            }
            throw DBusError(name: snap.errorName ?? DBusError.failedName, message: "")
        }
        return snap.body
    }

    func callBusNoReply(_ member: String, _ args: [DBusValue]) {
        guard let msg = try? RawMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                   interface: "org.freedesktop.DBus", member: member) else { return }
        msg.setNoReply(true)
        try? msg.append(args)
        try? send(msg)
    }
}

/// One outstanding method call. `pending` is confined to the connection queue; the result is
/// set exactly once (reply, timeout, cancellation or disconnection) and handed over through the
/// lock, the continuation only wakes the caller.
final class PendingReply: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var result: Result<RawMessage, any Error>?
    }
    private let state = Locked(State())
    let core: ConnectionCore
    var pending: OpaquePointer?

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

private let pendingNotify: DBusPendingCallNotifyFunction = { _, data in
    guard let data else { return }
    let box = Unmanaged<PendingReply>.fromOpaque(data).takeUnretainedValue()
    box.core.completeCall(box)
}

private let releasePending: DBusFreeFunction = { data in
    guard let data else { return }
    Unmanaged<PendingReply>.fromOpaque(data).release()
}
