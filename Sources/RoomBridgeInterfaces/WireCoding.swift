#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
