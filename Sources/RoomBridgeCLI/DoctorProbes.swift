import BlueZClient
import DBus
import Diagnostics
import Dispatch
import Foundation
import LendingStore
import NFCReader
import RoomBridgeConfig
import RoomBridgeCore
import Varlink
import VarlinkNIO

/// Checks contributed by the adapters (libnfc, BlueZ, the store); doctor runs them only when
/// roombridged does not answer (while it runs, it is asked instead).
func doctorProbes() -> [any DoctorProbe] {
    [ReaderProbe(), BluetoothProbe(), DatabaseProbe()]
}

/// Runs blocking work (libnfc scans, SQLite reads) on a Dispatch thread, off the cooperative pool.
func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in DispatchQueue.global().async { c.resume(returning: body()) } }
}

/// libnfc sees a reader (a scan; roombridged is not running, so nothing holds the device).
struct ReaderProbe: DoctorProbe {
    func run(config: DaemonConfig?, host: HostFacts) async -> [Finding] {
        guard let config, config[.nfcEnabled] else { return [] }
        // libnfc prints its own errors on stderr, e.g. "Unable to find USB busses" from
        // usbbus_prepare() (libnfc/buses/usbbus.c) on a machine without usbfs. nfc_init's
        // nfc_context_new() (libnfc/nfc-internal.c) takes the log level from LIBNFC_LOG_LEVEL and
        // log_put() (libnfc/log.c) prints nothing at 0. The finding below says what the scan
        // found; a LIBNFC_LOG_LEVEL the user set is kept.
        setenv("LIBNFC_LOG_LEVEL", "0", 0)
        let found = await offPool { NFCReaderService.discoverDevices() }
        if found.isEmpty {
            return [Finding("reader", "libnfc sees a device", .failed, "nfc_list_devices found none",
                            fix: "plug the reader in; name it in nfc.readers (e.g. pn532_uart:/dev/nfc/pn532); check with nfc-list")]
        }
        return [Finding("reader", "libnfc sees a device", .ok, found.joined(separator: ", "))]
    }
}

/// Kernel Bluetooth (libbluetooth), then bluetoothd, the adapter and the curtain on the system bus.
struct BluetoothProbe: DoctorProbe {
    func run(config: DaemonConfig?, host: HostFacts) async -> [Finding] {
        if let config, !config[.curtainEnabled] {
            return [Finding("bluetooth", "curtain", .skipped, "curtain.enabled is false")]
        }
        let findings = await offPool { BluetoothKernelProbe.findings() }
        var checks: [BluetoothCheck] = []
        do {
            let bus = try await DBusConnection.open(.system)
            let address = config?[.curtainAddress] ?? ""
            let adapter = config?[.curtainAdapter] ?? ""
            checks += await BluetoothDiagnostics.blueZChecks(bus: bus, adapterName: adapter.isEmpty ? nil : adapter,
                                                             deviceAddress: address.isEmpty ? nil : address)
            await bus.close()
        } catch {
            checks.append(BluetoothCheck("system bus", .failed, "cannot connect: \(error)",
                                         fix: "sudo systemctl start dbus (bluetoothd is reached over the system bus)"))
        }
        return findings + checks.map { c in
            let status: Finding.Status = switch c.status {
            case .ok: .ok
            case .warning: .warning
            case .failed: .failed
            case .skipped: .skipped
            }
            return Finding("bluetooth", c.check, status, c.detail, fix: c.fix)
        }
    }
}

/// The database: present, writable, and of this binary's schema — inspected read-only.
struct DatabaseProbe: DoctorProbe {
    func run(config: DaemonConfig?, host: HostFacts) async -> [Finding] {
        guard let config else { return [] }
        let path = config[.databasePath]
        let inspection = await offPool { SQLiteInventoryStore.inspect(path: path) }
        var out: [Finding] = []
        switch inspection.schema {
        case .absent:
            out.append(Finding("database", "schema", .ok, "\(path) does not exist yet; roombridged creates it at start"))
        case .current:
            out.append(Finding("database", "schema", .ok, "\(path): current (\(SQLiteInventoryStore.knownMigrations.last ?? "?"))"))
        case .older(let missing):
            out.append(Finding("database", "schema", .warning, "\(path) lacks migrations \(missing.joined(separator: ", "))",
                               fix: "restart roombridged to migrate it (back it up first: see docs/operations.md)"))
        case .refused(let error):
            out.append(Finding("database", "schema", .failed, error.description,
                               fix: "roombridged will refuse this file; restore a backup or set database.path"))
        }
        out.append(inspection.writable
            ? Finding("database", "writable", .ok, "by \(userName())")
            : Finding("database", "writable", .warning, "not writable by \(userName()) (the service user needs it)",
                      fix: "run doctor as the service user (sudo -u roombridge roombridgectl doctor) or fix ownership: chown -R roombridge: \((path as NSString).deletingLastPathComponent)"))
        return out
    }

    private func userName() -> String {
        getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "uid \(getuid())"
    }
}
