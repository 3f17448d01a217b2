#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Dates on the wire: Varlink has no time type, so `Date` values are ISO 8601 UTC strings with
// milliseconds (`2026-11-21T18:00:00.000Z`), the form JSON APIs and `date -d` read. Decoding
// also accepts them without fractional seconds.

enum JSONDates {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let plain = Date.ISO8601FormatStyle()

    /// The wire form of `value` when it is a `Date`, else nil.
    static func encode(_ value: Any) -> JSONValue? {
        guard let date = value as? Date else { return nil }
        return .string(date.formatted(withFraction))
    }

    static func decode(_ value: JSONValue, codingPath: [any CodingKey]) throws -> Date {
        guard case .string(let text) = value else {
            throw DecodingError.typeMismatch(Date.self, .init(codingPath: codingPath, debugDescription: "expected an ISO 8601 time string, found \(value.typeName)"))
        }
        if let d = try? withFraction.parse(text) { return d }
        if let d = try? plain.parse(text) { return d }
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "expected an ISO 8601 time such as 2026-11-21T18:00:00Z, got \"\(text)\""))
    }

    static func isDate<T>(_ type: T.Type) -> Bool { type == Date.self }
}
