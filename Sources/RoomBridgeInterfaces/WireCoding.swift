#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Varlink

/// How RoomBridge values are put on the wire: JSON via Codable, times as ISO 8601 UTC strings.
public enum WireCoding {
    /// Encodes a value to JSON.
    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONValueEncoder().encode(value)
    }

    /// Decodes method parameters, mapping decoding failures to `InvalidParameter`.
    public static func decode<T: Decodable>(_ type: T.Type, from parameters: [String: JSONValue]) throws(VarlinkError) -> T {
        do {
            return try JSONValueDecoder().decode(type, from: parameters)
        } catch let error as DecodingError {
            throw VarlinkError.invalidParameter(error)
        } catch {
            throw VarlinkError.invalidParameter("parameters")
        }
    }
}

// MARK: The lending domain's computed wire fields

extension WireCoding {
    /// A rental as `io.roombridge.Lending` type `Rental`: its fields and `overdue`, which is
    /// true when it is active and past due at `now`, the moment the reply is made.
    public static func encode(_ rental: Rental, now: Date) throws -> JSONValue {
        try withOverdue(encode(rental), rental, now: now)
    }

    /// A device record as `io.roombridge.Inventory` type `Device`, its rental with `overdue`.
    public static func encode(_ record: DeviceRecord, now: Date) throws -> JSONValue {
        let json = try encode(record)
        guard let rental = record.activeRental, case .object(var fields) = json, let wire = fields["rental"] else {
            return json
        }
        fields["rental"] = withOverdue(wire, rental, now: now)
        return .object(fields)
    }

    private static func withOverdue(_ json: JSONValue, _ rental: Rental, now: Date) -> JSONValue {
        guard case .object(var fields) = json else { return json }
        fields["overdue"] = .bool(rental.isOverdue(at: now))
        return .object(fields)
    }
}
