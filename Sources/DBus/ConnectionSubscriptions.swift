internal import CDBus
import Synchronization

/// Signal subscriptions of a connection: local routing plus the bus's match rules and name owners.
extension ConnectionCore {
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
