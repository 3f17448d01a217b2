import CBluetooth
#if canImport(Glibc)
import Glibc
#endif

/// HCI-level diagnostics through libbluetooth, for `roombridged doctor`. Never used to drive the curtain
/// (that goes through BlueZ over D-Bus).
public enum BluetoothDiagnostics {
    /// One HCI controller as the kernel reports it.
    public struct Controller: Sendable, Hashable, CustomStringConvertible {
        /// Device id (N in hciN).
        public var id: Int
        /// Kernel name, e.g. "hci0".
        public var name: String
        /// Public address, "AA:BB:CC:DD:EE:FF".
        public var address: String
        /// HCI_UP: the controller is powered up at the kernel level.
        public var isUp: Bool

        public var description: String { "\(name) \(address) \(isUp ? "UP" : "DOWN")" }
    }

    /// What the kernel offers.
    public enum Availability: Sendable, Hashable, CustomStringConvertible {
        /// `socket(AF_BLUETOOTH, …)` failed: the kernel has no Bluetooth support (or it is blocked).
        case kernelUnsupported(errno: Int32, message: String)
        /// Bluetooth works but no controller is present.
        case noControllers
        /// Controllers found.
        case controllers([Controller])

        public var description: String {
            switch self {
            case .kernelUnsupported(let e, let m):
                "the kernel has no Bluetooth support (socket(AF_BLUETOOTH) failed: \(m), errno \(e)): "
                    + "load the bluetooth module or run on a machine with a Bluetooth adapter"
            case .noControllers:
                "Bluetooth is supported but no controller is present: plug in a Bluetooth adapter and check `rfkill list`"
            case .controllers(let list):
                list.map(\.description).joined(separator: "; ")
            }
        }
    }

    /// Probes the kernel: opens an HCI socket and lists controllers (hci_devinfo for ids 0..<HCI_MAX_DEV).
    /// Non-blocking syscalls only.
    public static func probe() -> Availability {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        if fd < 0 {
            let e = errno
            return .kernelUnsupported(errno: e, message: String(cString: strerror(e)))
        }
        close(fd)
        var found: [Controller] = []
        for id in 0..<Int32(HCI_MAX_DEV) {
            var info = hci_dev_info()
            guard hci_devinfo(id, &info) == 0 else { continue }
            var bdaddr = info.bdaddr
            var buf = [CChar](repeating: 0, count: 18)
            _ = ba2str(&bdaddr, &buf)
            let name = withUnsafeBytes(of: info.name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let address = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            found.append(Controller(id: Int(info.dev_id), name: name, address: address,
                                    isUp: info.flags & (UInt32(1) << UInt32(HCI_UP)) != 0))
        }
        return found.isEmpty ? .noControllers : .controllers(found)
    }
}
