#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Apple's Bluetooth SIG company identifier: the key of an iBeacon frame in BlueZ's
/// `Device1.ManufacturerData` dictionary.
public let appleCompanyID: UInt16 = 0x004C

/// One beacon: proximity UUID, major and minor.
public struct BeaconID: Sendable, Hashable, Codable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public var description: String { "\(uuid.uuidString) \(major)/\(minor)" }
}

/// An iBeacon advertisement as BlueZ reports it: the value of `ManufacturerData[0x004C]`, which is
/// `02 15`, the 16-byte proximity UUID, major and minor (big-endian) and the signed calibrated power
/// at 1 m (`txPower`, dBm).
public struct IBeaconFrame: Sendable, Hashable {
    public var beacon: BeaconID
    public var txPower: Int8

    public init(beacon: BeaconID, txPower: Int8) {
        self.beacon = beacon
        self.txPower = txPower
    }

    /// Decodes the manufacturer data for company 0x004C; nil for any other Apple frame (BlueZ keeps
    /// one value per company, so a phone's other Apple frames replace a beacon's under the same key).
    public init?(manufacturerData bytes: [UInt8]) {
        guard bytes.count == 23, bytes[0] == 0x02, bytes[1] == 0x15 else { return nil }
        let u = Array(bytes[2..<18])
        let uuid = UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
                               u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]))
        let major = UInt16(bytes[18]) << 8 | UInt16(bytes[19])
        let minor = UInt16(bytes[20]) << 8 | UInt16(bytes[21])
        self.init(beacon: BeaconID(uuid: uuid, major: major, minor: minor), txPower: Int8(bitPattern: bytes[22]))
    }

    /// The 23 bytes of manufacturer data (what a beacon advertises after the company ID).
    public var manufacturerData: [UInt8] {
        let u = beacon.uuid.uuid
        return [0x02, 0x15,
                u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
                UInt8(beacon.major >> 8), UInt8(beacon.major & 0xFF),
                UInt8(beacon.minor >> 8), UInt8(beacon.minor & 0xFF),
                UInt8(bitPattern: txPower)]
    }
}
