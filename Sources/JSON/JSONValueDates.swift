#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Times on the wire: Varlink has no time type, so times are ISO 8601 UTC strings with
/// milliseconds (`2026-11-21T18:00:00.000Z`), the form JSON APIs and `date -d` read. The one
/// parser of them for the daemon, its clients and the Codable coding of `Date`.
public enum WireTime {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let plain = Date.ISO8601FormatStyle()

    /// `date` in the wire's form, with milliseconds.
    public static func string(_ date: Date) -> String { date.formatted(withFraction) }

    /// Parses an ISO 8601 time, with or without fractional seconds (and with `Z` or an offset such as `+01:00`).
    public static func parse(_ text: String) -> Date? {
        if let d = try? withFraction.parse(text) { return d }
        return try? plain.parse(text)
    }

    /// Parses a time parameter a client sends: an ISO 8601 time as ``parse(_:)``, or `YYYY-MM-DD`
    /// (midnight UTC), with surrounding spaces ignored; nil otherwise.
    public static func parseParameter(_ text: String) -> Date? {
        var trimmed = Substring(text)
        while let c = trimmed.first, c == " " || c == "\t" { trimmed.removeFirst() }
        while let c = trimmed.last, c == " " || c == "\t" { trimmed.removeLast() }
        let t = String(trimmed)
        if let d = parse(t) { return d }
        let parts = t.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let components = DateComponents(year: y, month: m, day: d)
        guard components.isValidDate(in: calendar) else { return nil }
        return calendar.date(from: components)
    }
}

/// `Date` in ``JSONValueEncoder`` and ``JSONValueDecoder``: ``WireTime``'s form.
enum JSONDates {
    /// The wire form of `value` when it is a `Date`, else nil.
    /// Generic, and compared by type, so that encoding a value that is not a `Date` boxes and casts nothing.
    static func encode<T>(_ value: T) -> JSONValue? {
        guard T.self == Date.self else { return nil }
        return .string(WireTime.string(value as! Date))
    }

    static func decode(_ value: JSONValue, codingPath: [any CodingKey]) throws -> Date {
        guard case .string(let text) = value else {
            throw DecodingError.typeMismatch(Date.self, .init(codingPath: codingPath, debugDescription: "expected an ISO 8601 time string, found \(value.typeName)"))
        }
        guard let d = WireTime.parse(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "expected an ISO 8601 time such as 2026-11-21T18:00:00Z, got \"\(text)\""))
        }
        return d
    }

    static func isDate<T>(_ type: T.Type) -> Bool { type == Date.self }
}
