import ArgumentParser
import Foundation
import Lending
import RoomBridgeCore
import Varlink
import VarlinkNIO

/// Plain-text tables, and the times in their cells and sentences.
enum Table {
    /// Columns padded to their widest cell, two spaces apart; the last column is not padded.
    /// Widths are terminal columns (`山田太郎` takes 8), so East Asian names line up.
    static func render(_ headers: [String], _ rows: [[String]]) -> String {
        var widths = headers.map(DisplayWidth.of)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], DisplayWidth.of(cell)) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in
                i == cells.count - 1 ? c : DisplayWidth.pad(c, to: widths[i])
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }

    /// A time as `YYYY-MM-DD HH:MM` in the kiosk's time zone, for table cells (the column header
    /// names the zone: ``KioskTime/header(_:)``); empty when there is none.
    static func time(_ date: Date?) -> String {
        date.map(KioskTime.current.minutes) ?? ""
    }

    /// A time in a sentence: `2026-11-24 18:40 (Asia/Tokyo)`; empty when there is none.
    static func when(_ date: Date?) -> String {
        date.map(KioskTime.current.labelled) ?? ""
    }
}

/// What a bare day (`YYYY-MM-DD`) in a date argument means, in the kiosk's time zone.
enum DayMeaning {
    /// Its first instant (`--since`, `--until`, `--registered`).
    case startOfKioskDay
    /// Its last second (`--due 2026-12-01`: due back that day).
    case endOfKioskDay
}

/// Checks a date argument (`YYYY-MM-DD` or ISO 8601) and returns what to send: a day as the
/// instant it starts or ends at in the kiosk's time zone (``KioskTime``), an ISO 8601 time as
/// the instant it names. A text that is no date (`tomorrow`, `2026-13-01`) is a usage error: one message,
/// exit status 64. Call it inside ``withClient(_:_:)`` for the value to send, so that the day is
/// the kiosk's; before connecting it only checks.
func dateArgument(_ text: String?, option: String, day: DayMeaning = .startOfKioskDay) throws -> Date? {
    guard let text else { return nil }
    let t = text.trimmingCharacters(in: .whitespaces)
    if let (y, m, d) = calendarDay(t) {
        let k = KioskTime.current
        guard let instant = day == .startOfKioskDay ? k.startOfDay(year: y, month: m, day: d) : k.endOfDay(year: y, month: m, day: d)
        else {
            throw ValidationError("\(option) '\(text)': there is no such day (month 01–12, day within the month)")
        }
        return instant
    }
    if let (y, m, d, hour, minute) = wallClock(t) {
        guard let instant = KioskTime.current.instant(year: y, month: m, day: d, hour: hour, minute: minute) else {
            throw ValidationError("\(option) '\(text)': there is no such time in \(KioskTime.current.name) (month 01–12, day within the month, 00:00–23:59)")
        }
        return instant
    }
    if let instant = WireTime.parseParameter(t) { return instant }
    throw ValidationError("\(option) '\(text)' is not a date: use YYYY-MM-DD, e.g. 2026-11-21, a time in the kiosk's time zone, e.g. \"2026-11-21 14:00\", or ISO 8601, e.g. 2026-11-21T18:00:00+09:00")
}

/// `YYYY-MM-DD HH:MM` (or with `T`), a wall-clock time with no zone, split into numbers; else nil.
private func wallClock(_ t: String) -> (Int, Int, Int, Int, Int)? {
    guard t.count == 16 else { return nil }
    let chars = Array(t)
    guard chars[10] == " " || chars[10] == "T", chars[13] == ":", let day = calendarDay(String(chars[0..<10])),
          let hour = Int(String(chars[11..<13])), let minute = Int(String(chars[14..<16])),
          chars[11..<13].allSatisfy(\.isNumber), chars[14..<16].allSatisfy(\.isNumber) else { return nil }
    return (day.0, day.1, day.2, hour, minute)
}

/// `YYYY-MM-DD` split into numbers (not yet checked against the calendar), else nil.
private func calendarDay(_ t: String) -> (Int, Int, Int)? {
    let parts = t.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
          parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
          let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
    return (y, m, d)
}
