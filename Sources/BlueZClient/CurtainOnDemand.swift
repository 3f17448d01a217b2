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
    /// status meanwhile; then releases it. Gives the link up sooner when another curtain of the adapter waits for a
    /// connection slot and no command is under way here. Throws like ``waitUntilLinkLost(timeout:)`` when the link
    /// goes first.
    func holdThenRelease(_ hold: Duration) async throws {
        guard let device = devicePath else { return }
        let clock = configuration.clock
        lastCommandAt = clock.elapsed()
        let serial = linkSerial
        let generation = cache.generation
        let poller = Task { [weak self] in await self?.pollStatus(serial: serial) }
        defer { poller.cancel() }
        while true {
            let remaining = lastCommandAt + hold - clock.elapsed()
            if remaining <= .zero { break }
            // Checked again after the budget answered: a command that started meanwhile keeps the link (release()
            // takes it from later commands before its first await).
            if await givesWay(), commandsInProgress == 0 {
                logger.info("releasing the link before the hold ends: another curtain waits for a connection slot")
                break
            }
            do {
                try await until(timeout: remaining) { () -> Bool? in
                    try self.checkGeneration(generation)
                    if self.reconnectRequested { throw Restart(reason: "reconnect requested", immediate: true) }
                    try self.checkLinkUp(device)
                    if let fault = self.notifyFault { throw NotifyFault(reason: fault) }
                    return self.slotWanted && self.commandsInProgress == 0 && !self.connectWanted ? true : nil
                }
            } catch CurtainError.timeout {
                continue  // the hold may have been extended by a command meanwhile
            }
        }
        await release(device)
    }

    /// Whether to give the link up now for a curtain waiting for a slot: one waits, and no command is under way here.
    func givesWay() async -> Bool {
        guard slotWanted, let budget = configuration.budget else { return false }
        guard commandsInProgress == 0, !connectWanted else { return false }
        slotWanted = false
        return await budget.isWanted(by: slotName)
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
        await giveSlot()
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
    /// does not come up in time. The time spent waiting in line for a connection slot does not count.
    func connectForCommand() async -> DBusObjectPath? {
        struct Queued: Error {}
        connectWanted = true
        changed()
        let limit = configuration.connectTimeout + configuration.resolveTimeout
        while true {
            do {
                return try await until(timeout: limit) { () -> DBusObjectPath? in
                    if self.linkUp, let path = self.commandPath { return path }
                    if self.queuedForSlot { throw Queued() }
                    return nil
                }
            } catch is Queued {
                // In line for a slot: wait there for as long as it takes (the command is queued, not refused).
                guard (try? await until(timeout: nil) { () -> Bool? in self.queuedForSlot ? nil : true }) != nil else {
                    break
                }
            } catch {
                break
            }
        }
        connectWanted = false
        return nil
    }
}

/// The connection budget (``ConnectionBudget``): a slot is taken before connecting and, on demand, given back with
/// the link.
extension CurtainClient {
    /// This curtain's name in the budget.
    nonisolated var slotName: String { configuration.deviceAddress ?? "curtain" }

    /// Takes a slot (waiting in line while the adapter's budget is spent); nothing without a budget or when held.
    func takeSlot() async throws {
        guard let budget = configuration.budget, !holdsSlot else { return }
        queuedForSlot = true
        changed()
        defer {
            queuedForSlot = false
            changed()
        }
        let inUse = await budget.holding.count
        let inLine = await budget.waiting.count
        if inUse >= budget.limit || inLine > 0 {
            logger.info("waiting for a connection slot: \(inUse) of \(budget.limit) in use (curtain.connections)")
        }
        try await budget.acquire(slotName)
        holdsSlot = true
    }

    /// Gives the slot back.
    func giveSlot() async {
        guard holdsSlot, let budget = configuration.budget else { return }
        holdsSlot = false
        await budget.release(slotName)
    }

    /// On the way out: the slot back, and no more wake-ups.
    func leaveBudget() async {
        await giveSlot()
        await configuration.budget?.onWanted(slotName, nil)
    }

    func wantSlot() {
        slotWanted = true
        changed()
    }
}
