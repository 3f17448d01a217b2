import CurtainProtocol
import DBus
import Logging

/// GATT I/O: writes, notifications (both subscription methods) and advertisements, decoded by the profile.
extension CurtainClient {

    /// Writes a request's frames with the profile's write type, remembering which reply is awaited.
    func write(_ frames: [[UInt8]], for request: CurtainWireRequest, to path: DBusObjectPath) async throws {
        for frame in frames {
            pendingRequest = request
            try await writeRequest(frame, to: path)
        }
    }

    /// AcquireNotify when offered; returns false to fall back to StartNotify.
    func acquireNotify(_ status: DBusObjectPath) async throws -> Bool {
        guard bus.canPassUnixFDs,
              property(status, Self.characteristicInterface, "NotifyAcquired") != nil else { return false }
        let reply: [DBusValue]
        do {
            reply = try await bus.call(destination: Self.bluez, path: status, interface: Self.characteristicInterface,
                                       member: "AcquireNotify", arguments: [.stringVariantDictionary([:])],
                                       timeout: configuration.callTimeout)
        } catch let e as DBusError where ["org.bluez.Error.NotSupported", "org.bluez.Error.NotPermitted",
                                          "org.bluez.Error.InProgress"].contains(e.name) {
            logger.debug("AcquireNotify refused (\(e)); using StartNotify")
            return false
        }
        guard let value = reply.first, let fd = try? value.unixFD() else {
            throw DBusError.failed("AcquireNotify returned no file descriptor")
        }
        let reader = NotifySocketReader(fd: fd.take())
        notifyReader?.stop()
        notifyReader = reader
        let serial = linkSerial
        Task { [weak self] in
            for await item in reader.items {
                switch item {
                case .packet(let packet): await self?.adoptNotified(packet, serial: serial)
                case .ended(let reason, let stopped): await self?.notifyStreamEnded(reason, stopped: stopped, serial: serial)
                }
            }
        }
        return true
    }

    func adoptNotified(_ value: [UInt8], serial: Int) {
        guard serial == linkSerial else { return }
        notificationsSinceSubscribe += 1
        adoptValue(value)
        changed()
    }

    /// A notified value, decoded with the profile's codec into events (STATUS and SCHEDULE as they are; the pieces
    /// other devices report folded into a status by the tracker).
    func adoptValue(_ value: [UInt8]) {
        guard profile.id != .roombridge else {
            for event in CurtainSnapshot.events(fromStatusValue: value) { report(event) }
            return
        }
        do throws(CurtainDecodeError) {
            let events = try profile.codec.decode(notification: value, replyingTo: pendingRequest)
            pendingRequest = nil
            adoptDeviceEvents(events)
        } catch {
            report(.error(.bluetooth(name: "curtain.BadFrame", message: "ignored a malformed notification: \(error)")))
        }
    }

    func adoptDeviceEvents(_ events: [CurtainDeviceEvent]) {
        let before = (tracker.battery, tracker.light)
        tracker.expire(now: configuration.clock.elapsed())
        if let status = tracker.apply(events) { report(.status(status)) }
        for case .refused(let e) in events {
            let refusal = e.given(calibrated: tracker.calibrated)
            logger.warning("curtain refused a request: \(refusal)")
            report(.error(.refusedByCurtain(refusal)))
        }
        if tracker.battery != before.0 || tracker.light != before.1 {
            report(.levels(battery: tracker.battery, light: tracker.light))
        }
    }

    /// Devices that advertise their motion (SwitchBot) are heard through discovery while connected; filter on their
    /// service so that bluetoothd reports nothing else.
    func watchAdvertisements(device: DBusObjectPath) async {
        guard let adapter = property(device, Self.deviceInterface, "Adapter"), case .objectPath(let a) = adapter else {
            return
        }
        _ = try? await bus.call(destination: Self.bluez, path: a, interface: Self.adapterInterface,
                                member: "SetDiscoveryFilter",
                                arguments: [.stringVariantDictionary([
                                    "UUIDs": .stringArray([profile.serviceUUID]), "Transport": .string("le"),
                                ])], timeout: configuration.callTimeout)
        _ = try? await bus.call(destination: Self.bluez, path: a, interface: Self.adapterInterface,
                                member: "StartDiscovery", timeout: configuration.callTimeout)
    }

    /// `only`: the advertisement properties a PropertiesChanged carried (bluez-sim signals ServiceData and
    /// ManufacturerData one by one; the one not yet updated would carry an older state).
    func adoptAdvertisement(of device: DBusObjectPath, only: Set<String>? = nil) {
        adoptDeviceEvents(profile.codec.decode(advertisement: cache.advertisement(of: device, only: only)))
    }

    /// The AcquireNotify socket of subscription `serial` ended. Unless we stopped it, that is a fault: bluetoothd
    /// ended the session (gatt-client.c `sock_hup`/`destroy_sock`) or the socket failed, and no notification
    /// would ever arrive again.
    func notifyStreamEnded(_ reason: String, stopped: Bool, serial: Int) {
        guard serial == linkSerial, !stopped, notifyFault == nil else { return }
        notifyFault = reason
        changed()
    }


    func writeRequest(_ bytes: [UInt8], to path: DBusObjectPath) async throws {
        var attempts = 0
        while true {
            do {
                _ = try await bus.call(destination: Self.bluez, path: path, interface: Self.characteristicInterface,
                                       member: "WriteValue",
                                       arguments: [.bytes(bytes),
                                                   .stringVariantDictionary(["type": .string(profile.writeType.rawValue)])],
                                       timeout: configuration.callTimeout)
                return
            } catch let e as DBusError where e.name == "org.bluez.Error.InProgress" && attempts < 20 {
                // Another write is pending on the characteristic (gatt-client.c); bleak retries after 10 ms.
                attempts += 1
                try await configuration.clock.sleep(for: .milliseconds(10))
            }
        }
    }

    static func map(_ error: any Error) -> CurtainError {
        if let e = error as? DBusError {
            if e.name == DBusError.disconnectedName { return .bluetoothServiceUnavailable }
            return CurtainError.fromBlueZ(name: e.name, message: e.message)
        }
        if error is CancellationError { return .timeout("cancelled") }
        return .bluetooth(name: "unknown", message: "\(error)")
    }
}
