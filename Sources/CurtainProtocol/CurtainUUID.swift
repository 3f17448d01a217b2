/// UUIDs of the curtain controller's GATT profile, version 1 (docs/curtain-gatt.md).
///
/// BlueZ reports UUIDs as lower-case 128-bit strings (`Device1.UUIDs`, `GattService1.UUID`,
/// `GattCharacteristic1.UUID`), so these are lower case and comparisons should use
/// ``CurtainUUID/matches(_:_:)``.
public enum CurtainUUID {
    /// The primary curtain service (also in the advertised service UUID list).
    public static let service = "5c3a0001-8f4e-4b8e-9e61-637572746e00"
    /// The command characteristic (write, write-without-response).
    public static let command = "5c3a0002-8f4e-4b8e-9e61-637572746e00"
    /// The status characteristic (read, notify; a CCCD is present).
    public static let status = "5c3a0003-8f4e-4b8e-9e61-637572746e00"
    /// The Client Characteristic Configuration descriptor.
    public static let cccd = "00002902-0000-1000-8000-00805f9b34fb"

    /// Case-insensitive UUID comparison.
    public static func matches(_ a: String, _ b: String) -> Bool {
        a.lowercased() == b.lowercased()
    }
}
