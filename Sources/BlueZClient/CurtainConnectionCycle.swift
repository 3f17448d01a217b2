import CurtainProtocol
import DBus
import Logging

/// The connection state machine: bluetoothd → adapter → device → link → subscription, and back on a fault.
extension CurtainClient {
    struct BusLost: Error {
        var error = DBusError.disconnected("the bus connection of the curtain client closed")
    }

    /// The notification stream ended, or stayed silent after subscribing, while the link was up.
    struct NotifyFault: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    struct Restart: Error, CustomStringConvertible {
        var reason: String
        var immediate = false
        var description: String { reason }
    }

    func connectOnce() async throws {
        let generation = try await waitForBlueZ()
        let adapter = try await waitForAdapter(generation: generation)
        let device = try await findDevice(adapter: adapter, generation: generation)
        // A slot of the adapter's connection budget, in line while it is spent (a persistent curtain keeps its own).
        try await takeSlot()
        try checkGeneration(generation)
        try await connect(device: device, generation: generation)
        try await subscribe(device: device, generation: generation)
    }

    /// Waits for org.bluez, loads its objects.
    func waitForBlueZ() async throws -> Int {
        if busIsClosed { throw BusLost() }
        if !cache.ownerKnown {
            try await until(timeout: nil) { () -> Bool? in
                if self.busIsClosed { throw BusLost() }
                return self.cache.ownerKnown ? true : nil
            }
        }
        if cache.owner == nil {
            setAdapter(.serviceUnavailable)
            setConnection(.disconnected, detail: BluetoothAdapterState.serviceUnavailable.description)
            try await until(timeout: nil) { () -> Bool? in
                if self.busIsClosed { throw BusLost() }
                return self.cache.owner != nil ? true : nil
            }
        }
        let generation = cache.generation
        if !cache.loaded {
            let loaded: [DBusObjectPath: [String: [String: DBusValue]]]
            do {
                loaded = try await bus.getManagedObjects(destination: Self.bluez, timeout: configuration.callTimeout)
            } catch let e as DBusError {
                if e.name == "org.freedesktop.DBus.Error.AccessDenied" {
                    report(.error(.bluetooth(name: e.name, message: "access to org.bluez was denied (\(e.message)): "
                                             + "install the D-Bus policy dbus/roombridge.conf for the service user")))
                } else {
                    report(.error(CurtainError.fromBlueZ(name: e.name, message: e.message)))
                }
                throw Restart(reason: "GetManagedObjects failed: \(e)")
            }
            guard generation == cache.generation else { throw Restart(reason: "bluetoothd restarted", immediate: true) }
            cache.load(loaded)
        }
        return generation
    }

    func waitForAdapter(generation: Int) async throws -> DBusObjectPath {
        try await until(timeout: nil) { () -> DBusObjectPath? in
            try self.checkGeneration(generation)
            guard let path = self.cache.adapterPath(named: self.configuration.adapterName) else {
                self.setAdapter(.noAdapter)
                self.setConnection(.disconnected, detail: BluetoothAdapterState.noAdapter.description)
                return nil
            }
            guard self.property(path, Self.adapterInterface, "Powered") == .boolean(true) else {
                self.setAdapter(.poweredOff(path: path.rawValue))
                self.setConnection(.disconnected, detail: self.snapshot.adapter.description)
                return nil
            }
            self.setAdapter(.poweredOn(path: path.rawValue))
            return path
        }
    }

    func matchingDevice(adapter: DBusObjectPath) -> DBusObjectPath? {
        cache.matchingDevice(adapter: adapter, address: configuration.deviceAddress, serviceUUID: profile.serviceUUID)
    }

    /// The configured (or first matching) curtain; discovery with a UUID filter while it is not known.
    func findDevice(adapter: DBusObjectPath, generation: Int) async throws -> DBusObjectPath {
        let fresh = forceSearch
        forceSearch = false
        if !fresh, let known = matchingDevice(adapter: adapter) {
            return chooseDevice(known)
        }
        setConnection(.searching, detail: nil)
        cache.startSearch()
        do {
            _ = try await bus.call(destination: Self.bluez, path: adapter, interface: Self.adapterInterface,
                                   member: "SetDiscoveryFilter",
                                   arguments: [.stringVariantDictionary([
                                       "UUIDs": .stringArray([profile.serviceUUID]),
                                       "Transport": .string("le"),
                                   ])], timeout: configuration.callTimeout)
            _ = try await bus.call(destination: Self.bluez, path: adapter, interface: Self.adapterInterface,
                                   member: "StartDiscovery", timeout: configuration.callTimeout)
        } catch let e as DBusError where e.name == "org.bluez.Error.InProgress" {
            // Our own session is still running (e.g. after a reconnect request): keep it.
        } catch let e as DBusError {
            throw Restart(reason: "discovery failed: \(e)")
        }
        // Stopped before this returns or throws, not from a detached task: a StopDiscovery that
        // landed after the next search's StartDiscovery (answered InProgress, kept as ours) ended
        // that search, and a forced reconnect then searched for ever (seen under load in
        // ClientAgainstSimulatorTests.reconnectForcesANewSearch).
        let found: DBusObjectPath
        do {
            found = try await until(timeout: nil) { () -> DBusObjectPath? in
                try self.checkGeneration(generation)
                try self.checkAdapterPowered(adapter)
                guard let found = self.matchingDevice(adapter: adapter) else { return nil }
                return !fresh || self.cache.freshDevices.contains(found) ? found : nil
            }
        } catch {
            await stopDiscovery(adapter)
            throw error
        }
        await stopDiscovery(adapter)
        return chooseDevice(found)
    }

    private func stopDiscovery(_ adapter: DBusObjectPath) async {
        _ = try? await bus.call(destination: Self.bluez, path: adapter, interface: Self.adapterInterface,
                                member: "StopDiscovery", timeout: configuration.callTimeout)
    }

    func chooseDevice(_ path: DBusObjectPath) -> DBusObjectPath {
        if devicePath != path {
            devicePath = path
            let address = (try? property(path, Self.deviceInterface, "Address")?.string()) ?? path.rawValue
            let name = try? property(path, Self.deviceInterface, "Name")?.string()
            report(.device(address: address, name: name))
        }
        return path
    }

    /// Device1.Connect, then ServicesResolved (the reply comes before the GATT objects exist).
    func connect(device: DBusObjectPath, generation: Int) async throws {
        setConnection(.connecting, detail: nil)
        // BlueZ emits Connected=true before the Connect reply, but signals are ingested on their own task, so the
        // reply can overtake it: a cached Connected=false only means "disconnected" once this attempt's
        // Connected=true has been seen.
        let upsBefore = cache.connectedUps[device, default: 0]
        var calledConnect = false
        if property(device, Self.deviceInterface, "Connected") != .boolean(true) {
            calledConnect = true
            do {
                _ = try await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                       member: "Connect", timeout: configuration.connectTimeout)
            } catch let e as DBusError {
                if e.name == "org.freedesktop.DBus.Error.NoReply" {
                    // Cancel the pending attempt as bleak does (Disconnect cancels a pending Connect).
                    _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                            member: "Disconnect", timeout: configuration.callTimeout)
                }
                let kind = BlueZErrorClass(name: e.name, message: e.message)
                report(.error(CurtainError.fromBlueZ(name: e.name, message: e.message)))
                switch kind {
                case .deviceMissing:
                    devicePath = nil
                    throw Restart(reason: "device vanished: \(e)", immediate: true)
                default:
                    throw Restart(reason: "Connect failed (\(kind)): \(e)")
                }
            }
        }
        try await until(timeout: configuration.resolveTimeout) { () -> Bool? in
            try self.checkGeneration(generation)
            guard self.cache.has(device, Self.deviceInterface) else {
                throw Restart(reason: "device removed while resolving services")
            }
            if self.property(device, Self.deviceInterface, "ServicesResolved") == .boolean(true) { return true }
            if self.property(device, Self.deviceInterface, "Connected") == .boolean(false),
               !calledConnect || self.cache.connectedUps[device, default: 0] > upsBefore {
                throw Restart(reason: "disconnected before services were resolved")
            }
            return nil
        }
    }

    /// Finds the characteristics by UUID, subscribes, then asks for STATUS + SCHEDULE (SYNC).
    func subscribe(device: DBusObjectPath, generation: Int) async throws {
        guard let command = cache.characteristic(profile.writeCharacteristicUUID, under: device),
              let status = cache.characteristic(profile.notifyCharacteristicUUID, under: device) else {
            report(.error(.bluetooth(name: "curtain.NotACurtain",
                                     message: "the device has no \(profile.displayName) service \(profile.serviceUUID): "
                                        + "check curtain.profile and curtain.address")))
            _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                    member: "Disconnect", timeout: configuration.callTimeout)
            devicePath = nil
            throw Restart(reason: "not a curtain")
        }
        commandPath = command
        statusPath = status
        linkSerial += 1
        notifyFault = nil
        notificationsSinceSubscribe = 0
        let method = recoveryNotifyMethod ?? configuration.notifyMethod
        do {
            if method == .acquireNotify, try await acquireNotify(status) {
                subscribedWith = .acquireNotify
            } else {
                subscribedWith = .startNotify
                _ = try await bus.call(destination: Self.bluez, path: status, interface: Self.characteristicInterface,
                                       member: "StartNotify", timeout: configuration.callTimeout)
            }
            try checkGeneration(generation)
            linkUp = true
            // StartNotify may be a no-op when BlueZ kept an earlier session, and bluetoothd drops what the device
            // notifies before an AcquireNotify socket exists (gatt-client.c `notify_io_cb`): SYNC makes the device
            // send STATUS then SCHEDULE in every case, and we adopt them (the device is the source of truth).
            if case .pin(let defaultPIN) = profile.login {
                try await write(try profile.codec.frames(for: .login(pin: configuration.pin ?? defaultPIN)),
                                for: .login(pin: configuration.pin ?? defaultPIN), to: command)
            }
            try await write(try profile.codec.frames(for: .command(.sync)), for: .command(.sync), to: command)
            if profile.motionFromAdvertisements { await watchAdvertisements(device: device) }
        } catch let e as DBusError {
            linkUp = false
            throw Restart(reason: "subscribe failed: \(e)")
        }
        // Only a subscription that is heard counts as connected: never "connected" and deaf.
        do {
            try await until(timeout: configuration.firstNotificationTimeout) { () -> Bool? in
                try self.checkGeneration(generation)
                try self.checkLinkUp(device)
                if let fault = self.notifyFault { throw NotifyFault(reason: fault) }
                return self.notificationsSinceSubscribe > 0 ? true : nil
            }
        } catch CurtainError.timeout {
            throw NotifyFault(reason: "no notification arrived within \(configuration.firstNotificationTimeout) "
                              + "of subscribing (\(method.rawValue)) and asking for STATUS")
        }
        setConnection(.connected, detail: nil)
    }

    /// What to do after the notification stream of a link ended while the link stayed up.
    enum NotifyRecovery: Equatable {
        /// Subscribe again on the same link, with this method.
        case subscribeAgain(CurtainNotifyMethod)
        /// Disconnect and connect again.
        case reconnect

        /// First fault: the configured method again (bluetoothd may simply have ended the session); second: StartNotify
        /// (what bleak falls back to when AcquireNotify misbehaves); then a new link.
        static func after(faults: Int, configured: CurtainNotifyMethod) -> NotifyRecovery {
            switch faults {
            case 0, 1: .subscribeAgain(configured)
            case 2 where configured == .acquireNotify: .subscribeAgain(.startNotify)
            default: .reconnect
            }
        }
    }

    /// Logs the fault, shows it (last error, connection state) and prepares the recovery; the connection cycle then
    /// runs again at once (subscribing on the same link, or connecting anew).
    func recover(from fault: NotifyFault) async {
        notifyFaultsOnLink += 1
        let recovery = NotifyRecovery.after(faults: notifyFaultsOnLink, configured: configuration.notifyMethod)
        let action: String
        switch recovery {
        case .subscribeAgain(let m): action = "subscribing again (\(m.rawValue))"
        case .reconnect: action = "reconnecting"
        }
        logger.warning("curtain notifications stopped while connected: \(fault.reason); \(action)")
        report(.error(.bluetooth(name: "curtain.NotificationsStopped",
                                 message: "notifications from the curtain stopped while connected (\(fault.reason)); "
                                 + action)))
        endSubscription()
        switch recovery {
        case .subscribeAgain(let method):
            recoveryNotifyMethod = method
            setConnection(.connecting, detail: "notifications stopped; \(action)")
        case .reconnect:
            if let device = devicePath {
                _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                        member: "Disconnect", timeout: configuration.callTimeout)
                // Wait for BlueZ to report the link down, so that the next cycle connects anew.
                _ = try? await until(timeout: configuration.callTimeout) { () -> Bool? in
                    self.property(device, Self.deviceInterface, "Connected") == .boolean(true) ? nil : true
                }
            }
            await linkDown(detail: "notifications stopped; reconnecting")
        }
    }

    func checkLinkUp(_ device: DBusObjectPath) throws {
        guard cache.has(device, Self.deviceInterface) else { throw Restart(reason: "device removed") }
        if property(device, Self.deviceInterface, "ServicesResolved") != .boolean(true)
            || property(device, Self.deviceInterface, "Connected") != .boolean(true) {
            throw Restart(reason: "link lost")
        }
    }

    /// Returns at once when there is no device; throws when the link goes (or ``CurtainError/timeout(_:)`` after
    /// `timeout`).
    func waitUntilLinkLost(timeout: Duration? = nil) async throws {
        guard let device = devicePath else { return }
        let generation = cache.generation
        try await until(timeout: timeout) { () -> Bool? in
            try self.checkGeneration(generation)
            if self.reconnectRequested { throw Restart(reason: "reconnect requested", immediate: true) }
            try self.checkLinkUp(device)
            if let fault = self.notifyFault { throw NotifyFault(reason: fault) }
            return nil
        }
    }

    /// Ends the current subscription on our side (closes an AcquireNotify socket; later packets are ignored).
    func endSubscription() {
        notifyReader?.stop()
        notifyReader = nil
        subscribedWith = nil
        notifyFault = nil
        linkSerial += 1
        linkUp = false
    }

    func linkDown(detail: String?) async {
        endSubscription()
        // A SwitchBot's motor runs on after the link goes: the move the daemon commanded is still its own.
        if profile.connection.hold == nil { tracker.linkLost() }
        pendingRequest = nil
        notifyFaultsOnLink = 0
        recoveryNotifyMethod = nil
        commandPath = nil
        statusPath = nil
        if snapshot.connection != .disconnected {
            setConnection(.disconnected, detail: detail ?? "link lost; reconnecting")
        }
        if profile.connection.hold != nil { await giveSlot() }
    }

    func checkGeneration(_ generation: Int) throws {
        if busIsClosed { throw BusLost() }
        if generation != cache.generation || cache.owner == nil {
            throw Restart(reason: "bluetoothd restarted or left the bus", immediate: cache.owner != nil)
        }
    }

    func checkAdapterPowered(_ adapter: DBusObjectPath) throws {
        guard cache.has(adapter, Self.adapterInterface) else { throw Restart(reason: "adapter removed", immediate: true) }
        if property(adapter, Self.adapterInterface, "Powered") != .boolean(true) {
            throw Restart(reason: "adapter powered off", immediate: true)
        }
    }
}
