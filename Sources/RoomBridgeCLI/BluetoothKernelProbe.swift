import CBluetooth
import Diagnostics
#if canImport(Glibc)
import Glibc
#endif

/// HCI-level checks through libbluetooth, for `roombridgectl doctor` only: the daemon drives the
/// curtain through BlueZ over D-Bus and never links libbluetooth.
enum BluetoothKernelProbe {
    /// One HCI controller as the kernel reports it.
    struct Controller: Sendable, Hashable {
        /// Kernel name, e.g. "hci0".
        var name: String
        /// Public address, "AA:BB:CC:DD:EE:FF".
        var address: String
        /// HCI_UP: the controller is powered up at the kernel level.
        var isUp: Bool
    }

    /// What the kernel offers.
    enum Availability: Sendable, Hashable {
        /// `socket(AF_BLUETOOTH, …)` failed: the kernel has no Bluetooth support (or it is blocked).
        case kernelUnsupported(message: String)
        /// Bluetooth works but no controller is present.
        case noControllers
        /// Controllers found.
        case controllers([Controller])
    }

    /// Opens an HCI socket and lists controllers (hci_devinfo for ids 0..<HCI_MAX_DEV).
    /// Non-blocking syscalls only.
    static func probe() -> Availability {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        if fd < 0 {
            let e = errno
            return .kernelUnsupported(message: "\(String(cString: strerror(e))) (errno \(e))")
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
            found.append(Controller(name: name, address: address, isUp: info.flags & (UInt32(1) << UInt32(HCI_UP)) != 0))
        }
        return found.isEmpty ? .noControllers : .controllers(found)
    }

    /// The findings (area "bluetooth") for what ``probe()`` saw, each problem with its fix.
    static func findings() -> [Finding] {
        switch probe() {
        case .kernelUnsupported(let message):
            return [Finding("bluetooth", "kernel Bluetooth support", .failed, "socket(AF_BLUETOOTH) failed: \(message)",
                            fix: "use a kernel with Bluetooth (modprobe bluetooth btusb) or run on a machine with an adapter")]
        case .noControllers:
            return [Finding("bluetooth", "HCI controllers", .failed, "none present",
                            fix: "plug in a Bluetooth adapter; check `rfkill list` and `dmesg | grep -i bluetooth`")]
        case .controllers(let list):
            return list.map { c in
                c.isUp ? Finding("bluetooth", "controller \(c.name)", .ok, "\(c.address) UP")
                       : Finding("bluetooth", "controller \(c.name)", .warning, "\(c.address) DOWN",
                                 fix: "bluetoothctl power on (or `rfkill unblock bluetooth`)")
            }
        }
    }
}
