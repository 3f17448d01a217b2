import Logging

/// Log lines that a client cannot forge.
///
/// A value a client supplies (a sign-in name, a path, an actor, a method name) may carry a line
/// feed followed by text that looks like a log line of its own ("eve\n2026-01-01T00:00:00.000Z
/// NOTICE admin root signed in"). Every log handler of the project writes messages and metadata
/// through ``escaped(_:)``, so one event is always one line and control characters show as escapes.
public enum LogText {
    /// `text` with every control character (C0, DEL, C1, and the Unicode line and paragraph
    /// separators) written as an escape: `\n`, `\r`, `\t`, and `\u{…}` for the rest.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.append(scalar)
                continue
            }
            let escape: String = switch scalar {
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            default: "\\u{" + String(scalar.value, radix: 16) + "}"
            }
            out.append(contentsOf: escape.unicodeScalars)
        }
        return String(out)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }
}

/// Wraps a log handler so that every message and metadata value goes through ``LogText/escaped(_:)``.
public struct EscapingLogHandler: LogHandler {
    private var inner: any LogHandler

    public init(_ inner: any LogHandler) { self.inner = inner }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = "\(LogText.escaped(event.message.description))"
        event.metadata = event.metadata.map { $0.mapValues { .string(LogText.escaped($0.description)) } }
        inner.log(event: event)
    }
}
