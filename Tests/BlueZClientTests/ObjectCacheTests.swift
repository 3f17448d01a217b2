import Testing
import DBus
@testable import BlueZClient

/// The client's pure copy of bluetoothd's objects, fed signals by hand.
@Suite struct ObjectCacheTests {
    static let adapter: DBusObjectPath = "/org/bluez/hci0"
    static let device: DBusObjectPath = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_21"
    static let other: DBusObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
    static let serviceUUID = "cba20d00-224d-11e6-9fb8-0002a5d5c51b"

    static func added(_ path: DBusObjectPath, _ iface: String, _ props: [String: DBusValue]) -> [DBusValue] {
        [.objectPath(path), .dictionary(keySignature: "s", valueSignature: "a{sv}",
                                        [DBusDictEntry(.string(iface), .stringVariantDictionary(props))])]
    }

    static func loadedCache() -> BlueZObjectCache {
        var cache = BlueZObjectCache()
        _ = cache.ownerChanged(to: ":1.7")
        cache.load([adapter: [BlueZObjectCache.adapterInterface: ["Powered": .boolean(true)]]])
        return cache
    }

    @Test func devicesAreMatchedByAddressOrService() {
        var cache = Self.loadedCache()
        cache.startSearch()
        _ = cache.ingest(interface: BlueZObjectCache.objectManagerInterface, member: "InterfacesAdded", path: "/",
                         body: Self.added(Self.other, BlueZObjectCache.deviceInterface, [
                            "Address": .string("AA:BB:CC:DD:EE:FF"), "Adapter": .objectPath(Self.adapter),
                         ]))
        #expect(cache.matchingDevice(adapter: Self.adapter, address: nil, serviceUUID: Self.serviceUUID) == nil)
        #expect(cache.matchingDevice(adapter: Self.adapter, address: "aa:bb:cc:dd:ee:ff",
                                     serviceUUID: Self.serviceUUID) == Self.other)
        _ = cache.ingest(interface: BlueZObjectCache.objectManagerInterface, member: "InterfacesAdded", path: "/",
                         body: Self.added(Self.device, BlueZObjectCache.deviceInterface, [
                            "Address": .string("C4:7C:8D:6A:3E:21"), "Adapter": .objectPath(Self.adapter),
                            "UUIDs": .stringArray([Self.serviceUUID]),
                         ]))
        #expect(cache.matchingDevice(adapter: Self.adapter, address: nil, serviceUUID: Self.serviceUUID) == Self.device)
        #expect(cache.freshDevices == [Self.other, Self.device])
        #expect(cache.adapterPath(named: nil) == Self.adapter)
        #expect(cache.adapterPath(named: "hci1") == nil)
    }

    @Test func propertiesChangedUpdatesAndInvalidates() {
        var cache = Self.loadedCache()
        let change = cache.ingest(
            interface: BlueZObjectCache.propertiesInterface, member: "PropertiesChanged", path: Self.adapter,
            body: [.string(BlueZObjectCache.adapterInterface), .stringVariantDictionary(["Powered": .boolean(false)]),
                   .stringArray([])])
        #expect(change == .properties(path: Self.adapter, interface: BlueZObjectCache.adapterInterface,
                                      changed: ["Powered": .boolean(false)]))
        #expect(cache.property(Self.adapter, BlueZObjectCache.adapterInterface, "Powered") == .boolean(false))
        _ = cache.ingest(interface: BlueZObjectCache.propertiesInterface, member: "PropertiesChanged", path: Self.adapter,
                         body: [.string(BlueZObjectCache.adapterInterface), .stringVariantDictionary([:]),
                                .stringArray(["Powered"])])
        #expect(cache.property(Self.adapter, BlueZObjectCache.adapterInterface, "Powered") == nil)
        #expect(cache.ingest(interface: "org.example.Other", member: "Ping", path: Self.adapter, body: []) == nil)
    }

    @Test func aNewOwnerEmptiesTheCacheAndCountsAGeneration() {
        var cache = Self.loadedCache()
        let generation = cache.generation
        let sameOwner = cache.ownerChanged(to: ":1.7")
        #expect(!sameOwner)
        #expect(cache.loaded)
        let ownerLeft = cache.ownerChanged(to: nil)
        #expect(ownerLeft)
        #expect(cache.generation == generation + 1)
        #expect(!cache.loaded)
        #expect(cache.objects.isEmpty)
        #expect(cache.ownerKnown)
    }
}
