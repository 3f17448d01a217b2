/// A 24-hour local time of the controller, minute resolution.
public struct CurtainTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Hour, 0–23.
    public let hour: Int
    /// Minute, 0–59.
    public let minute: Int

    /// Creates a time, refusing hours above 23 and minutes above 59.
    public init(hour: Int, minute: Int) throws(CurtainCommandError) {
        guard (0...23).contains(hour) else { throw .hourOutOfRange(hour) }
        guard (0...59).contains(minute) else { throw .minuteOutOfRange(minute) }
        self.hour = hour
        self.minute = minute
    }

    init(unchecked hour: Int, _ minute: Int) {
        self.hour = hour
        self.minute = minute
    }

    /// Midnight, 00:00.
    public static let midnight = CurtainTime(unchecked: 0, 0)

    /// Parses "HH:MM" (also "H:MM"); refuses anything else.
    public init(parsing text: String) throws(CurtainCommandError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2,
              (1...2).contains(parts[0].count), parts[1].count == 2,
              parts[0].allSatisfy(\.isASCIIDigit), parts[1].allSatisfy(\.isASCIIDigit),
              let h = Int(parts[0]), let m = Int(parts[1])
        else { throw .badTimeFormat(text) }
        try self.init(hour: h, minute: m)
    }

    /// Minutes since midnight.
    public var minutesSinceMidnight: Int { hour * 60 + minute }

    /// "HH:MM", zero padded.
    public var description: String {
        (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
    }

    public static func < (lhs: CurtainTime, rhs: CurtainTime) -> Bool {
        lhs.minutesSinceMidnight < rhs.minutesSinceMidnight
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// In JSON and on the Varlink wire: `"HH:MM"`.
extension CurtainTime: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
