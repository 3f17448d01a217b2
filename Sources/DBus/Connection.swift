internal import CDBus
import Dispatch
import Glibc
import Synchronization

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
        try core.emitSignal(path: path, interface: interface, member: member, arguments: arguments, destination: destination)
    }

    // MARK: Signals

    /// Subscribes to messages matching `rule`: adds the match rule on the bus (awaiting its
    /// acceptance, so no signal sent after this returns is missed) and filters locally. The
    /// stream ends when the connection closes; stopping iteration removes the rule.
    public func signals(matching rule: DBusMatchRule) async throws -> AsyncStream<DBusMessage> {
        try await core.subscribe(rule)
    }
}
