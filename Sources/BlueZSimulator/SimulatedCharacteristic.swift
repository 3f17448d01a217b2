import CurtainProtocol
import DBus
import DBusExport
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// `GattCharacteristic1` behaviour: reads, writes and the two kinds of notify session (StartNotify and
/// AcquireNotify), and delivering what the curtain model notifies (gatt-client.c).
extension BlueZSimulator {
    /// have already been created before"), and `characteristic_read_value` / `characteristic_write_value` only check
    /// that (`if (!gatt) return btd_error_failed(msg, "Not connected")`). bleak relies on it when it reuses its
    /// service cache (`dangerous_use_bleak_cache`, as PySwitchbot's bleak-retry-connector does).
    func readValue(_ path: DBusObjectPath) throws -> [DBusValue] {
        guard connected, gattExported else { throw BlueZError.gattNotConnected }
        guard path == statusPath else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        }
        guard let bytes = model.readValue else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted")
        }
        // A read updates Value and so also emits PropertiesChanged (bleak client.py start_notify comment).
        emitValue(bytes, at: statusPath)
        return [.bytes(bytes)]
    }

    func writeValue(_ path: DBusObjectPath, _ call: DBusMethodCall) async throws -> [DBusValue] {
        guard connected, gattExported else { throw BlueZError.gattNotConnected }
        guard path == commandPath else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")
        }
        guard call.arguments.count == 2, let bytes = try? call.arguments[0].bytes(),
              let options = try? call.arguments[1].stringVariantDictionary() else { throw BlueZError.invalidArgs }
        var withResponse = true
        if let type = options["type"]?.unwrappingVariants {
            guard case .string(let t) = type else { throw BlueZError.invalidArgs }
            switch t.lowercased() {
            case "request": withResponse = true
            case "command": withResponse = false
            default:
                throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
            }
        }
        writes.append(bytes)
        recordTiming(&timedWrites, bytes)
        if failWrites.count > 0 {
            failWrites.count -= 1
            throw failWrites.error
        }
        switch model.write(bytes, withResponse: withResponse) {
        case .accepted(let frames):
            writeCount += 1
            await deliver(frames)
            return []
        case .attError(let code):
            throw BlueZError.att(code)
        case .refused(let frames):
            await deliver(frames)
            return []
        }
    }

    func startNotify(_ path: DBusObjectPath, _ call: DBusMethodCall) async throws -> [DBusValue] {
        guard disconnecting == 0 else { throw BlueZError.notConnected } // "Device is disconnecting"
        guard path == statusPath else {
            throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        }
        releaseAcquiredNotifyIfHungUp()
        guard acquiredNotifyFD == nil else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")
        }
        let sender = call.sender ?? ""
        // gatt-client.c `characteristic_start_notify()`: one session per client; a second call succeeds when the
        // session is registered with the device, and is "In Progress" while it waits for a link (`notify_id` 0).
        if notifySubscribers.contains(sender) {
            guard connected else { throw BlueZError.inProgress }
            return []
        }
        notifySubscribers.insert(sender)
        watchForDeparture(of: sender)
        // Not connected: BlueZ answers success and registers for the next connection.
        guard connected, servicesResolved else { return [] }
        // The first session writes the CCCD (shared/gatt-client.c `register_notify`: later ones only count). The
        // controller answers the CCCD write at once with STATUS + SCHEDULE, before its Write Response; bluetoothd
        // passes notifications to handlers whose CCCD write is still pending (`notify_handler`), so the Value
        // signals come first, then Notifying=true and the reply (`register_notify_cb`).
        if !notifying {
            await deliver(model.subscribeNotifications())
            setNotifying(true)
        }
        return []
    }

    func stopNotify(_ path: DBusObjectPath, _ call: DBusMethodCall) throws -> [DBusValue] {
        if acquiredNotifyFD != nil {
            releaseAcquiredNotify()
            return []
        }
        guard notifySubscribers.remove(call.sender ?? "") != nil else {
            throw DBusError(name: "org.bluez.Error.Failed", message: "No notify session started")
        }
        if notifySubscribers.isEmpty { setNotifying(false) }
        return []
    }

    /// AcquireNotify (gatt-client.c `characteristic_acquire_notify`): a SOCK_SEQPACKET socket carrying one
    /// notification per packet; refused while another session (acquired or StartNotify) exists.
    func acquireNotify(_ path: DBusObjectPath) async throws -> [DBusValue] {
        guard connected, servicesResolved else { throw BlueZError.gattNotConnected }
        guard path == statusPath else {
            throw DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        }
        releaseAcquiredNotifyIfHungUp()
        guard acquiredNotifyFD == nil else {
            throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")
        }
        guard notifySubscribers.isEmpty else { throw BlueZError.inProgress }
        // The CCCD write makes the controller send STATUS then SCHEDULE at once. bluetoothd creates the socket only
        // when the CCCD write has completed (`register_notify_io_cb` → `characteristic_ready` → `create_sock`) and
        // drops what is notified before (`notify_io_cb`: "Drop notification if the sock is not ready").
        droppedNotifications += model.subscribeNotifications().count
        // Exactly bluetoothd's pair (gatt-client.c `create_sock()`): O_NONBLOCK is part of the open file
        // description, so the client's end arrives non-blocking.
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_LOCAL, type, 0, &fds) == 0 else {
            throw DBusError(name: "org.bluez.Error.Failed", message: String(cString: strerror(errno)))
        }
        acquiredNotifyFD = fds[0]
        let watch = DispatchSource.makeReadSource(fileDescriptor: fds[0], queue: .global())
        watch.setEventHandler { [weak self] in
            // The client never writes to a notify socket: readable means hung up. (Cancelling drops this handler
            // and with it the reference to the source.)
            watch.cancel()
            Task { await self?.releaseAcquiredNotifyIfHungUp() }
        }
        watch.resume()
        acquiredNotifyWatch = watch
        let clientEnd = DBusUnixFD(taking: fds[1])
        // NotifyAcquired=true; Notifying stays as it is: only StartNotify's `register_notify_cb` sets it.
        try? connection?.updateProperty("NotifyAcquired", interface: Self.characteristicInterface, path: statusPath,
                                        value: .boolean(true))
        return [.unixFD(clientEnd), .uint16(247)]
    }

    /// BlueZ ends an AcquireNotify session as soon as the client closes its end (gatt-client.c `sock_hup` →
    /// `destroy_sock`, an io disconnect handler), e.g. when the client process exits: NotifyAcquired=false. The
    /// simulator's watch calls this on the hang-up; it is also checked before a new session is refused.
    func releaseAcquiredNotifyIfHungUp() {
        guard let fd = acquiredNotifyFD else { return }
        var p = pollfd(fd: fd, events: 0, revents: 0)  // POLLHUP and POLLERR are always reported
        if poll(&p, 1, 0) > 0, p.revents & Int16(POLLHUP | POLLERR) != 0 {
            releaseAcquiredNotify()
        }
    }

    func releaseAcquiredNotify() {
        guard let fd = acquiredNotifyFD else { return }
        acquiredNotifyFD = nil
        acquiredNotifyWatch?.cancel()
        acquiredNotifyWatch = nil
        close(fd)
        // gatt-client.c `destroy_sock()`: NotifyAcquired=false (Notifying was never set for this session).
        try? connection?.updateProperty("NotifyAcquired", interface: Self.characteristicInterface, path: statusPath,
                                        value: .boolean(false))
    }

    /// bluetoothd ends the notify session of the status characteristic while the link stays up: an AcquireNotify
    /// socket is closed (`destroy_sock()`), StartNotify sessions are dropped (`update_notifying()`:
    /// Notifying=false). For testing clients' recovery; the link and the GATT objects stay.
    func endNotifySessions() {
        if acquiredNotifyFD != nil {
            releaseAcquiredNotify()
        } else if !notifySubscribers.isEmpty {
            notifySubscribers.removeAll()
            setNotifying(false)
        }
    }

    func setNotifying(_ on: Bool) {
        notifying = on
        guard gattExported else { return }
        try? connection?.updateProperty("Notifying", interface: Self.characteristicInterface, path: statusPath,
                                        value: .boolean(on))
    }

    /// Notifies frames to subscribers (PropertiesChanged on Value, one per frame, like BlueZ's FLUSH);
    /// also refreshes the advertised service data. Frames are lost when nobody is subscribed.
    func deliver(_ frames: [[UInt8]]) async {
        for bytes in frames {
            // Notifications flow whenever the link is up (gatt-client.c `notify_cb()`), resolved or not.
            guard connected else { continue }
            recordTiming(&timedNotifications, bytes)
            if let fd = acquiredNotifyFD {
                // AcquireNotify: one SOCK_SEQPACKET packet per notification, no Value signal. Never block the
                // actor: a reader that does not keep up loses notifications (as over the air); a closed peer ends
                // the session.
                let sent = bytes.withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK { releaseAcquiredNotify() }
            } else if !notifySubscribers.isEmpty {
                emitValue(bytes, at: statusPath)
            }
        }
        // The advertisement changes with the state; bluetoothd only sees it while it scans (a discovery session).
        // SwitchBot motion changes only the advertisement, so compare it rather than wait for a frame.
        // A peripheral that stops advertising while connected is heard again once the link is down (``linkLost()``).
        if !discoverySessions.isEmpty, deviceVisible, !connected || advertisesWhileConnected,
           !frames.isEmpty || model.advertisement != lastAdvertisement {
            advertiseServiceData()
        }
    }

    /// Stores `Value` and always emits PropertiesChanged (BlueZ emits one per notification even when the
    /// value repeats: `G_DBUS_PROPERTY_CHANGED_FLAG_FLUSH` in gatt-client.c `write_characteristic_cb`).
    func emitValue(_ bytes: [UInt8], at path: DBusObjectPath) {
        guard let c = connection, gattExported else { return }
        // The property is declared without automatic change signals; emit exactly one per notification.
        try? c.updateProperty("Value", interface: Self.characteristicInterface, path: path, value: .bytes(bytes))
        try? c.emitSignal(path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                          arguments: [.string(Self.characteristicInterface),
                                      .stringVariantDictionary(["Value": .bytes(bytes)]), .stringArray([])])
    }
}
