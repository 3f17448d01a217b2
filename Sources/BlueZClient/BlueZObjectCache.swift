import CurtainProtocol
import DBus

/// The client's copy of bluetoothd's object tree: GetManagedObjects, then InterfacesAdded/Removed and
/// PropertiesChanged applied as they arrive. Pure data: no bus, no clock, no actor.
///
/// It also remembers who owns `org.bluez` (each new owner is a new *generation*: a restarted bluetoothd
/// exports fresh objects and forgets every session) and two facts the connection cycle needs:
/// how many `Connected=true` signals each device has sent, and which devices were reported since a
/// discovery started.
struct BlueZObjectCache: Sendable {
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

    typealias Objects = [DBusObjectPath: [String: [String: DBusValue]]]

    /// What one signal changed, for the reactions that depend on the curtain (its profile, its paths).
    enum Change: Sendable, Equatable {
        case properties(path: DBusObjectPath, interface: String, changed: [String: DBusValue])
        case interfacesAdded(DBusObjectPath)
        case interfacesRemoved(DBusObjectPath)
    }

    private(set) var objects: Objects = [:]
    /// The unique name owning `org.bluez`, nil while bluetoothd is not on the bus.
    private(set) var owner: String?
    /// Counts owners: a value taken before a wait tells whether bluetoothd restarted meanwhile.
    private(set) var generation = 0
    /// GetManagedObjects was answered for the current owner.
    private(set) var loaded = false
    /// The first answer about `org.bluez`'s owner arrived (until then "no owner" only means "not asked yet").
    private(set) var ownerKnown = false
    /// Connected=true signals seen per device.
    private(set) var connectedUps: [DBusObjectPath: Int] = [:]
    /// Devices reported (added, or RSSI/ServiceData changed) since ``startSearch()``.
    private(set) var freshDevices: Set<DBusObjectPath> = []

    /// Records the owner of `org.bluez`; a new owner empties the cache. Returns true when the owner changed.
    mutating func ownerChanged(to newOwner: String?) -> Bool {
        ownerKnown = true
        guard newOwner != owner else { return false }
        owner = newOwner
        generation += 1
        objects.removeAll()
        loaded = false
        return true
    }

    /// Adopts a GetManagedObjects answer.
    mutating func load(_ loaded: Objects) {
        objects = loaded
        self.loaded = true
    }

    /// Forgets which devices were reported, as a new discovery starts.
    mutating func startSearch() {
        freshDevices.removeAll()
    }

    /// Applies a signal from bluetoothd; nil when it is not one the cache follows.
    mutating func ingest(_ message: DBusMessage) -> Change? {
        guard let member = message.member, let path = message.path else { return nil }
        return ingest(interface: message.interface, member: member, path: path, body: message.body)
    }

    /// Applies a signal given by its parts.
    mutating func ingest(interface: String?, member: String, path: DBusObjectPath, body: [DBusValue]) -> Change? {
        switch (interface, member) {
        case (Self.propertiesInterface, "PropertiesChanged"):
            guard body.count >= 2, case .string(let iface) = body[0],
                  let changedProps = try? body[1].stringVariantDictionary() else { return nil }
            let invalidated = (body.count > 2 ? try? body[2].stringArray() : nil) ?? []
            if iface == Self.deviceInterface, changedProps["RSSI"] != nil || changedProps["ServiceData"] != nil {
                freshDevices.insert(path)
            }
            if iface == Self.deviceInterface, changedProps["Connected"] == .boolean(true) {
                connectedUps[path, default: 0] += 1
            }
            if objects[path]?[iface] != nil {
                for (k, v) in changedProps { objects[path]?[iface]?[k] = v }
                for k in invalidated { objects[path]?[iface]?[k] = nil }
            }
            return .properties(path: path, interface: iface, changed: changedProps)
        case (Self.objectManagerInterface, "InterfacesAdded"):
            guard body.count == 2, case .objectPath(let p) = body[0],
                  let ifaces = try? body[1].interfacesAndProperties() else { return nil }
            for (name, props) in ifaces { objects[p, default: [:]][name] = props }
            if ifaces[Self.deviceInterface] != nil { freshDevices.insert(p) }
            return .interfacesAdded(p)
        case (Self.objectManagerInterface, "InterfacesRemoved"):
            guard body.count == 2, case .objectPath(let p) = body[0],
                  let names = try? body[1].stringArray() else { return nil }
            for name in names { objects[p]?[name] = nil }
            if objects[p]?.isEmpty == true { objects[p] = nil }
            return .interfacesRemoved(p)
        default:
            return nil
        }
    }

    // MARK: Queries

    func property(_ path: DBusObjectPath, _ iface: String, _ name: String) -> DBusValue? {
        objects[path]?[iface]?[name]
    }

    func has(_ path: DBusObjectPath, _ iface: String) -> Bool {
        objects[path]?[iface] != nil
    }

    /// The adapter called `name` (`hci0`), or the first one exported.
    func adapterPath(named name: String?) -> DBusObjectPath? {
        let adapters = objects.filter { $0.value[Self.adapterInterface] != nil }.keys.sorted()
        if let name {
            return adapters.first { $0.rawValue == "/org/bluez/" + name }
        }
        return adapters.first
    }

    /// The device under `adapter` with `address`, or (no address) the first one advertising `serviceUUID`.
    func matchingDevice(adapter: DBusObjectPath, address: String?, serviceUUID: String) -> DBusObjectPath? {
        let candidates = objects.filter { path, ifaces in
            guard let dev = ifaces[Self.deviceInterface], dev["Adapter"] == .objectPath(adapter) else { return false }
            if let address {
                return (try? dev["Address"]?.string())?.uppercased() == address.uppercased()
            }
            let uuids = (try? dev["UUIDs"]?.stringArray()) ?? []
            let serviceData = (try? dev["ServiceData"]?.stringVariantDictionary()) ?? [:]
            return uuids.contains { CurtainUUID.matches($0, serviceUUID) }
                || serviceData.keys.contains { CurtainUUID.matches($0, serviceUUID) }
        }
        return candidates.keys.sorted().first
    }

    /// The characteristic with `uuid` below `device` (the first by path when a device has several).
    func characteristic(_ uuid: String, under device: DBusObjectPath) -> DBusObjectPath? {
        objects.filter { path, ifaces in
            guard path.isDescendant(of: device), let c = ifaces[Self.characteristicInterface],
                  let u = try? c["UUID"]?.string() else { return false }
            return CurtainUUID.matches(u, uuid)
        }.keys.sorted().first
    }

    /// Service and manufacturer data a device advertises.
    /// `only`: just these of `ServiceData` and `ManufacturerData` (those a PropertiesChanged carried), so that a
    /// value bluetoothd still holds from an older advertisement is not mixed with a new one.
    func advertisement(of device: DBusObjectPath, only: Set<String>? = nil) -> CurtainAdvertisementData {
        func wanted(_ name: String) -> Bool { only?.contains(name) ?? true }
        let serviceData = (wanted("ServiceData")
            ? (try? property(device, Self.deviceInterface, "ServiceData")?.stringVariantDictionary()) ?? [:] : [:])
            .compactMapValues { try? $0.unwrappingVariants.bytes() }
        var manufacturerData: [UInt16: [UInt8]] = [:]
        if wanted("ManufacturerData"),
           case .dictionary(_, _, let entries)? = property(device, Self.deviceInterface, "ManufacturerData") {
            for entry in entries {
                if case .uint16(let id) = entry.key, let bytes = try? entry.value.unwrappingVariants.bytes() {
                    manufacturerData[id] = bytes
                }
            }
        }
        return CurtainAdvertisementData(serviceData: serviceData, manufacturerData: manufacturerData)
    }
}
