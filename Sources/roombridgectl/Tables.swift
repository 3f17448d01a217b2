import Foundation
import Varlink
import VarlinkNIO

/// Plain-text tables and field access for inventory and lending replies.
enum Table {
    /// Columns padded to their widest cell, two spaces apart; the last column is not padded.
    static func render(_ headers: [String], _ rows: [[String]]) -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in
                i == cells.count - 1 ? c : c + String(repeating: " ", count: widths[i] - c.count)
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

    /// A wire time (ISO 8601 UTC) shortened to `YYYY-MM-DD HH:MM` for tables.
    static func time(_ v: JSONValue?, _ key: String) -> String {
        let t = s(v, key)
        guard t.count >= 16 else { return t }
        return t.prefix(10) + " " + t.dropFirst(11).prefix(5)
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

/// Checks a date argument (`YYYY-MM-DD` or ISO 8601) and passes it on as text.
func dateArgument(_ text: String?, option: String) throws -> JSONValue? {
    guard let text else { return nil }
    let t = text.trimmingCharacters(in: .whitespaces)
    let isoDay = t.count == 10 && t.split(separator: "-").count == 3 && t.allSatisfy { $0.isNumber || $0 == "-" }
    let iso = (try? Date.ISO8601FormatStyle().parse(t)) ?? (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(t))
    guard isoDay || iso != nil else {
        throw CtlError(exit: .failure, message: "\(option) '\(text)': expected a date such as 2026-11-21 or 2026-11-21T18:00:00Z")
    }
    return .string(t)
}

/// Sets `key` in `dict` when `value` is present.
func put(_ dict: inout [String: JSONValue], _ key: String, _ value: String?) {
    if let value { dict[key] = .string(value) }
}
