import DBus
import DBusExport
import Presence

/// What can be done to the simulated iBeacons (control verb `beacon`, see ``ControlProtocol``).
public enum BeaconControl: Sendable, Hashable {
    /// A new beacon (address chosen by the simulator when nil).
    case add(address: String?, frame: IBeaconFrame, rssi: Int, noise: Int, interval: Duration)
    /// The beacon moves: a new mean RSSI.
    case move(address: String, rssi: Int)
    case noise(address: String, dB: Int)
    case vanish(address: String)
    case appear(address: String)
    case remove(address: String)
    /// The device also sends another Apple frame (nil: only its iBeacon frame).
    case otherAppleFrame(address: String, bytes: [UInt8]?)
    /// bluetoothd's `TemporaryTimeout` (main.conf, default 30 s; 0 = never).
    case temporaryTimeout(Duration)
    case list
}

/// One client's discovery filter, as far as beacons care (adapter.c `parse_discovery_filter_dict()`).
struct BeaconDiscoveryFilter {
    var uuids: [String] = []
    var rssi: Int16?
    var pathloss: UInt16?
    var duplicateData = false

    init(_ dict: [String: DBusValue]) {
        for (key, value) in dict {
            switch (key, value.unwrappingVariants) {
            case ("UUIDs", let v): uuids = (try? v.stringArray()) ?? []
            case ("RSSI", .int16(let r)): rssi = r
            case ("Pathloss", .uint16(let p)): pathloss = p
            case ("DuplicateData", .boolean(let d)): duplicateData = d
            default: break
            }
        }
    }
}

/// The beacons around the adapter and what bluetoothd holds about them (their Device1 objects).
/// Owned and only touched by the ``BlueZSimulator`` actor.
final class BeaconField {
    struct Known {
        /// The RSSI bluetoothd shows (device.c `dev->rssi`).
        var rssi: Int16
        /// The value held for company 0x004C (bluetoothd keeps one per company: shared/ad.c).
        var appleData: [UInt8]
        /// device.c `device_update_last_seen()`: restarts the temporary timer.
        var lastSeen: ContinuousClock.Instant
    }

    var beacons: [SimulatedBeacon] = []
    var known: [String: Known] = [:]
    var nextAdvertisement: [String: ContinuousClock.Instant] = [:]
    var filters: [String: BeaconDiscoveryFilter] = [:]
    var temporaryTimeout: Duration = .seconds(30)
    var ticker: Task<Void, Never>?
    /// Advertisements heard while discovering (reported or not), for tests and the benchmark.
    var advertisementsHeard = 0
    private var addressesGiven = 0

    func newAddress() -> String {
        addressesGiven += 1
        let n = addressesGiven
        return "F0:BE:AC:00:" + hex(UInt8(n >> 8 & 0xFF)) + ":" + hex(UInt8(n & 0xFF))
    }

    private func hex(_ b: UInt8) -> String { (b < 0x10 ? "0" : "") + String(b, radix: 16, uppercase: true) }

    func index(of address: String) throws -> Int {
        guard let i = beacons.firstIndex(where: { $0.address == address.uppercased() }) else {
            throw DBusError(name: "org.bluez.Error.DoesNotExist", message: "no simulated beacon \(address)")
        }
        return i
    }
}

extension BlueZSimulator {
    static let beaconTickPeriod: Duration = .milliseconds(20)

    func beaconPath(_ address: String) -> DBusObjectPath {
        DBusObjectPath(stringLiteral: adapterPath.rawValue + "/dev_" + address.replacingColons())
    }

    /// Starts the radio: every tick, due advertisements are heard and expired devices removed.
    func startBeacons() {
        guard beaconField.ticker == nil else { return }
        beaconField.ticker = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.beaconTickPeriod)
                await self?.beaconTick()
            }
        }
    }

    func stopBeacons() {
        beaconField.ticker?.cancel()
        beaconField.ticker = nil
    }

    /// SetDiscoveryFilter of `sender` (already validated by the adapter).
    func beaconFilterSet(by sender: String, _ dict: [String: DBusValue]) {
        beaconField.filters[sender] = dict.isEmpty ? nil : BeaconDiscoveryFilter(dict)
    }

    /// The last discovery session ended: adapter.c `discovery_cleanup()` removes every temporary device that is not
    /// connectable — every beacon (ADV_NONCONN_IND) — so their Device1 objects go (InterfacesRemoved).
    func beaconsDiscoveryEnded() {
        for address in beaconField.known.keys.sorted() { forgetBeaconDevice(address) }
    }

    /// bluetoothd went away: its objects and its clients' filters with it.
    func beaconsBluetoothdGone() {
        beaconField.known.removeAll()
        beaconField.filters.removeAll()
    }

    func handleBeacon(_ control: BeaconControl) throws -> String {
        let field = beaconField
        switch control {
        case .add(let address, let frame, let rssi, let noise, let interval):
            let address = address?.uppercased() ?? field.newAddress()
            guard !field.beacons.contains(where: { $0.address == address }) else {
                throw DBusError(name: "org.bluez.Error.AlreadyExists", message: "beacon \(address) exists")
            }
            field.beacons.append(SimulatedBeacon(address: address, frame: frame, rssi: rssi, noise: noise, interval: interval))
            return "address=\(address)"
        case .move(let address, let rssi):
            let i = try field.index(of: address)
            field.beacons[i].rssi = rssi
            return field.beacons[i].summary
        case .noise(let address, let dB):
            let i = try field.index(of: address)
            field.beacons[i].noise = dB
            return field.beacons[i].summary
        case .vanish(let address):
            let i = try field.index(of: address)
            field.beacons[i].visible = false
            return field.beacons[i].summary
        case .appear(let address):
            let i = try field.index(of: address)
            field.beacons[i].visible = true
            field.nextAdvertisement[field.beacons[i].address] = nil
            return field.beacons[i].summary
        case .remove(let address):
            field.beacons.remove(at: try field.index(of: address))
            return "beacons=\(field.beacons.count)"
        case .otherAppleFrame(let address, let bytes):
            let i = try field.index(of: address)
            field.beacons[i].otherAppleFrame = bytes
            return field.beacons[i].summary
        case .temporaryTimeout(let t):
            field.temporaryTimeout = t
            return "temporary-timeout=\(t)"
        case .list:
            return "heard=\(field.advertisementsHeard) objects=\(field.known.count) "
                + field.beacons.map(\.summary).joined(separator: "; ")
        }
    }

    /// One tick of the radio.
    func beaconTick() {
        let field = beaconField
        let now = ContinuousClock.now
        // device.c `set_temporary_timer()` / `device_disappeared()`: a temporary device not seen for
        // TemporaryTimeout is removed (InterfacesRemoved).
        if field.temporaryTimeout > .zero {
            for (address, k) in field.known where now - k.lastSeen >= field.temporaryTimeout {
                forgetBeaconDevice(address)
            }
        }
        guard powered, !discoverySessions.isEmpty, connection != nil else { return }
        for i in field.beacons.indices where field.beacons[i].visible {
            let address = field.beacons[i].address
            if let due = field.nextAdvertisement[address], due > now { continue }
            field.nextAdvertisement[address] = now + field.beacons[i].interval
            let (rssi, appleData) = field.beacons[i].nextAdvertisement()
            heard(address: address, rssi: rssi, appleData: appleData, at: now)
        }
    }

    /// An advertisement reaches bluetoothd while it discovers: adapter.c `btd_adapter_device_found()`.
    private func heard(address: String, rssi: Int16, appleData: [UInt8], at now: ContinuousClock.Instant) {
        let field = beaconField
        field.advertisementsHeard += 1
        let filters = discoverySessions.map { field.filters[$0] }
        // `is_filter_match()`: a session without a filter, or without UUIDs, wants every device (a beacon advertises
        // no service UUID). RSSI thresholds are applied by the controller (MGMT Start Service Discovery); a
        // session's own threshold is checked here.
        let matched = filters.contains { f in
            guard let f else { return true }
            return f.uuids.isEmpty && (f.rssi.map { rssi >= $0 } ?? true)
        }
        // `discovery_filter_has_proximity()`: any RSSI or Pathloss filter → every RSSI change is reported
        // (`device_set_rssi_with_delta(dev, rssi, 0)`), else only changes of RSSI_THRESHOLD (8) dBm or more.
        let threshold = filters.contains { $0?.rssi != nil || $0?.pathloss != nil } ? 0 : Self.rssiThreshold
        // `filter_duplicate_data()`: one client asking for DuplicateData is enough.
        let duplicate = filters.contains { $0?.duplicateData == true }
        if var k = field.known[address] {
            k.lastSeen = now
            field.known[address] = k
        }
        guard matched, let c = connection else { return }
        let path = beaconPath(address)
        guard var k = field.known[address] else {
            field.known[address] = BeaconField.Known(rssi: rssi, appleData: appleData, lastSeen: now)
            exportBeaconDevice(address: address, rssi: rssi, appleData: appleData)
            return
        }
        var changes: [(String, DBusValue)] = []
        // device.c `device_set_rssi_with_delta()`.
        if abs(Int(k.rssi) - Int(rssi)) >= threshold, k.rssi != rssi {
            k.rssi = rssi
            changes.append(("RSSI", .int16(rssi)))
        }
        // device.c `device_set_manufacturer_data()`: with DuplicateData the data is cleared first
        // (`bt_ad_clear_manufacturer_data()`), so `bt_ad_add_manufacturer_data()` always reports a change;
        // otherwise identical bytes for the same company report nothing, different ones replace the old value.
        if duplicate || k.appleData != appleData {
            k.appleData = appleData
            changes.append(("ManufacturerData", Self.appleManufacturerData(appleData)))
        }
        field.known[address] = k
        guard !changes.isEmpty else { return }
        // gdbus sends the properties changed in one main-loop iteration together, in the order they were set
        // (RSSI before ManufacturerData in `btd_adapter_device_found()`).
        try? c.updateProperties(changes.map { (name: $0.0, value: $0.1) }, interface: Self.deviceInterface, path: path,
                                signalled: Set(changes.map(\.0)))
    }

    static func appleManufacturerData(_ bytes: [UInt8]) -> DBusValue {
        .dictionary(keySignature: "q", valueSignature: "v", [DBusDictEntry(.uint16(appleCompanyID), .variant(.bytes(bytes)))])
    }

    /// A new Device1 (adapter.c `adapter_create_device()`): one InterfacesAdded with the properties set while the
    /// advertisement was processed. No Name (iBeacons send none); Alias is then the address with dashes
    /// (device.c `dev_property_get_alias()`).
    private func exportBeaconDevice(address: String, rssi: Int16, appleData: [UInt8]) {
        guard let c = connection else { return }
        let alias = String(address.map { $0 == ":" ? "-" : $0 })
        try? c.export(beaconPath(address), interfaces: [DBusInterface(Self.deviceInterface, methods: [
            DBusMethod("Connect") { _ in throw BlueZError.leAbortByLocal },  // non-connectable advertiser
            DBusMethod("Disconnect") { _ in [] },
        ], properties: [
            DBusProperty("Address", value: .string(address)),
            DBusProperty("AddressType", value: .string("random")),
            DBusProperty("Alias", value: .string(alias), access: .readwrite),
            DBusProperty("Paired", value: .boolean(false)),
            DBusProperty("Bonded", value: .boolean(false)),
            DBusProperty("Trusted", value: .boolean(false), access: .readwrite),
            DBusProperty("Blocked", value: .boolean(false), access: .readwrite),
            DBusProperty("LegacyPairing", value: .boolean(false)),
            DBusProperty("RSSI", value: .int16(rssi), changeSignal: .none),
            DBusProperty("Connected", value: .boolean(false)),
            DBusProperty("UUIDs", value: .stringArray([])),
            DBusProperty("Adapter", value: .objectPath(adapterPath)),
            DBusProperty("ManufacturerData", value: Self.appleManufacturerData(appleData), changeSignal: .none),
            DBusProperty("ServicesResolved", value: .boolean(false)),
            DBusProperty("AdvertisingFlags", value: .bytes([0x06])),
        ])])
    }

    private func forgetBeaconDevice(_ address: String) {
        guard beaconField.known.removeValue(forKey: address) != nil else { return }
        connection?.unexport(beaconPath(address))
    }
}
