#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Presence

/// The `beacon` verbs of the control socket:
///
/// ```
/// beacon add UUID MAJOR MINOR [tx=-59] [rssi=-65] [noise=0] [interval=500] [address=AA:BB:CC:DD:EE:FF]
///                                        a new iBeacon (answers address=…); interval in ms
/// beacon rssi ADDRESS DBM                it moves: a new mean RSSI
/// beacon noise ADDRESS DB                readings vary by ±DB
/// beacon vanish|appear|remove ADDRESS    it stops / starts advertising; it is gone
/// beacon apple-frame ADDRESS HEX|off     it also sends this other Apple frame (alternating)
/// beacon temporary-timeout SECONDS       bluetoothd's TemporaryTimeout (default 30, 0 = never)
/// beacon list                            every beacon, and how many adverts bluetoothd heard
/// ```
extension ControlProtocol {
    static let beaconUsage = "usage: beacon add UUID MAJOR MINOR [tx=N] [rssi=N] [noise=N] [interval=MS] [address=A] | "
        + "beacon rssi|noise ADDRESS N | beacon vanish|appear|remove ADDRESS | beacon apple-frame ADDRESS HEX|off | "
        + "beacon temporary-timeout SECONDS | beacon list"

    static func parseBeacon(_ args: [String]) throws(ParseError) -> BeaconControl {
        guard let sub = args.first else { throw ParseError(description: beaconUsage) }
        let rest = Array(args.dropFirst())
        func number(_ s: String, _ what: String) throws(ParseError) -> Int {
            guard let v = Int(s) else { throw ParseError(description: "beacon \(sub): \(what) must be an integer, not \"\(s)\"") }
            return v
        }
        switch (sub, rest.count) {
        case ("add", 3...):
            guard let uuid = UUID(uuidString: rest[0]) else { throw ParseError(description: "beacon add: bad UUID \"\(rest[0])\"") }
            let major = try number(rest[1], "major"), minor = try number(rest[2], "minor")
            guard (0...0xFFFF).contains(major), (0...0xFFFF).contains(minor) else {
                throw ParseError(description: "beacon add: major and minor are 0…65535")
            }
            var tx = -59, rssi = -65, noise = 0, interval = 500
            var address: String?
            for option in rest.dropFirst(3) {
                let kv = option.split(separator: "=", maxSplits: 1).map(String.init)
                guard kv.count == 2 else { throw ParseError(description: beaconUsage) }
                switch kv[0] {
                case "tx": tx = try number(kv[1], "tx")
                case "rssi": rssi = try number(kv[1], "rssi")
                case "noise": noise = try number(kv[1], "noise")
                case "interval": interval = try number(kv[1], "interval")
                case "address": address = kv[1]
                default: throw ParseError(description: "beacon add: unknown option \"\(kv[0])\"")
                }
            }
            guard (-127...20).contains(tx), tx != 0 else { throw ParseError(description: "beacon add: tx is -127…20, not 0") }
            guard noise >= 0, interval >= 20 else { throw ParseError(description: "beacon add: noise ≥ 0, interval ≥ 20 ms") }
            let frame = IBeaconFrame(beacon: BeaconID(uuid: uuid, major: UInt16(major), minor: UInt16(minor)), txPower: Int8(tx))
            return .add(address: address, frame: frame, rssi: rssi, noise: noise, interval: .milliseconds(interval))
        case ("rssi", 2): return .move(address: rest[0], rssi: try number(rest[1], "rssi"))
        case ("noise", 2):
            let n = try number(rest[1], "noise")
            guard n >= 0 else { throw ParseError(description: "beacon noise: must not be negative") }
            return .noise(address: rest[0], dB: n)
        case ("vanish", 1): return .vanish(address: rest[0])
        case ("appear", 1): return .appear(address: rest[0])
        case ("remove", 1): return .remove(address: rest[0])
        case ("apple-frame", 2):
            if rest[1] == "off" { return .otherAppleFrame(address: rest[0], bytes: nil) }
            guard let bytes = hexBytes(rest[1]), !bytes.isEmpty else {
                throw ParseError(description: "beacon apple-frame: HEX bytes or off")
            }
            return .otherAppleFrame(address: rest[0], bytes: bytes)
        case ("temporary-timeout", 1):
            guard let s = Double(rest[0]), s >= 0, s.isFinite else {
                throw ParseError(description: "beacon temporary-timeout: SECONDS ≥ 0")
            }
            return .temporaryTimeout(.milliseconds(Int(s * 1000)))
        case ("list", 0): return .list
        default: throw ParseError(description: beaconUsage)
        }
    }

    private static func hexBytes(_ s: String) -> [UInt8]? {
        let chars = Array(s.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let b = UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
        }
        return out
    }
}
