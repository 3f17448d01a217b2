import Foundation

/// A configuration value.
public enum ConfigValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case strings([String])

    /// The kind of value this is.
    public var kind: AnyConfigKey.Kind {
        switch self {
        case .string: .string
        case .int: .int
        case .double: .double
        case .bool: .bool
        case .strings: .strings
        }
    }

    /// The value as TOML source text.
    public var description: String {
        switch self {
        case .string(let s): return tomlQuote(s)
        case .int(let i): return String(i)
        case .double(let d): return d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : String(d)
        case .bool(let b): return b ? "true" : "false"
        case .strings(let a): return "[" + a.map(tomlQuote).joined(separator: ", ") + "]"
        }
    }
}

private func tomlQuote(_ s: String) -> String {
    var out = "\""
    for ch in s.unicodeScalars {
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if ch.value < 0x20 || ch.value == 0x7F {
                out += String(format: "\\u%04X", ch.value)
            } else {
                out.unicodeScalars.append(ch)
            }
        }
    }
    return out + "\""
}
