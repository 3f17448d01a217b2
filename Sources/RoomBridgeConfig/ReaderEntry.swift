/// One entry of `nfc.readers`: `name=connstring`, or a bare libnfc connstring named after its
/// driver (`pn53x_usb:` → `pn53x_usb`).
public struct ReaderEntry: Sendable, Equatable {
    /// The reader's name in RoomBridge (events, status, doctor).
    public var name: String
    /// The libnfc connstring; nil lets libnfc choose (its configuration, `LIBNFC_DEVICE`, scan).
    public var connstring: String?

    public init(name: String, connstring: String?) {
        self.name = name
        self.connstring = connstring
    }

    public init(parsing entry: String) {
        if let eq = entry.firstIndex(of: "="), !entry[..<eq].contains(":") {
            self.init(name: String(entry[..<eq]), connstring: String(entry[entry.index(after: eq)...]))
        } else {
            self.init(name: String(entry.split(separator: ":").first ?? "reader"), connstring: entry)
        }
    }

    /// The configured readers; none configured means one reader that libnfc chooses.
    public static func all(in config: DaemonConfig) -> [ReaderEntry] {
        let entries = config[.nfcReaders]
        return entries.isEmpty ? [ReaderEntry(name: "reader", connstring: nil)] : entries.map(ReaderEntry.init(parsing:))
    }
}
