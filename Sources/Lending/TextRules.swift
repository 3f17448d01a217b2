/// Rules for the text of identifiers and names.
///
/// IDs and names end up in the database, in logs, in CSV exports and on terminals: a NUL cuts
/// them short in C APIs, and other control characters (newlines, escape sequences) forge log
/// lines or terminal output. They are refused wherever such a value enters.
public enum TextRules {
    /// The first control character in `text` (C0 including NUL, DEL, C1), or nil.
    public static func firstControlCharacter(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first(where: isControl)
    }

    /// True for C0 controls (including NUL), DEL and C1 controls.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `U+0000`-style name of a scalar.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Throws ``LendingError/invalidField(_:reason:)`` when `value` (the ID or name `field`)
    /// contains a control character.
    public static func requirePrintable(_ value: String, _ field: String) throws(LendingError) {
        if let scalar = firstControlCharacter(in: value) {
            throw .invalidField(field, reason: "contains the control character \(codePoint(scalar)); use printable text only")
        }
    }
}
