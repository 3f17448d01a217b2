import DBusTesting
import DBusExport
import Glibc
import Subprocess
import Testing
@testable import DBus

let pythonConversion = """
    import sys, json, os, dbus, dbus.service, dbus.mainloop.glib
    from gi.repository import GLib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    def conv(v):
        if isinstance(v, dbus.Dictionary): return {str(k): conv(x) for k, x in v.items()}
        if isinstance(v, (dbus.Array, dbus.Struct, list, tuple)): return [conv(x) for x in v]
        if isinstance(v, dbus.Boolean): return bool(v)
        if isinstance(v, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)): return int(v)
        if isinstance(v, dbus.Double): return float(v)
        return str(v)
    def out(*items): print(json.dumps(list(items), sort_keys=True), flush=True)

    """

/// A python3-dbus service (the reference libdbus binding with GLib's main loop).
let pythonService = pythonConversion + """
    class RefError(dbus.DBusException):
        _dbus_error_name = 'com.example.Error.Bad'
    class Ref(dbus.service.Object):
        @dbus.service.method('com.example.Ref', in_signature='say', out_signature='sa{sv}')
        def Concat(self, s, data):
            return s + ':' + ''.join('%02x' % b for b in data), {'len': dbus.UInt32(len(data), variant_level=1)}
        @dbus.service.method('com.example.Ref', in_signature='', out_signature='')
        def Fail(self):
            raise RefError('bad thing happened')
        @dbus.service.method('com.example.Ref', in_signature='s', out_signature='')
        def Emit(self, text):
            self.Changed(text)
        @dbus.service.signal('com.example.Ref', signature='s')
        def Changed(self, text):
            pass
        @dbus.service.method('com.example.Ref', in_signature='h', out_signature='s')
        def ReadFD(self, fd):
            with os.fdopen(fd.take(), 'rb') as f:
                return f.read().decode()
    name = dbus.service.BusName('com.example.Ref', bus)
    obj = Ref(bus, '/com/example/Ref')
    print('READY', flush=True)
    GLib.MainLoop().run()
    """

/// A python3-dbus ObjectManager/Properties client of `org.roombridge.Ref`.
let pythonObserver = pythonConversion + """
    loop = GLib.MainLoop()
    def added(path, ifaces): out('added', str(path), conv(ifaces))
    def removed(path, ifaces):
        out('removed', str(path), conv(ifaces))
        loop.quit()
    def changed(iface, props, invalidated, path=None): out('changed', str(path), str(iface), conv(props), conv(invalidated))
    bus.add_signal_receiver(added, 'InterfacesAdded', 'org.freedesktop.DBus.ObjectManager', 'org.roombridge.Ref', '/')
    bus.add_signal_receiver(removed, 'InterfacesRemoved', 'org.freedesktop.DBus.ObjectManager', 'org.roombridge.Ref', '/')
    bus.add_signal_receiver(changed, 'PropertiesChanged', 'org.freedesktop.DBus.Properties', 'org.roombridge.Ref', path_keyword='path')
    om = dbus.Interface(bus.get_object('org.roombridge.Ref', '/'), 'org.freedesktop.DBus.ObjectManager')
    out('objects', conv(om.GetManagedObjects()))
    print('READY', flush=True)
    loop.run()
    """

/// Interop with python3-dbus peers, properties, ObjectManager and unix fd passing.
@Suite(.serialized) struct PeerTests {
    @Test func callsAPythonServiceAndReceivesItsSignals() async throws {
        let daemon = try await DBusTestDaemon.start()
        let client = try await DBusConnection.open(.address(daemon.address))
        let owners = try await client.nameOwnerChanges(of: "com.example.Ref")
        #expect(try await next(owners) == .unowned)
        _ = try await run(.path("/usr/bin/python3"), arguments: ["-c", pythonService, daemon.address],
                          input: .none, output: .sequence, error: .discarded) { python in
            defer { try? python.send(signal: .terminate) }
            var lines = python.standardOutput.strings().makeAsyncIterator()
            #expect(try await lines.next() == "READY")
            guard case .owned(let unique) = try await next(owners) else {
                Issue.record("no owner")
                return
            }
            let reply = try await client.call(destination: "com.example.Ref", path: "/com/example/Ref", interface: "com.example.Ref",
                                              member: "Concat", arguments: [.string("id"), .bytes([0xCA, 0xFE])])
            #expect(reply.count == 2)
            #expect(try reply[0].string() == "id:cafe")
            #expect(try reply[1].stringVariantDictionary() == ["len": .uint32(2)])
            await #expect(throws: DBusError(name: "com.example.Error.Bad", message: "bad thing happened")) {
                _ = try await client.call(destination: "com.example.Ref", path: "/com/example/Ref", interface: "com.example.Ref", member: "Fail")
            }
            let signals = try await client.signals(matching: DBusMatchRule(sender: "com.example.Ref", interface: "com.example.Ref", member: "Changed"))
            _ = try await client.call(destination: "com.example.Ref", path: "/com/example/Ref", interface: "com.example.Ref",
                                      member: "Emit", arguments: [.string("moved")])
            let s = try await next(signals)
            #expect(s.body == [.string("moved")])
            #expect(s.sender == unique)
            // Pass a pipe's read end; python reads it to EOF.
            if client.canPassUnixFDs {
                var fds: [Int32] = [-1, -1]
                #expect(pipe(&fds) == 0)
                _ = "through a pipe".withCString { write(fds[1], $0, strlen($0)) }
                close(fds[1])
                let fd = DBusUnixFD(taking: fds[0])
                let r = try await client.call(destination: "com.example.Ref", path: "/com/example/Ref", interface: "com.example.Ref",
                                              member: "ReadFD", arguments: [.unixFD(fd)])
                #expect(r == [.string("through a pipe")])
            } else {
                Issue.record("the private bus should support unix fd passing")
            }
        }
        #expect(try await next(owners) == .unowned)
        await client.close()
        await daemon.stop()
    }

    @Test func unixFDsPassBothWays() async throws {
        let bus = try await Bus.start()
        try bus.server.export(testPath, interfaces: [DBusInterface("org.roombridge.FD", methods: [
            DBusMethod("Read", in: [DBusArgument("fd", "h")], out: [DBusArgument("text", "s")]) { call in
                let fd = try call.arguments[0].unixFD()
                var buf = [UInt8](repeating: 0, count: 256)
                let n = read(fd.rawValue, &buf, 256)
                return [.string(String(decoding: buf[0..<max(0, n)], as: UTF8.self))]
            },
            DBusMethod("Open", out: [DBusArgument("fd", "h")]) { _ in
                var fds: [Int32] = [-1, -1]
                guard pipe(&fds) == 0 else { throw DBusError.failed("pipe") }
                _ = "from the server".withCString { write(fds[1], $0, strlen($0)) }
                close(fds[1])
                return [.unixFD(DBusUnixFD(taking: fds[0]))]
            },
        ])])
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        _ = "to the server".withCString { write(fds[1], $0, strlen($0)) }
        close(fds[1])
        let sent = DBusUnixFD(taking: fds[0])
        let r = try await bus.client.call(destination: bus.server.uniqueName, path: testPath, interface: "org.roombridge.FD",
                                          member: "Read", arguments: [.unixFD(sent)])
        #expect(r == [.string("to the server")])
        let o = try await bus.client.call(destination: bus.server.uniqueName, path: testPath, interface: "org.roombridge.FD", member: "Open")
        let received = try #require(try o.first?.unixFD())
        var buf = [UInt8](repeating: 0, count: 64)
        let n = read(received.rawValue, &buf, 64)
        #expect(String(decoding: buf[0..<max(0, n)], as: UTF8.self) == "from the server")
        await bus.stop()
    }

    @Test func propertiesGetGetAllSetAndPropertiesChanged() async throws {
        let bus = try await Bus.start()
        let iface = "org.roombridge.Curtain"
        try bus.server.export(testPath, interfaces: [DBusInterface(iface, properties: [
            DBusProperty("Name", value: .string("Curtain")),
            DBusProperty("Position", value: .byte(0), access: .readwrite) { value, _ in
                guard try value.integer() <= 100 else {
                    throw DBusError(name: "org.bluez.Error.InvalidArguments", message: "Position must be 0...100")
                }
            },
            DBusProperty("Counter", value: .uint32(0), changeSignal: .invalidates),
            DBusProperty("RSSI", signature: "n"),
        ])])
        let dest = try #require(bus.server.uniqueName)
        let changes = try await bus.client.propertiesChanged(sender: dest, path: testPath, interface: iface)
        #expect(try await bus.client.getProperty(destination: dest, path: testPath, interface: iface, name: "Name") == .string("Curtain"))
        #expect(try await bus.client.getAllProperties(destination: dest, path: testPath, interface: iface)
                == ["Name": .string("Curtain"), "Position": .byte(0), "Counter": .uint32(0)])  // no RSSI yet
        try await bus.client.setProperty(destination: dest, path: testPath, interface: iface, name: "Position", value: .byte(40))
        let c1 = try await next(changes)
        #expect(c1.changed == ["Position": .byte(40)])
        #expect(c1.invalidated.isEmpty)
        #expect(c1.path == testPath)
        await #expect(throws: DBusError(name: "org.bluez.Error.InvalidArguments", message: "Position must be 0...100")) {
            try await bus.client.setProperty(destination: dest, path: testPath, interface: iface, name: "Position", value: .byte(200))
        }
        do {
            try await bus.client.setProperty(destination: dest, path: testPath, interface: iface, name: "Name", value: .string("x"))
            Issue.record("expected PropertyReadOnly")
        } catch let e as DBusError { #expect(e.name == DBusError.propertyReadOnlyName) }
        do {
            try await bus.client.setProperty(destination: dest, path: testPath, interface: iface, name: "Position", value: .string("x"))
            Issue.record("expected InvalidArgs")
        } catch let e as DBusError { #expect(e.name == DBusError.invalidArgsName) }
        do {
            _ = try await bus.client.getProperty(destination: dest, path: testPath, interface: iface, name: "Missing")
            Issue.record("expected UnknownProperty")
        } catch let e as DBusError { #expect(e.name == DBusError.unknownPropertyName) }
        // Server-side updates.
        try bus.server.updateProperty("Counter", interface: iface, path: testPath, value: .uint32(5))
        let c2 = try await next(changes)
        #expect(c2.changed.isEmpty)
        #expect(c2.invalidated == ["Counter"])
        try bus.server.updateProperty("Position", interface: iface, path: testPath, value: .byte(40))  // unchanged: no signal
        try bus.server.updateProperty("Position", interface: iface, path: testPath, value: .byte(41))
        #expect(try await next(changes).changed == ["Position": .byte(41)])
        #expect(throws: DBusError.self) {
            try bus.server.updateProperty("Position", interface: iface, path: testPath, value: .string("wrong type"))
        }
        #expect(try await bus.client.getProperty(destination: dest, path: testPath, interface: iface, name: "Position") == .byte(41))
        // A property without a value (like BlueZ's RSSI before discovery) is absent until set.
        do {
            _ = try await bus.client.getProperty(destination: dest, path: testPath, interface: iface, name: "RSSI")
            Issue.record("expected InvalidArgs")
        } catch let e as DBusError { #expect(e.name == DBusError.invalidArgsName) }
        try bus.server.updateProperty("RSSI", interface: iface, path: testPath, value: .int16(-70))
        #expect(try await next(changes).changed == ["RSSI": .int16(-70)])
        #expect(try await bus.client.getAllProperties(destination: dest, path: testPath, interface: iface)["RSSI"] == .int16(-70))
        try bus.server.updateProperty("RSSI", interface: iface, path: testPath, value: nil)
        let gone = try await next(changes)
        #expect(gone.changed.isEmpty)
        #expect(gone.invalidated == ["RSSI"])
        #expect(try await bus.client.getAllProperties(destination: dest, path: testPath, interface: iface)["RSSI"] == nil)
        await bus.stop()
    }

    @Test func objectManagerSeenByPythonClient() async throws {
        let bus = try await Bus.start()
        try await bus.server.requestName("org.roombridge.Ref")
        bus.server.addObjectManager(at: "/")
        try bus.server.export("/org/bluez/hci0", interfaces: [DBusInterface("org.bluez.Adapter1", properties: [
            DBusProperty("Powered", value: .boolean(true), access: .readwrite),
            DBusProperty("Address", value: .string("00:11:22:33:44:55")),
        ])])
        let python = try await run(.path("/usr/bin/python3"), arguments: ["-c", pythonObserver, bus.daemon.address],
                                   input: .none, output: .sequence, error: .string(limit: 1 << 20)) { python in
            defer { try? python.send(signal: .terminate) }  // on a failure; it exits by itself after "removed"
            var lines = python.standardOutput.strings().makeAsyncIterator()
            let objects = try await lines.next()
            #expect(objects == """
                ["objects", {"/org/bluez/hci0": {"org.bluez.Adapter1": {"Address": "00:11:22:33:44:55", "Powered": true}, \
                "org.freedesktop.DBus.Introspectable": {}, "org.freedesktop.DBus.Properties": {}}}]
                """)
            #expect(try await lines.next() == "READY")
            let device: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
            try bus.server.export(device, interfaces: [DBusInterface("org.bluez.Device1", properties: [
                DBusProperty("Connected", value: .boolean(false)),
                DBusProperty("ManufacturerData", value: .dictionary(keySignature: "q", valueSignature: "v",
                                                                     [DBusDictEntry(.uint16(0xFFFF), .variant(.bytes([1, 2])))])),
            ])])
            try bus.server.updateProperty("Connected", interface: "org.bluez.Device1", path: device, value: .boolean(true))
            bus.server.unexport(device)
            var rest: [String] = []
            while let line = try await lines.next() { rest.append(line) }
            return rest
        }
        let lines = python.closureResult, stderr = python.standardError
        #expect(lines == [
            """
            ["added", "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", {"org.bluez.Device1": {"Connected": false, "ManufacturerData": {"65535": [1, 2]}}, \
            "org.freedesktop.DBus.Introspectable": {}, "org.freedesktop.DBus.Properties": {}}]
            """,
            """
            ["changed", "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", "org.bluez.Device1", {"Connected": true}, []]
            """,
            """
            ["removed", "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", ["org.bluez.Device1", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties"]]
            """,
        ], "\(stderr)")
        // Our own client helpers see the same.
        let managed = try await bus.client.getManagedObjects(destination: "org.roombridge.Ref")
        #expect(managed["/org/bluez/hci0"]?["org.bluez.Adapter1"]?["Powered"] == .boolean(true))
        #expect(managed.count == 1)
        await bus.stop()
    }

    @Test func objectManagerEventsForOurClient() async throws {
        let bus = try await Bus.start()
        try await bus.server.requestName("org.roombridge.Ref")
        bus.server.addObjectManager(at: "/")
        let events = try await bus.client.objectManagerEvents(sender: "org.roombridge.Ref")
        try bus.server.export("/a/b", interfaces: [DBusInterface("org.example.One", properties: [DBusProperty("X", value: .int32(1))])])
        try bus.server.export("/a/b", interfaces: [DBusInterface("org.example.Two")])
        bus.server.unexport("/a/b", interface: "org.example.One")
        bus.server.unexport("/a/b", interface: "org.example.Two")
        guard case .interfacesAdded(let p1, let i1) = try await next(events) else { Issue.record("expected added"); return }
        #expect(p1 == "/a/b")
        #expect(i1["org.example.One"] == ["X": .int32(1)])
        #expect(i1.keys.contains("org.freedesktop.DBus.Properties"))
        guard case .interfacesAdded(_, let i2) = try await next(events) else { Issue.record("expected added"); return }
        #expect(Set(i2.keys) == ["org.example.Two"])
        guard case .interfacesRemoved(_, let r1) = try await next(events) else { Issue.record("expected removed"); return }
        #expect(r1 == ["org.example.One"])
        guard case .interfacesRemoved(_, let r2) = try await next(events) else { Issue.record("expected removed"); return }
        #expect(r2 == ["org.example.Two", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties"])
        #expect(try await bus.client.getManagedObjects(destination: "org.roombridge.Ref").isEmpty)
        await bus.stop()
    }

    @Test func systemBusHonoursTheEnvironmentVariable() async throws {
        let daemon = try await DBusTestDaemon.start()
        setenv("DBUS_SYSTEM_BUS_ADDRESS", daemon.address, 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        let c = try await DBusConnection.open(.system)
        let unique = try #require(c.uniqueName)
        // The private daemon knows this connection.
        #expect(try await c.nameOwner(unique) == unique)
        await c.close()
        setenv("DBUS_SESSION_BUS_ADDRESS", daemon.address, 1)
        defer { unsetenv("DBUS_SESSION_BUS_ADDRESS") }
        let s = try await DBusConnection.open(.session)
        #expect(try await s.nameOwner(try #require(s.uniqueName)) == s.uniqueName)
        await s.close()
        await daemon.stop()
    }

    @Test func connectingToNothingFailsWithATypedError() async throws {
        do {
            _ = try await DBusConnection.open(.address("unix:path=/nonexistent/roombridge/bus"))
            Issue.record("expected an error")
        } catch let e as DBusError {
            #expect(e.name == "org.freedesktop.DBus.Error.FileNotFound" || e.name == "org.freedesktop.DBus.Error.NoServer")
            #expect(e.message.contains("/nonexistent/roombridge/bus"))
        }
    }
}
