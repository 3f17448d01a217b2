import CurtainProtocol
import DBus

/// The on-demand connection policy (``CurtainProfile/ConnectionPolicy/onDemand(hold:)``, the SwitchBot): connect for
/// a command, keep the link for the hold after the last one while polling the device's status, then release it and
/// hear the curtain through its advertisements until the next command. As pySwitchbot does it
/// (`switchbot/devices/device.py`: `_reset_disconnect_timer` after every command, `_disconnect_from_timer` after
/// `DISCONNECT_DELAY`); docs/bluez-notes.md.
extension CurtainClient {
    /// Between commands: the device known, discovery filtered on its service running so that its advertisements
    /// (position, motion, battery, calibration) are heard, until a command wants the link.
    func standBy() async throws {
        let generation = try await waitForBlueZ()
        let adapter = try await waitForAdapter(generation: generation)
        let device = try await findDevice(adapter: adapter, generation: generation)
        // Only advertisements heard from now on count: the ServiceData bluetoothd still holds may be from before the
        // last connection (a curtain that stops advertising while connected), and would end the move in flight.
        await watchAdvertisements(device: device)
        setConnection(.standby, detail: "released between commands; the next command connects")
        try await until(timeout: nil) { () -> Bool? in
            try self.checkGeneration(generation)
            try self.checkAdapterPowered(adapter)
            if self.reconnectRequested {
                self.reconnectRequested = false
                return true
            }
            return self.connectWanted ? true : nil
        }
    }

    /// Keeps the link until `hold` has passed since the last command (or since it came up), polling the device's
    /// status meanwhile; then releases it. Throws like ``waitUntilLinkLost(timeout:)`` when the link goes first.
    func holdThenRelease(_ hold: Duration) async throws {
        guard let device = devicePath else { return }
        let clock = configuration.clock
        lastCommandAt = clock.elapsed()
        let serial = linkSerial
        let poller = Task { [weak self] in await self?.pollStatus(serial: serial) }
        defer { poller.cancel() }
        while true {
            let remaining = lastCommandAt + hold - clock.elapsed()
            if remaining <= .zero { break }
            do {
                try await waitUntilLinkLost(timeout: remaining)
                throw Restart(reason: "no device")  // it returns, rather than throwing, only without a device
            } catch CurtainError.timeout {
                continue  // the hold may have been extended by a command meanwhile
            }
        }
        await release(device)
    }

    /// Disconnects (bluetoothd keeps the GATT objects for the next connection) and waits for the link to go down.
    func release(_ device: DBusObjectPath) async {
        linkUp = false  // a command from now on waits for the next link
        _ = try? await bus.call(destination: Self.bluez, path: device, interface: Self.deviceInterface,
                                member: "Disconnect", timeout: configuration.callTimeout)
        _ = try? await until(timeout: configuration.callTimeout) { () -> Bool? in
            self.property(device, Self.deviceInterface, "Connected") == .boolean(true) ? nil : true
        }
        endSubscription()
        pendingRequest = nil
        notifyFaultsOnLink = 0
        recoveryNotifyMethod = nil
        commandPath = nil
        statusPath = nil
        setConnection(.standby, detail: "released \(profile.connection.hold.map { "\($0)" } ?? "") after the last command")
    }

    /// While the link of subscription `serial` is held: the device's own status request every
    /// ``CurtainClientConfiguration/pollInterval`` (SwitchBot `57 02`), unless a reply is still awaited. A device
    /// that stops advertising while connected is heard this way, a pull included.
    func pollStatus(serial: Int) async {
        let clock = configuration.clock
        var skipped = 0
        while !Task.isCancelled {
            do { try await clock.sleep(for: configuration.pollInterval) } catch { return }
            guard serial == linkSerial else { return }
            guard linkUp, let path = commandPath,
                  let frames = try? profile.codec.frames(for: .query(.status)), !frames.isEmpty else { continue }
            // A command's reply is awaited: let it come first (SwitchBot replies do not say what they answer), but
            // not for ever, should it be lost.
            if let pending = pendingRequest, pending != .query(.status), skipped < 4 {
                skipped += 1
                continue
            }
            skipped = 0
            try? await write(frames, for: .query(.status), to: path)
        }
    }

    /// A command while the link is released: asks the connection cycle for the link and waits for it; nil when it
    /// does not come up in time.
    func connectForCommand() async -> DBusObjectPath? {
        connectWanted = true
        changed()
        let limit = configuration.connectTimeout + configuration.resolveTimeout
        let path = try? await until(timeout: limit) { () -> DBusObjectPath? in
            self.linkUp ? self.commandPath : nil
        }
        if path == nil { connectWanted = false }
        return path
    }
}
