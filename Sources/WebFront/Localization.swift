import Foundation
import JSON

/// The languages of the web front end; each has one message catalogue (Messages/*.swift).
public enum Language: String, Sendable, CaseIterable {
    case en, ja

    var catalogue: [String: String] {
        switch self {
        case .en: return MessagesEN.catalogue
        case .ja: return MessagesJA.catalogue
        }
    }

    var locale: Locale { Locale(identifier: self == .ja ? "ja_JP" : "en_GB") }

    /// The best language for an `Accept-Language` header (RFC 9110 §12.5.4): the highest
    /// q-value among the languages we have, first listed on a tie; English if none matches.
    public static func preferred(acceptLanguage header: String?) -> Language {
        guard let header else { return .en }
        var best: (Language, Double)?
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first?.lowercased(), !tag.isEmpty else { continue }
            var q = 1.0
            for p in parts.dropFirst() where p.hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            guard q > 0, let language = Language(rawValue: primary) else { continue }
            if best == nil || q > best!.1 { best = (language, q) }
        }
        return best?.0 ?? .en
    }
}

/// Texts, dates and numbers for one request: its language and the kiosk's time zone.
public struct Localizer: Sendable {
    public let language: Language
    public let timeZone: TimeZone

    public init(language: Language, timeZone: TimeZone) {
        self.language = language
        self.timeZone = timeZone
    }

    /// The catalogue text for `key` with `{name}` placeholders filled in. A key missing from
    /// the catalogue is a programming error caught by the catalogue test; shown as the key.
    public func t(_ key: String, _ arguments: [String: String] = [:]) -> String {
        var text = language.catalogue[key] ?? key
        for (name, value) in arguments { text = text.replacingOccurrences(of: "{\(name)}", with: value) }
        return text
    }

    /// Whether the catalogue has `key`.
    public func has(_ key: String) -> Bool { language.catalogue[key] != nil }

    /// A time as date and time in the kiosk's time zone, e.g. "1 Dec 2026, 14:05".
    public func dateTime(_ date: Date) -> String {
        format(date, template: "yMMMdHHmm")
    }

    /// A wire time (ISO 8601) as ``dateTime(_:)-(Date)`` shows it; a text that is no time as it is.
    public func dateTime(_ wire: String?) -> String {
        guard let wire, let date = WireTime.parse(wire) else { return wire ?? "" }
        return dateTime(date)
    }

    /// A time of day in the kiosk's time zone, e.g. "14:05".
    public func time(_ date: Date) -> String {
        format(date, template: "HHmm")
    }

    /// A time as a day with its weekday, e.g. "Tue 1 Dec" / "12月1日(火)".
    public func day(_ date: Date) -> String {
        format(date, template: "EEEdMMM")
    }

    /// A time as people at the kiosk say it, seen from `now`: "today 17:00", "tomorrow 14:00", else
    /// ``dateTime(_:)-(Date)``.
    public func moment(_ date: Date, from now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let days = calendar.dateComponents([.day], from: calendar.startOfDay(for: now), to: calendar.startOfDay(for: date)).day
        let time = self.time(date)
        switch days {
        case 0: return t("time.today", ["time": time])
        case 1: return t("time.tomorrow", ["time": time])
        default: return dateTime(date)
        }
    }

    public func number(_ value: Int) -> String {
        let f = NumberFormatter()
        f.locale = language.locale
        f.numberStyle = .decimal
        return f.string(from: NSNumber(value: value)) ?? String(value)
    }

    private func format(_ date: Date, template: String) -> String {
        let f = DateFormatter()
        f.locale = language.locale
        f.timeZone = timeZone
        f.setLocalizedDateFormatFromTemplate(template)
        return f.string(from: date)
    }
}
