import Foundation
import RoomBridgeConfig

/// Reader checks that need no libnfc: the tty, its permissions, who holds it, ModemManager,
/// and the kernel's pn533 driver.
struct ReaderChecks {
    let host: HostFacts

    func run(config: DaemonConfig) -> [Finding] {
        guard config[.nfcEnabled] else {
            return [Finding("reader", "NFC readers", .skipped, "nfc.enabled is false")]
        }
        var out: [Finding] = []
        let readers = config[.nfcReaders]
        if readers.isEmpty {
            out.append(Finding("reader", "readers configured", .warning,
                               "nfc.readers is empty: libnfc's own configuration and scan decide",
                               fix: "name the reader, e.g. readers = [\"front=pn532_uart:/dev/nfc/pn532\"] in [nfc]"))
        }
        for entry in readers {
            let reader = ReaderEntry(parsing: entry)
            guard let connstring = reader.connstring, connstring.hasPrefix("pn532_uart:") else { continue }
            let name = reader.name
            let device = String(connstring.dropFirst("pn532_uart:".count).split(separator: ":").first ?? "")
            out += ttyChecks(reader: name, device: device)
        }
        out += kernelDriverChecks()
        return out
    }

    func ttyChecks(reader: String, device: String) -> [Finding] {
        let check = "\(reader): \(device)"
        var st = stat()
        guard stat(host.path(device), &st) == 0 else {
            return [Finding("reader", check, .failed, "\(device) does not exist (reader unplugged, or no udev symlink)",
                            fix: "plug the reader in; for a symlink under /dev/nfc install the udev rule (docs/install.md)")]
        }
        guard (st.st_mode & S_IFMT) == S_IFCHR else {
            return [Finding("reader", check, .failed, "\(device) is not a character device",
                            fix: "point the connstring at the serial device, e.g. pn532_uart:/dev/ttyUSB0")]
        }
        var out: [Finding] = []
        if let access = serviceUserAccess(st) {
            out.append(access)
        }
        out.append(holders(of: device, rdev: st.st_rdev, check: check))
        out.append(modemManager(rdev: st.st_rdev, check: check))
        return out
    }

    /// Whether the service user can read and write the device node (owner, group or other bits).
    func serviceUserAccess(_ st: stat) -> Finding? {
        guard let pw = getpwnam(host.serviceUser) else {
            return Finding("reader", "service user", .warning, "user \(host.serviceUser) does not exist",
                           fix: "sudo systemd-sysusers (installs the roombridge user)")
        }
        let uid = pw.pointee.pw_uid
        var groups = [gid_t](repeating: 0, count: 64)
        var n: Int32 = 64
        getgrouplist(pw.pointee.pw_name, pw.pointee.pw_gid, &groups, &n)
        let member = groups.prefix(Int(max(0, n))).contains(st.st_gid) || pw.pointee.pw_gid == st.st_gid
        let rw: mode_t = (st.st_uid == uid ? S_IRUSR | S_IWUSR : member ? S_IRGRP | S_IWGRP : S_IROTH | S_IWOTH)
        let group = getgrgid(st.st_gid).map { String(cString: $0.pointee.gr_name) } ?? String(st.st_gid)
        if st.st_mode & rw == rw {
            return Finding("reader", "\(host.serviceUser) can use the device", .ok, "group \(group), mode \(String(st.st_mode & 0o777, radix: 8))")
        }
        return Finding("reader", "\(host.serviceUser) can use the device", .failed,
                       "group \(group), mode \(String(st.st_mode & 0o777, radix: 8)); \(host.serviceUser) is not allowed to read and write it",
                       fix: "add GROUP=\"roombridge\", MODE=\"0660\" in the udev rule, or: sudo usermod -aG \(group) \(host.serviceUser)")
    }

    /// Processes other than roombridged that hold the device open (needs root to see all).
    func holders(of device: String, rdev: dev_t, check: String) -> Finding {
        var holders: [String] = []
        for pid in host.list("/proc") where Int32(pid) != nil {
            for fd in host.list("/proc/\(pid)/fd") {
                var st = stat()
                if stat(host.path("/proc/\(pid)/fd/\(fd)"), &st) == 0, (st.st_mode & S_IFMT) == S_IFCHR, st.st_rdev == rdev {
                    let comm = host.read("/proc/\(pid)/comm")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                    if comm != "roombridged" { holders.append("\(comm) (pid \(pid))") }
                    break
                }
            }
        }
        if holders.isEmpty {
            return Finding("reader", "nothing else holds \(device)", .ok, getuid() == 0 ? "checked every process" : "checked this user's processes (run as root to check all)")
        }
        return Finding("reader", "nothing else holds \(device)", .failed, "held by \(holders.joined(separator: ", "))",
                       fix: "stop the other program (a serial console, a stray nfc-poll, gpsd…) or give it another device")
    }

    /// ModemManager probes new serial ports and garbles the PN532's wakeup unless the port is ignored.
    func modemManager(rdev: dev_t, check: String) -> Finding {
        let running = host.list("/proc").contains { pid in
            Int32(pid) != nil && host.read("/proc/\(pid)/comm")?.hasPrefix("ModemManager") == true
        }
        guard running else {
            return Finding("reader", "ModemManager leaves it alone", .ok, "ModemManager is not running")
        }
        let major = (rdev >> 8) & 0xfff, minor = (rdev & 0xff) | ((rdev >> 12) & 0xfff00)
        let udevData = host.read("/run/udev/data/c\(major):\(minor)") ?? ""
        if udevData.contains("E:ID_MM_DEVICE_IGNORE=1") {
            return Finding("reader", "ModemManager leaves it alone", .ok, "ID_MM_DEVICE_IGNORE=1 is set")
        }
        return Finding("reader", "ModemManager leaves it alone", .failed, "ModemManager runs and may probe this port",
                       fix: "set ENV{ID_MM_DEVICE_IGNORE}=\"1\" in the udev rule (see 61-roombridge-pn532-serial.rules.example)")
    }

    /// The kernel's pn533 driver claims native PN533 readers before libnfc can.
    func kernelDriverChecks() -> [Finding] {
        let bound = host.list("/sys/bus/usb/drivers/pn533_usb").filter { $0.first?.isNumber == true }
        if !bound.isEmpty {
            return [Finding("reader", "kernel pn533 driver", .failed, "pn533_usb is bound to \(bound.joined(separator: ", "))",
                            fix: "sudo cp /usr/share/doc/roombridge/roombridge-blacklist-pn533.conf /etc/modprobe.d/ && sudo modprobe -r pn533_usb pn533 nfc")]
        }
        let loaded = host.exists("/sys/module/pn533_usb")
        return [Finding("reader", "kernel pn533 driver", .ok, loaded ? "pn533_usb is loaded but bound to no reader" : "not loaded")]
    }
}

/// Bluetooth checks that need no D-Bus: kernel support, and our D-Bus policy file.
struct BluetoothChecks {
    let host: HostFacts

    /// `config`: the daemon's configuration, when it could be read; the policy is only needed
    /// when it drives a curtain or watches presence regions (both through bluetoothd).
    func run(config: DaemonConfig? = nil) -> [Finding] {
        var out: [Finding] = []
        if let config, !config[.curtainEnabled], config[.presenceRegions].isEmpty {
            return [Finding("bluetooth", "D-Bus policy for org.bluez", .skipped,
                            "not needed: no curtain (curtain.enabled = false) and no presence regions are configured, so roombridged does not talk to bluetoothd")]
        }
        let policy = ["/usr/share/dbus-1/system.d/roombridge.conf", "/etc/dbus-1/system.d/roombridge.conf"]
            .first { host.exists($0) }
        if let policy {
            out.append(Finding("bluetooth", "D-Bus policy for org.bluez", .ok, policy))
        } else {
            out.append(Finding("bluetooth", "D-Bus policy for org.bluez", .failed,
                               "no roombridge.conf in /usr/share/dbus-1/system.d or /etc/dbus-1/system.d: bluetoothd will refuse the service user",
                               fix: "sudo make install (installs dbus/roombridge.conf), or copy it to /etc/dbus-1/system.d/"))
        }
        return out
    }
}
