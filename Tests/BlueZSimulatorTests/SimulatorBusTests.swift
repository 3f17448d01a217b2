import DBusTesting
import CurtainProtocol
import DBus
import Foundation
import Testing
import TestSupport
@testable import BlueZSimulator

let adapter: DBusObjectPath = "/org/bluez/hci0"
let device: DBusObjectPath = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21"
let commandChar: DBusObjectPath = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21/service000a/char000b"
let statusChar: DBusObjectPath = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21/service000a/char000d"

/// Collects signals from org.bluez in arrival order.
actor SignalLog {
    var entries: [String] = []
    func add(_ s: String) { entries.append(s) }
}

/// A private bus with the simulator and a raw client connection.
struct SimRig {
    let daemon: DBusTestDaemon
    let sim: BlueZSimulator
    let bus: DBusConnection

    /// `prepare` runs before the simulator starts (e.g. to add curtains).
    static func with(_ configure: (inout BlueZSimulator.Configuration) -> Void = { _ in },
                     prepare: (BlueZSimulator) async -> Void = { _ in },
                     _ body: (SimRig) async throws -> Void) async throws {
        let daemon = try await DBusTestDaemon.start()
        var config = BlueZSimulator.Configuration()
        config.timeScale = 0
        config.deviceKnownAtStart = true
        configure(&config)
        let sim = BlueZSimulator(busAddress: daemon.address, configuration: config)
        await prepare(sim)
        let rig: SimRig
        do {
            try await sim.start()
            rig = SimRig(daemon: daemon, sim: sim, bus: try await DBusConnection.open(.address(daemon.address)))
        } catch {
            await sim.stop()
            await daemon.stop()
            throw error
        }
        do { try await body(rig) } catch {
            await rig.teardown()
            throw error
        }
        await rig.teardown()
    }

    func teardown() async {
        await bus.close()
        await sim.stop()
        await daemon.stop()
    }

    @discardableResult
    func call(_ path: DBusObjectPath, _ iface: String, _ member: String, _ args: [DBusValue] = []) async throws -> [DBusValue] {
        try await bus.call(destination: "org.bluez", path: path, interface: iface, member: member, arguments: args,
                           timeout: .seconds(5))
    }

    func write(_ bytes: [UInt8], type: String = "request") async throws {
        try await call(commandChar, "org.bluez.GattCharacteristic1", "WriteValue",
                       [.bytes(bytes), .stringVariantDictionary(["type": .string(type)])])
    }

    /// AcquireNotify on the status characteristic; returns the client's end of the socket (close it).
    func acquireNotify() async throws -> Int32 {
        let reply = try await call(statusChar, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantDictionary([:])])
        return try #require(try? reply.first?.unixFD()).take()
    }

    func connectAndResolve() async throws {
        try await call(device, "org.bluez.Device1", "Connect")
        try await eventually("ServicesResolved=true") {
            try await bus.getProperty(destination: "org.bluez", path: device, interface: "org.bluez.Device1",
                                      name: "ServicesResolved") == .boolean(true)
        }
    }
}

func expectBlueZError(_ name: String, _ message: String, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(name) \"\(message)\", got success")
    } catch let e as DBusError {
        #expect(e.name == name)
        #expect(e.message == message)
    } catch {
        Issue.record("unexpected error \(error)")
    }
}

@Suite(.serialized) struct SimulatorBusTests {
    @Test func connectOrderingMatchesBlueZ() async throws {
        try await SimRig.with({ $0.resolveDelay = .seconds(1) }) { rig in
            let log = SignalLog()
            let signals = try await rig.bus.signals(matching: DBusMatchRule(sender: "org.bluez"))
            let task = Task {
                for await m in signals {
                    // One entry per signal, properties in wire order.
                    if m.member == "PropertiesChanged", case .dictionary(_, _, let entries) = m.body[1] {
                        let link = entries.compactMap { e -> String? in
                            guard case .string(let k) = e.key, ["Connected", "ServicesResolved"].contains(k),
                                  case .variant(let v) = e.value else { return nil }
                            return "\(k)=\(v)"
                        }
                        if !link.isEmpty { await log.add(link.joined(separator: " ")) }
                    } else if m.member == "InterfacesAdded", case .objectPath(let p)? = m.body.first {
                        await log.add("added \(p.rawValue.split(separator: "/").last ?? "")")
                    }
                }
            }
            defer { task.cancel() }
            try await rig.call(device, "org.bluez.Device1", "Connect")
            // The reply comes before the GATT objects exist (device.c att_connect_cb).
            let objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(objects[statusChar] == nil)
            #expect(objects[device]?["org.bluez.Device1"]?["Connected"] == .boolean(true))
            #expect(objects[device]?["org.bluez.Device1"]?["ServicesResolved"] == .boolean(false))
            try await eventually("ServicesResolved=true") { await log.entries.contains("ServicesResolved=true") }
            #expect(await log.entries == ["Connected=true", "added service000a", "added char000b", "added char000d",
                                          "added desc000f", "ServicesResolved=true"])
            // A link loss: one signal, ServicesResolved first (device.c `device_remove_connection()`, gdbus batching).
            try await rig.sim.handle(.dropLink)
            try await eventually("link-loss signal") { await log.entries.count == 7 }
            #expect(await log.entries.last == "ServicesResolved=false Connected=false")
        }
    }

    @Test func secondConnectWhilePendingIsRefused() async throws {
        try await SimRig.with({ $0.connectDelay = .seconds(1) }) { rig in
            let first = Task { try await rig.call(device, "org.bluez.Device1", "Connect") }
            try await eventually("the first Connect pending") { await rig.sim.isConnecting }
            await expectBlueZError("org.bluez.Error.Failed", "Operation already in progress") {
                try await rig.call(device, "org.bluez.Device1", "Connect")
            }
            _ = try await first.value
            // Already connected: an immediate empty reply.
            #expect(try await rig.call(device, "org.bluez.Device1", "Connect").isEmpty)
        }
    }

    @Test func attErrorsAndBlueZTexts() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            await expectBlueZError("org.bluez.Error.Failed", "Operation failed with ATT error: 0x13") {
                try await rig.write([0x04, 101])
            }
            await expectBlueZError("org.bluez.Error.Failed", "Operation failed with ATT error: 0x80") {
                try await rig.write([0x09])
            }
            await expectBlueZError("org.bluez.Error.InvalidArguments", "Invalid Length") {
                try await rig.write([0x04])
            }
            await expectBlueZError("org.bluez.Error.NotPermitted", "Read not permitted") {
                try await rig.call(commandChar, "org.bluez.GattCharacteristic1", "ReadValue", [.stringVariantDictionary([:])])
            }
            await expectBlueZError("org.bluez.Error.Failed", "No notify session started") {
                try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StopNotify")
            }
            #expect(await rig.sim.writeCount == 0)
            try await rig.write([0x04, 40])
            #expect(await rig.sim.deviceStatus == CurtainStatus(motion: .opening, position: 0, target: 40))
            let read = try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "ReadValue",
                                          [.stringVariantDictionary([:])])
            #expect(read == [.bytes([0x81, 1, 0, 40, 0])])
        }
    }

    @Test func writeWithoutResponseErrorsComeAsErrorFrames() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            let changes = try await rig.bus.propertiesChanged(sender: "org.bluez", path: statusChar)
            try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StartNotify")
            try await rig.write([0x04, 200], type: "command") // succeeds at the D-Bus level
            var frames: [[UInt8]] = []
            for await c in changes {
                if case .bytes(let b)? = c.changed["Value"] { frames.append(b) }
                if frames.count == 3 { break }
            }
            // STATUS + SCHEDULE on subscription, then ERROR op=04 ec=03.
            #expect(frames.map(\.first) == [0x81, 0x82, 0x83])
            #expect(frames.last == [0x83, 0x04, 0x03])
        }
    }

    /// The client's end is what bluetoothd's `create_sock()` (gatt-client.c) hands out:
    /// `socketpair(AF_LOCAL, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds)`; O_NONBLOCK belongs to the open
    /// file description, so it arrives with the fd (FD_CLOEXEC is per descriptor and does not travel).
    @Test func acquireNotifyFDHasBluetoothdsFlags() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            let fd = try await rig.acquireNotify()
            defer { close(fd) }
            let flags = fcntl(fd, F_GETFL)
            #expect(flags & (O_ACCMODE | O_NONBLOCK) == O_RDWR | O_NONBLOCK)
            var type: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            #expect(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0)
            #expect(type == Int32(SOCK_SEQPACKET.rawValue))
            var domain: Int32 = 0
            #expect(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0)
            #expect(domain == AF_LOCAL)
        }
    }

    @Test func acquireNotifyDeliversPacketsAndClosesOnDisconnect() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            let reply = try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "AcquireNotify",
                                           [.stringVariantDictionary([:])])
            #expect(reply.count == 2 && reply.last == .uint16(247))
            let fd = try #require(try? reply.first?.unixFD()).take()
            defer { close(fd) }
            // The STATUS + SCHEDULE the controller sends on the CCCD write came before the socket existed:
            // dropped (gatt-client.c `notify_io_cb`). Notifying is not set for an acquired session.
            #expect(await rig.sim.droppedNotifications == 2)
            #expect(try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                                  interface: "org.bluez.GattCharacteristic1", name: "Notifying") == .boolean(false))
            await expectBlueZError("org.bluez.Error.NotPermitted", "Notify acquired") {
                try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StartNotify")
            }
            await expectBlueZError("org.bluez.Error.NotPermitted", "Notify acquired") {
                try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "AcquireNotify", [.stringVariantDictionary([:])])
            }
            #expect(try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                                  interface: "org.bluez.GattCharacteristic1", name: "NotifyAcquired") == .boolean(true))
            try await rig.write([0x04, 50])
            try await rig.sim.handle(.dropLink)
            // Both packets were queued before the link dropped; then the end of the stream (the fd is non-blocking,
            // so wait in poll on a detached thread, not the cooperative pool).
            let packets = await Task.detached { () -> [[UInt8]] in
                var out: [[UInt8]] = []
                var buf = [UInt8](repeating: 0, count: 64)
                while true {
                    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&p, 1, 10_000) > 0 else { break } // "does not hang" bound
                    let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    if n <= 0 { break }
                    out.append(Array(buf[0..<n]))
                }
                return out
            }.value
            #expect(packets == [[0x81, 1, 0, 50, 0]])
            #expect(try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                                  interface: "org.bluez.GattCharacteristic1", name: "NotifyAcquired") == .boolean(false))
        }
    }

    /// gatt-client.c `sock_hup()` → `destroy_sock()`: the session ends as soon as the client closes its end.
    @Test func closingTheNotifySocketEndsTheSession() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            close(try await rig.acquireNotify())
            try await eventually("NotifyAcquired=false") {
                try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                              interface: "org.bluez.GattCharacteristic1", name: "NotifyAcquired") == .boolean(false)
            }
            #expect(await rig.sim.isConnected)
        }
    }

    /// `end-notify`: bluetoothd ends the session while the link stays up — the acquired socket is closed
    /// (`destroy_sock()`: NotifyAcquired=false), StartNotify sessions are dropped (Notifying=false).
    @Test func endNotifyEndsTheSessionButNotTheLink() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            let fd = try await rig.acquireNotify()
            defer { close(fd) }
            try await rig.sim.handle(.endNotify)
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            #expect(poll(&p, 1, 0) == 1 && p.revents & Int16(POLLHUP) != 0)
            #expect(await rig.sim.isConnected)
            #expect(try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                                  interface: "org.bluez.GattCharacteristic1", name: "NotifyAcquired") == .boolean(false))
            try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StartNotify")
            #expect(try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                                  interface: "org.bluez.GattCharacteristic1", name: "Notifying") == .boolean(true))
            try await rig.sim.handle(.endNotify)
            #expect(try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                                  interface: "org.bluez.GattCharacteristic1", name: "Notifying") == .boolean(false))
            #expect(await rig.sim.isConnected)
        }
    }

    /// device.c `device_set_rssi_with_delta()` (RSSI_THRESHOLD 8 dBm), adapter.c `discovery_cleanup()` (RSSI
    /// invalidated when discovery ends), shared/ad.c `bt_ad_add_service_data()` (identical data: no signal) and
    /// DuplicateData. Every signal of the device is checked in order, so a missing "no signal" shows up as an
    /// unexpected one before the next expected signal.
    @Test func advertisementSignalsFollowBluetoothd() async throws {
        try await SimRig.with({ $0.deviceKnownAtStart = false }) { rig in
            let changes = try await rig.bus.propertiesChanged(sender: "org.bluez", path: device,
                                                              interface: "org.bluez.Device1")
            var signals = changes.makeAsyncIterator()
            try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("the curtain reported") {
                try await rig.bus.getManagedObjects(destination: "org.bluez")[device]?["org.bluez.Device1"]?["RSSI"] != nil
            }
            // A second advertisement: RSSI 1 dB off, the same service data → nothing. Then discovery ends → RSSI goes.
            try await rig.sim.handle(.reappear)
            #expect(await rig.sim.advertisementsSeen == 2)
            try await rig.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
            var next = await signals.next()
            #expect(next?.changed == [:] && next?.invalidated == ["RSSI"])
            // DuplicateData: the first report brings RSSI back (from 0), and every report emits the service data.
            try await rig.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                               [.stringVariantDictionary(["DuplicateData": .boolean(true)])])
            try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            next = await signals.next()
            #expect(next?.changed.keys.sorted() == ["RSSI"])
            next = await signals.next()
            #expect(next?.changed.keys.sorted() == ["ServiceData"])
            try await rig.sim.handle(.reappear)
            next = await signals.next()
            #expect(next?.changed.keys.sorted() == ["ServiceData"]) // no RSSI: under the 8 dBm threshold
        }
    }

    /// A discovery started while the curtain is connected does not report it (a connected peripheral does not
    /// advertise); once Disconnect has taken the link down, the next advertisement is reported
    /// (adapter.c `btd_adapter_device_found()`): a client that searches again after asking for a disconnect finds it.
    @Test func aDeviceDisconnectedDuringDiscoveryIsReported() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            let changes = try await rig.bus.propertiesChanged(sender: "org.bluez", path: device, interface: "org.bluez.Device1")
            let log = SignalLog()
            let task = Task { for await c in changes where c.changed["RSSI"] != nil { await log.add("rssi") } }
            defer { task.cancel() }
            try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            try await rig.call(device, "org.bluez.Device1", "Disconnect")
            #expect(!(await rig.sim.isConnected))
            try await eventually("the disconnected curtain reported by the running discovery") { await log.entries.contains("rssi") }
        }
    }

    /// With the GATT cache, a StartNotify session survives the disconnect and is registered again as soon as ATT is
    /// up (gatt-client.c `btd_gatt_client_connected()`), so the controller's answer comes before ServicesResolved.
    @Test func startNotifySessionsAreReArmedBeforeServicesResolved() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StartNotify")
            try await rig.sim.handle(.dropLink)
            // The session waits for the next link: asking again meanwhile is "In Progress" (notify_id is 0).
            await expectBlueZError("org.bluez.Error.InProgress", "In Progress") {
                try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StartNotify")
            }
            let log = SignalLog()
            let signals = try await rig.bus.signals(matching: DBusMatchRule(sender: "org.bluez"))
            let task = Task {
                for await m in signals {
                    guard m.member == "PropertiesChanged", let props = try? m.body[1].stringVariantDictionary() else { continue }
                    if props["ServicesResolved"] == .boolean(true) { await log.add("resolved") }
                    if case .bytes(let b)? = props["Value"] { await log.add(String(format: "%02x", b[0])) }
                }
            }
            defer { task.cancel() }
            try await rig.connectAndResolve()
            try await eventually("ServicesResolved seen") { await log.entries.contains("resolved") }
            #expect(await log.entries == ["81", "82", "resolved"]) // STATUS, SCHEDULE, then ServicesResolved
        }
    }

    /// A client that leaves the bus loses its sessions: discovery (adapter.c `discovery_disconnect()`) and StartNotify
    /// (gatt-client.c `notify_client_disconnect()` → `update_notifying()`: Notifying=false when it was the last).
    @Test func sessionsEndWhenTheirClientLeavesTheBus() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            let other = try await DBusConnection.open(.address(rig.daemon.address))
            _ = try await other.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1",
                                     member: "StartDiscovery")
            _ = try await other.call(destination: "org.bluez", path: statusChar, interface: "org.bluez.GattCharacteristic1",
                                     member: "StartNotify")
            let before = await rig.sim.statusLine
            #expect(before.contains("discovering=true") && before.contains("notifying=true"))
            await other.close()
            try await eventually("the sessions of the departed client ended") {
                let line = await rig.sim.statusLine
                return line.contains("discovering=false") && line.contains("notifying=false")
            }
            #expect(try await rig.bus.getProperty(destination: "org.bluez", path: statusChar,
                                                  interface: "org.bluez.GattCharacteristic1", name: "Notifying") == .boolean(false))
        }
    }

    /// device.c `device_request_disconnect()`: the link goes down only after `DISCONNECT_TIMER`; meanwhile the link
    /// works but StartNotify answers NotConnected (`characteristic_start_notify()`: `device_is_disconnecting()`).
    @Test func disconnectWaitsForTheDisconnectTimer() async throws {
        try await SimRig.with({ $0.disconnectDelay = .milliseconds(500) }) { rig in
            try await rig.connectAndResolve()
            let disconnect = Task { try await rig.call(device, "org.bluez.Device1", "Disconnect") }
            try await eventually("disconnecting") {
                do {
                    try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StartNotify")
                    try await rig.call(statusChar, "org.bluez.GattCharacteristic1", "StopNotify")
                    return false
                } catch let e as DBusError {
                    return e.name == "org.bluez.Error.NotConnected" && e.message == "Not Connected"
                }
            }
            #expect(await rig.sim.isConnected)
            try await rig.write([0x06]) // SYNC: the link still works
            _ = try await disconnect.value
            #expect(await !rig.sim.isConnected) // the reply comes with the link down
        }
    }

    /// device.c `device_request_disconnect()`: a pending Connect is answered "br-connection-canceled".
    @Test func disconnectCancelsAPendingConnect() async throws {
        try await SimRig.with({ $0.connectDelay = .seconds(1) }) { rig in
            let pending = Task { () -> DBusError? in
                do { try await rig.call(device, "org.bluez.Device1", "Connect"); return nil } catch let e as DBusError { return e }
            }
            try await eventually("Connect pending") { await rig.sim.isConnecting }
            try await rig.call(device, "org.bluez.Device1", "Disconnect")
            let error = try await pending.value
            #expect(error?.name == "org.bluez.Error.Failed" && error?.message == "br-connection-canceled")
            #expect(await !rig.sim.isConnected)
        }
    }

    /// After a restart the remembered device is back at the same path, disconnected, without GATT objects until a
    /// connection resolves services (gatt-client.c `btd_gatt_client_service_added()` needs a ready client).
    @Test func restartKeepsTheDeviceButNotItsGATTObjectsUntilTheNextConnection() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            try await rig.sim.handle(.restartBluetoothd(downtime: .milliseconds(20)))
            try await eventually("org.bluez back") {
                (try? await rig.bus.getManagedObjects(destination: "org.bluez"))?[adapter] != nil
            }
            var objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(objects[device]?["org.bluez.Device1"]?["Connected"] == .boolean(false))
            #expect(objects[statusChar] == nil)
            try await rig.connectAndResolve()
            objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(objects[statusChar]?["org.bluez.GattCharacteristic1"] != nil)
        }
    }

    @Test func notConnectedAndAdapterErrors() async throws {
        try await SimRig.with { rig in
            try await rig.connectAndResolve()
            try await rig.sim.handle(.dropLink)
            // Cache = always: the objects stay, calls fail with "Not connected" (gatt-client.c).
            await expectBlueZError("org.bluez.Error.Failed", "Not connected") { try await rig.write([0x01]) }
            await expectBlueZError("org.bluez.Error.Failed", "No discovery started") {
                try await rig.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
            }
            await expectBlueZError("org.bluez.Error.InvalidArguments", "Invalid arguments in method call") {
                try await rig.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                                   [.stringVariantDictionary(["Transport": .string("zigbee")])])
            }
            await expectBlueZError("org.bluez.Error.DoesNotExist", "Does Not Exist") {
                try await rig.call(adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath("/org/bluez/hci0/dev_00_00_00_00_00_01")])
            }
            try await rig.sim.handle(.power(false))
            await expectBlueZError("org.bluez.Error.NotReady", "Resource Not Ready") {
                try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            }
            await expectBlueZError("org.bluez.Error.Failed", "le-connection-abort-by-local") {
                try await rig.call(device, "org.bluez.Device1", "Connect")
            }
        }
    }

    @Test func gattObjectsRemovedOnDisconnectWithoutCache() async throws {
        try await SimRig.with({ $0.gattCacheAlways = false }) { rig in
            try await rig.connectAndResolve()
            try await rig.sim.handle(.dropLink)
            let objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(objects[statusChar] == nil)
            #expect(objects[device] != nil)
            do {
                try await rig.write([0x01])
                Issue.record("write to a removed characteristic succeeded")
            } catch let e as DBusError {
                #expect(e.name.hasPrefix("org.freedesktop.DBus.Error.Unknown"))
            }
        }
    }

    @Test func discoveryFilterAndRestart() async throws {
        try await SimRig.with({ $0.deviceKnownAtStart = false }) { rig in
            var objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(objects[device] == nil)
            #expect(objects["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
            // A filter for another service: the curtain is not reported.
            try await rig.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                               [.stringVariantDictionary(["UUIDs": .stringArray(["0000180f-0000-1000-8000-00805f9b34fb"])])])
            try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("an advertisement seen") { await rig.sim.advertisementsSeen == 1 }
            objects = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(objects[device] == nil) // seen, but filtered out
            try await rig.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
            try await rig.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                               [.stringVariantDictionary(["UUIDs": .stringArray([CurtainUUID.service]), "Transport": .string("le")])])
            try await rig.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("the curtain reported") {
                try await rig.bus.getManagedObjects(destination: "org.bluez")[device] != nil
            }
            // bluetoothd restart: the name goes away and comes back with the objects re-created.
            let owners = try await rig.bus.nameOwnerChanges(of: "org.bluez")
            var iterator = owners.makeAsyncIterator()
            let first = await iterator.next()
            try await rig.sim.handle(.restartBluetoothd(downtime: .milliseconds(50)))
            let gone = await iterator.next()
            let back = await iterator.next()
            #expect(first != .unowned && gone == .unowned)
            if case .owned = back {} else { Issue.record("org.bluez did not come back: \(String(describing: back))") }
            let after = try await rig.bus.getManagedObjects(destination: "org.bluez")
            #expect(after[adapter]?["org.bluez.Adapter1"]?["Discovering"] == .boolean(false))
        }
    }
}
