#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// Text forms of dates used in messages, logs and exports.
public enum LendingFormat {
    /// `2026-11-21T18:00:00Z` (UTC, whole seconds).
    public static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0)!))
    }

    /// `2026-11-21 18:00:00` in `timeZone`: the form spreadsheets parse as a date-time.
    public static func spreadsheet(_ date: Date, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ v: Int?) -> String { let v = v ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        let year = String(c.year ?? 0)
        return "\(year)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second))"
    }
}

/// Rental history as CSV (RFC 4180) and JSON, for offices that paste it into a spreadsheet.
public enum RentalExport {
    /// CSV options.
    public struct CSVOptions: Sendable, Hashable {
        /// Time zone of the date columns (an office wants its local time).
        public var timeZone: TimeZone
        /// Prefix a UTF-8 byte order mark so that Excel opens non-ASCII names correctly.
        public var byteOrderMark: Bool
        /// Prefix `'` to cells a spreadsheet could run as a formula (OWASP "CSV injection"): see
        /// ``RentalExport/looksLikeFormula(_:)``.
        public var neutralizeFormulas: Bool

        public init(timeZone: TimeZone = TimeZone(secondsFromGMT: 0)!, byteOrderMark: Bool = false,
                    neutralizeFormulas: Bool = true) {
            self.timeZone = timeZone
            self.byteOrderMark = byteOrderMark
            self.neutralizeFormulas = neutralizeFormulas
        }
    }

    /// Column names of the CSV export, in order.
    public static let csvHeader = [
        "rental_id", "device_id", "model", "os_version", "serial_number", "user_id", "user_name",
        "rented_at", "due_at", "returned_at", "returned_by", "location", "return_location", "lent_by", "return_note",
    ]

    /// Whether a spreadsheet could take `value` for a formula: its first character that is not
    /// blank or invisible — spaces of any kind (NBSP, ideographic), tab, CR, LF, the zero-width
    /// characters and the byte order mark, which spreadsheets skip or trim when they guess a
    /// cell's type — is `=`, `+`, `-` or `@`, or their full-width forms `＝＋－＠` (which an input
    /// method types and which some spreadsheets normalise), or the cell starts with tab or CR.
    public static func looksLikeFormula(_ value: String) -> Bool {
        guard let first = value.unicodeScalars.first else { return false }
        if first == "\t" || first == "\r" { return true }
        let lead = value.unicodeScalars.first { scalar in
            !(scalar.properties.isWhitespace || scalar.properties.isDefaultIgnorableCodePoint || scalar == "\u{FEFF}")
        }
        guard let lead else { return false }
        return "=+-@\u{FF1D}\u{FF0B}\u{FF0D}\u{FF20}\u{2212}".unicodeScalars.contains(lead)
    }

    /// One RFC 4180 field: quoted when it contains `"`, `,`, CR or LF; quotes doubled.
    public static func csvField(_ value: String, neutralizeFormulas: Bool = false) -> String {
        var v = value
        if neutralizeFormulas, looksLikeFormula(v) {
            v = "'" + v
        }
        if v.contains(where: { $0 == "\"" || $0 == "," || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) {
            return "\"" + v.replacing("\"", with: "\"\"") + "\""
        }
        return v
    }

    /// The rentals as CSV: a header line, then one record per rental, CRLF line ends.
    public static func csv(_ rentals: [Rental], options: CSVOptions = CSVOptions()) -> String {
        func date(_ d: Date?) -> String { d.map { LendingFormat.spreadsheet($0, timeZone: options.timeZone) } ?? "" }
        var out = options.byteOrderMark ? "\u{FEFF}" : ""
        out += csvHeader.joined(separator: ",") + "\r\n"
        for r in rentals {
            let fields = [
                String(r.id), r.deviceId, r.model, r.osVersion, r.serialNumber, r.userId, r.userName,
                date(r.rentedAt), date(r.dueAt), date(r.returnedAt), r.returnedBy ?? "", r.location ?? "",
                r.returnLocation ?? "", r.lentBy ?? "", r.returnNote ?? "",
            ]
            out += fields.map { csvField($0, neutralizeFormulas: options.neutralizeFormulas) }
                .joined(separator: ",") + "\r\n"
        }
        return out
    }

    /// The rentals as a JSON array (ISO 8601 UTC dates, sorted keys, absent values as null).
    public static func json(_ rentals: [Rental]) throws -> Data {
        struct Row: Encodable {
            let r: Rental
            enum K: String, CodingKey {
                case id, deviceId, model, osVersion, serialNumber, userId, userName
                case rentedAt, dueAt, returnedAt, returnedBy, location, returnLocation, lentBy, returnNote
            }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: K.self)
                try c.encode(r.id, forKey: .id)
                try c.encode(r.deviceId, forKey: .deviceId)
                try c.encode(r.model, forKey: .model)
                try c.encode(r.osVersion, forKey: .osVersion)
                try c.encode(r.serialNumber, forKey: .serialNumber)
                try c.encode(r.userId, forKey: .userId)
                try c.encode(r.userName, forKey: .userName)
                try c.encode(LendingFormat.iso8601(r.rentedAt), forKey: .rentedAt)
                try c.encode(r.dueAt.map(LendingFormat.iso8601), forKey: .dueAt)
                try c.encode(r.returnedAt.map(LendingFormat.iso8601), forKey: .returnedAt)
                try c.encode(r.returnedBy, forKey: .returnedBy)
                try c.encode(r.location, forKey: .location)
                try c.encode(r.returnLocation, forKey: .returnLocation)
                try c.encode(r.lentBy, forKey: .lentBy)
                try c.encode(r.returnNote, forKey: .returnNote)
            }
        }
        return Data(try JSONValueEncoder().encode(rentals.map(Row.init)).indentedBytes())
    }
}
