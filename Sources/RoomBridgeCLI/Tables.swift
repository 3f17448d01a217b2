import ArgumentParser
import Foundation
import Lending
import RoomBridgeCore
import Varlink
import VarlinkNIO

/// Plain-text tables and field access for inventory and lending replies.
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

    /// A string field, or `default`.
    static func s(_ v: JSONValue?, _ key: String, _ def: String = "") -> String {
        guard let f = v?[key] else { return def }
        switch f {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .bool(let b): return b ? "yes" : "no"
        case .null: return def
        default: return f.serialized()
        }
    }

    /// A wire time (ISO 8601 UTC) as `YYYY-MM-DD HH:MM` in the kiosk's time zone, for table
    /// cells (the column header names the zone: ``KioskTime/header(_:)``); as sent if unreadable.
    static func time(_ v: JSONValue?, _ key: String) -> String {
        let t = s(v, key)
        guard let date = WireTime.parseParameter(t) else { return t }
        return KioskTime.current.minutes(date)
    }

    /// A wire time in a sentence: `2026-11-24 18:40 (Asia/Tokyo)`.
    static func when(_ v: JSONValue?, _ key: String) -> String {
        let t = s(v, key)
        guard let date = WireTime.parseParameter(t) else { return t }
        return KioskTime.current.labelled(date)
    }
}

/// Fetches every page of a paged list method (`limit`/`cursor` → `nextCursor`).
func allPages(_ client: VarlinkClient, _ method: String, _ parameters: [String: JSONValue], key: String,
              pageSize: Int = 500) async throws -> [JSONValue] {
    var items: [JSONValue] = []
    var p = parameters
    p["limit"] = .int(Int64(pageSize))
    while true {
        let reply = try await call(client, method, p)
        items += reply[key]?.arrayValue ?? []
        guard let next = reply["nextCursor"]?.stringValue else { return items }
        p["cursor"] = .string(next)
    }
}

/// Prints `items` one JSON object per line, or as a table.
func printList(_ items: [JSONValue], json: Bool, empty: String, headers: [String], row: (JSONValue) -> [String]) {
    if json {
        for item in items { emit(item.serialized()) }
    } else if items.isEmpty {
        emit(empty)
    } else {
        emit(Table.render(headers, items.map(row)))
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
/// UTC instant it starts or ends at in the kiosk's time zone (``KioskTime``), an ISO 8601 time
/// as given. A text that is no date (`tomorrow`, `2026-13-01`) is a usage error: one message,
/// exit status 64. Call it inside ``withClient(_:_:)`` for the value to send, so that the day is
/// the kiosk's; before connecting it only checks.
func dateArgument(_ text: String?, option: String, day: DayMeaning = .startOfKioskDay) throws -> JSONValue? {
    guard let text else { return nil }
    let t = text.trimmingCharacters(in: .whitespaces)
    if let (y, m, d) = calendarDay(t) {
        let k = KioskTime.current
        guard let instant = day == .startOfKioskDay ? k.startOfDay(year: y, month: m, day: d) : k.endOfDay(year: y, month: m, day: d)
        else {
            throw ValidationError("\(option) '\(text)': there is no such day (month 01–12, day within the month)")
        }
        return .string(instant.formatted(.iso8601))
    }
    if WireTime.parseParameter(t) != nil { return .string(t) }
    throw ValidationError("\(option) '\(text)' is not a date: use YYYY-MM-DD, e.g. 2026-11-21, or ISO 8601, e.g. 2026-11-21T18:00:00+09:00")
}

/// `YYYY-MM-DD` split into numbers (not yet checked against the calendar), else nil.
private func calendarDay(_ t: String) -> (Int, Int, Int)? {
    let parts = t.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
          parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
          let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
    return (y, m, d)
}

/// Sets `key` in `dict` when `value` is present.
func put(_ dict: inout [String: JSONValue], _ key: String, _ value: String?) {
    if let value { dict[key] = .string(value) }
}
