import DBusTestSupport
import DBusExport
import Glibc
import Testing
@testable import DBus

/// Our exported objects called by the reference implementations (dbus-send from libdbus,
/// gdbus from GLib, busctl from systemd), and introspected by them.
@Suite(.serialized) struct ReferenceToolTests {
    static func typedInterface() -> DBusInterface {
        DBusInterface("org.roombridge.Typed", methods: [
            DBusMethod("Mirror", in: [DBusArgument("text", "s"), DBusArgument("props", "a{sv}"), DBusArgument("data", "ay"),
                                      DBusArgument("pair", "(ix)"), DBusArgument("flag", "b"), DBusArgument("ratio", "d"),
                                      DBusArgument("path", "o")],
                       out: [DBusArgument("text", "s"), DBusArgument("props", "a{sv}"), DBusArgument("data", "ay"),
                             DBusArgument("pair", "(ix)"), DBusArgument("flag", "b"), DBusArgument("ratio", "d"),
                             DBusArgument("path", "o")]) { call in call.arguments },
            DBusMethod("Describe", in: [DBusArgument("value", "v")], out: [DBusArgument("description", "s")]) { call in
                let inner = call.arguments[0].unwrappingVariants
                return [.string("\(inner.signature)=\(inner)")]
            },
        ], properties: [
            DBusProperty("Name", value: .string("Curtain")),
            DBusProperty("Position", value: .byte(10), access: .readwrite),
        ], signals: [DBusSignalDescription("Moved", arguments: [DBusArgument("position", "y")])])
    }

    func withServer(_ body: (Bus, String) async throws -> Void) async throws {
        let bus = try await Bus.start()
        try await bus.server.requestName("org.roombridge.Ref")
        try bus.server.export(testPath, interfaces: [echoInterface(), Self.typedInterface()])
        do { try await body(bus, bus.daemon.address) } catch {
            await bus.stop()
            throw error
        }
        await bus.stop()
    }

    @Test func dbusSendCallsOurObject() async throws {
        try await withServer { _, address in
            let r = try await runTool("/usr/bin/dbus-send", [
                "--bus=\(address)", "--print-reply", "--dest=org.roombridge.Ref", testPath.rawValue, "org.roombridge.Test.Echo",
                "string:héllo", "int32:-5", "uint64:18446744073709551615", "byte:255", "boolean:true", "double:2.5",
                "objpath:/a/b", "array:string:x,y", "dict:string:int32:k,7", "variant:uint16:9",
            ])
            #expect(r.status == 0, "\(r.stderr)")
            let lines = r.stdout.split(separator: "\n").dropFirst()
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
            #expect(lines == [
                "string \"héllo\"", "int32 -5", "uint64 18446744073709551615", "byte 255", "boolean true", "double 2.5",
                "object path \"/a/b\"", "array [", "string \"x\"", "string \"y\"", "]",
                "array [", "dict entry(", "string \"k\"", "int32 7", ")", "]", "variant uint16 9",
            ])
            // Errors keep name and text.
            let e = try await runTool("/usr/bin/dbus-send", [
                "--bus=\(address)", "--print-reply", "--dest=org.roombridge.Ref", testPath.rawValue, "org.roombridge.Test.Fail",
                "string:org.bluez.Error.Failed", "string:Operation failed with ATT error: 0x13",
            ])
            #expect(e.status != 0)
            #expect(e.stderr.contains("Error org.bluez.Error.Failed: Operation failed with ATT error: 0x13"), "\(e.stderr)")
        }
    }

    @Test func gdbusCallsOurObject() async throws {
        try await withServer { _, address in
            let r = try await runTool("/usr/bin/gdbus", [
                "call", "--address", address, "--dest", "org.roombridge.Ref", "--object-path", testPath.rawValue,
                "--method", "org.roombridge.Typed.Mirror",
                "'text'", "{'RSSI': <int16 -60>, 'UUIDs': <['180f']>}", "[byte 1, 2, 0xff]", "(-1, 9000000000)", "true", "0.5", "'/org/bluez/hci0'",
            ])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.trimmingCharacters() ==
                "('text', {'RSSI': <int16 -60>, 'UUIDs': <['180f']>}, [byte 0x01, 0x02, 0xff], (-1, int64 9000000000), true, 0.5, objectpath '/org/bluez/hci0')")
            let d = try await runTool("/usr/bin/gdbus", [
                "call", "--address", address, "--dest", "org.roombridge.Ref", "--object-path", testPath.rawValue,
                "--method", "org.roombridge.Typed.Describe", "<(uint32 7, <'x'>)>",
            ])
            #expect(d.stdout.trimmingCharacters() == "('(uv)=(uint32 7, <\"x\">)',)", "\(d.stderr)")
            // Properties through GLib's client.
            let g = try await runTool("/usr/bin/gdbus", [
                "call", "--address", address, "--dest", "org.roombridge.Ref", "--object-path", testPath.rawValue,
                "--method", "org.freedesktop.DBus.Properties.GetAll", "org.roombridge.Typed",
            ])
            #expect(g.stdout.trimmingCharacters() == "({'Name': <'Curtain'>, 'Position': <byte 0x0a>},)", "\(g.stderr)")
        }
    }

    @Test func busctlCallsOurObject() async throws {
        try await withServer { bus, address in
            let r = try await runTool("/usr/bin/busctl", [
                "--address=\(address)", "call", "org.roombridge.Ref", testPath.rawValue, "org.roombridge.Test", "Echo", "--",
                "sa{sv}aynqtxg", "hi", "2", "Powered", "b", "true", "Alias", "s", "room", "3", "1", "2", "3",
                "-7", "65535", "18446744073709551615", "-9223372036854775808", "a{sv}",
            ])
            #expect(r.status == 0, "\(r.stderr)")
            // Dictionary entries keep their wire order.
            #expect(r.stdout.trimmingCharacters() ==
                "sa{sv}aynqtxg \"hi\" 2 \"Powered\" b true \"Alias\" s \"room\" 3 1 2 3 -7 65535 18446744073709551615 -9223372036854775808 \"a{sv}\"")
            let p = try await runTool("/usr/bin/busctl", [
                "--address=\(address)", "get-property", "org.roombridge.Ref", testPath.rawValue, "org.roombridge.Typed", "Position",
            ])
            #expect(p.stdout.trimmingCharacters() == "y 10", "\(p.stderr)")
            let s = try await runTool("/usr/bin/busctl", [
                "--address=\(address)", "set-property", "org.roombridge.Ref", testPath.rawValue, "org.roombridge.Typed", "Position", "y", "77",
            ])
            #expect(s.status == 0, "\(s.stderr)")
            #expect(bus.server.exportedProperty("Position", interface: "org.roombridge.Typed", path: testPath) == .byte(77))
            let i = try await runTool("/usr/bin/busctl", [
                "--address=\(address)", "introspect", "--no-pager", "org.roombridge.Ref", testPath.rawValue, "org.roombridge.Typed",
            ])
            #expect(i.status == 0, "\(i.stderr)")
            let rows = i.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
            #expect(rows.contains(".Describe method v s -"), "\(i.stdout)")
            #expect(rows.contains(".Mirror method sa{sv}ay(ix)bdo sa{sv}ay(ix)bdo -"), "\(i.stdout)")
            #expect(rows.contains(".Name property s \"Curtain\" emits-change"), "\(i.stdout)")
            #expect(rows.contains(".Position property y 77 emits-change writable"), "\(i.stdout)")
            #expect(rows.contains(".Moved signal y - -"), "\(i.stdout)")
        }
    }

    @Test func gdbusIntrospectsTheObjectTree() async throws {
        try await withServer { bus, address in
            bus.server.addObjectManager(at: "/")
            let r = try await runTool("/usr/bin/gdbus", [
                "introspect", "--address", address, "--dest", "org.roombridge.Ref", "--object-path", "/", "--recurse", "--only-properties",
            ])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("node /org/roombridge/test {"), "\(r.stdout)")
            #expect(r.stdout.contains("readonly s Name = 'Curtain';"), "\(r.stdout)")
            #expect(r.stdout.contains("readwrite y Position = 0x0a;"), "\(r.stdout)")
            let x = try await runTool("/usr/bin/gdbus", [
                "introspect", "--address", address, "--dest", "org.roombridge.Ref", "--object-path", "/", "--xml",
            ])
            #expect(x.stdout.contains("<interface name=\"org.freedesktop.DBus.ObjectManager\">"), "\(x.stdout)")
            #expect(x.stdout.contains("<node name=\"org\"/>"), "\(x.stdout)")
        }
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
