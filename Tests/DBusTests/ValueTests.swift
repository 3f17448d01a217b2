import Testing
@testable import DBus

/// Marshalling without a bus: libdbus messages built and read back in-process, conversions,
/// and refusal of values libdbus would abort on.
struct ValueTests {
    func roundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
        let msg = try RawMessage.signal(path: "/t", interface: "org.example.T", member: "M")
        try msg.append(values)
        return try msg.decodeBody()
    }

    @Test func signaturesAreComputed() {
        #expect(DBusValue.stringVariantDictionary(["a": .int32(1)]).signature == "a{sv}")
        #expect(DBusValue.bytes([]).signature == "ay")
        #expect(DBusValue.structure([.string("x"), .array(elementSignature: "o", [])]).signature == "(sao)")
        #expect([String: [String: DBusValue]].dbusSignature == "a{sa{sv}}")
        #expect([DBusObjectPath: [String: [String: DBusValue]]].dbusSignature == "a{oa{sa{sv}}}")
        #expect(DBusSignature("sa{sv}as").completeTypes == ["s", "a{sv}", "as"])
        #expect(DBusSignature("a(ia{sv})x").completeTypes == ["a(ia{sv})", "x"])
    }

    @Test func invalidNamesAndSignaturesAreRejected() {
        for bad in ["/a//b", "relative", "/a-b", "/trailing/", ""] {
            #expect(throws: DBusError.self) { try DBusObjectPath(bad) }
        }
        for bad in ["a{vs}", "(", "a", "{sv}", "()"] {
            #expect(throws: DBusError.self) { try DBusSignature(bad) }
        }
        #expect(throws: DBusError.self) { try RawMessage.signal(path: "/t", interface: "no-dots", member: "M") }
        #expect(throws: DBusError.self) { try RawMessage.methodCall(destination: "bad..name", path: "/", interface: nil, member: "M") }
        let good = "/org/bluez/hci0"
        #expect((try? DBusObjectPath(good)) != nil)
    }

    @Test func malformedValuesThrowInsteadOfAborting() throws {
        let bad: [DBusValue] = [
            .array(elementSignature: "s", [.int32(1)]),
            .structure([]),
            .string("nul\u{0}inside"),
            .dictionary(keySignature: "v", valueSignature: "s", []),
            .dictionary(keySignature: "s", valueSignature: "v", [DBusDictEntry(.string("k"), .string("not a variant"))]),
            .variant(.structure([])),
            (0..<40).reduce(DBusValue.int32(0)) { v, _ in .array(elementSignature: v.signature, [v]) },
        ]
        for value in bad {
            #expect(throws: DBusError.self, "\(value.signature)") { _ = try roundTrip([value]) }
        }
        // Deep nesting through variants is fine up to libdbus's limits.
        let nested = (0..<10).reduce(DBusValue.int32(7)) { v, _ in .variant(v) }
        #expect(try roundTrip([nested]) == [nested])
        #expect(nested.unwrappingVariants == .int32(7))
    }

    @Test func conversionsToSwiftTypes() throws {
        let props = DBusValue.stringVariantDictionary([
            "Name": .string("Curtain"), "RSSI": .int16(-60), "Value": .bytes([1, 2, 3]),
            "UUIDs": .stringArray(["a", "b"]), "Paired": .boolean(true),
        ])
        let dict = try #require(try roundTrip([props]).first).stringVariantDictionary()
        #expect(try dict["Name"]?.string() == "Curtain")
        #expect(try dict["RSSI"]?.integer() == -60)
        #expect(try dict["Value"]?.bytes() == [1, 2, 3])
        #expect(try dict["UUIDs"]?.stringArray() == ["a", "b"])
        #expect(try dict["Paired"]?.bool() == true)
        // DBusValueConvertible in both directions.
        #expect(try [UInt8](dbusValue: .bytes([9, 8])) == [9, 8])
        #expect([UInt8]([9, 8]).dbusValue == .bytes([9, 8]))
        #expect(try [String: UInt32](dbusValue: (["x": 1] as [String: UInt32]).dbusValue) == ["x": 1])
        #expect(try [String: DBusValue](dbusValue: props) == ["Name": .string("Curtain"), "RSSI": .int16(-60), "Value": .bytes([1, 2, 3]),
                                                           "UUIDs": .stringArray(["a", "b"]), "Paired": .boolean(true)])
        #expect(try Int16(dbusValue: .variant(.int16(-3))) == -3)
    }

    @Test func unexpectedTypesGiveTypedErrors() throws {
        do {
            _ = try DBusValue.int32(1).stringVariantDictionary()
            Issue.record("expected an error")
        } catch {
            #expect(error.name == DBusError.invalidArgsName)
            #expect(error.message.contains("a{sv}"))
        }
        #expect(throws: DBusError.self) { try DBusValue.string("x").bytes() }
        #expect(throws: DBusError.self) { try DBusValue.uint64(.max).integer() }
        #expect(throws: DBusError.self) { try UInt8(dbusValue: .int32(1)) }
        #expect(throws: DBusError.self) { try [String](dbusValue: .array(elementSignature: "i", [.int32(1)])) }
        #expect(throws: DBusError.self) {
            try DBusValue.dictionary(keySignature: "s", valueSignature: "i", [DBusDictEntry(.string("x"), .int32(1))]).managedObjects()
        }
    }

    @Test func matchRulesAreQuotedAndMatchLocally() throws {
        let rule = DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                                 pathNamespace: "/org/bluez", arguments: [0: "it's"])
        #expect(rule.string == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='/org/bluez',arg0='it'\\''s'")
        var m = DBusMessage(kind: .signal, serial: 1, replySerial: nil, path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties",
                            member: "PropertiesChanged", errorName: nil, sender: ":1.5", destination: nil, signature: "s",
                            body: [.string("it's")], noReplyExpected: true)
        #expect(rule.matches(m) { _ in nil })  // owner unknown: trust the bus
        #expect(rule.matches(m) { _ in .some(":1.5") })
        #expect(!rule.matches(m) { _ in .some(":1.6") })
        m.path = "/org/bluezz"
        #expect(!rule.matches(m) { _ in nil })
        m.path = "/org/bluez"
        m.body = [.string("other")]
        #expect(!rule.matches(m) { _ in nil })
        let pathRule = DBusMatchRule(argumentPaths: [0: "/aa/"])
        m.body = [.objectPath("/aa/bb")]
        #expect(pathRule.matches(m) { _ in nil })
        m.body = [.objectPath("/aab")]
        #expect(!pathRule.matches(m) { _ in nil })
    }

    @Test func objectPathHelpers() throws {
        let p: DBusObjectPath = "/org/bluez/hci0"
        #expect(p.parent == "/org/bluez")
        #expect(DBusObjectPath.root.parent == nil)
        #expect(try p.appending("dev_AA") == "/org/bluez/hci0/dev_AA")
        #expect(p.isDescendant(of: "/org"))
        #expect(p.isDescendant(of: .root))
        #expect(!p.isDescendant(of: "/org/bl"))
        #expect(!p.isDescendant(of: p))
    }
}
