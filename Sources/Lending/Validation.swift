#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A rule for what an ID, a name or a status may be; its name is part of the error, so the
/// person refused knows which rule they met.
public enum ValidationRule: String, Sendable, Hashable, CaseIterable {
    /// Names (user names, device models, group names) must say something.
    case blankName
    /// IDs may not contain spaces or control characters (they are typed on command lines and
    /// printed in tables).
    case idCharacters
    /// An ID may not differ only in case from an existing one (`d-0001` next to `D-0001`).
    case idCaseCollision
    /// At most ``Validation/maximumNameLength`` characters.
    case nameTooLong
    /// At most ``Validation/maximumIDLength`` characters.
    case idTooLong
    /// The status must be one of ``DeviceStatus``'s values.
    case unknownStatus
    /// A return note is at most ``Validation/maximumNoteLength`` characters.
    case noteTooLong
}

/// The validation rules for the inventory's IDs, names and statuses, as pure functions; the
/// store applies them to every change, whether it comes from roombridgectl or another Varlink
/// client, and roombridgectl applies the status rule before it calls.
public enum Validation {
    public static let maximumIDLength = 64
    public static let maximumNameLength = 200

    /// An ID of the kind `field` names, for a sentence that shows one ("user ID": U-0001).
    public static func example(for field: String) -> String {
        if field.hasPrefix("user") { return "U-0001" }
        if field.hasPrefix("group") { return "android-phone" }
        return "D-0001"
    }

    /// A new ID (of a device, user or group): not empty, no whitespace or control characters,
    /// at most ``maximumIDLength`` characters.
    public static func id(_ value: String, field: String) throws(LendingError) {
        if value.isEmpty {
            throw .ruleViolated(.idCharacters, field: field, reason: "must not be empty")
        }
        if let bad = value.unicodeScalars.first(where: { $0.properties.isWhitespace || TextRules.isControl($0) }) {
            let what = bad.properties.isWhitespace ? "white space" : "a control character"
            throw .ruleViolated(.idCharacters, field: field,
                                reason: "'\(printable(value))' contains \(what) (\(TextRules.codePoint(bad))); use letters, digits and - _ . only, e.g. \(example(for: field))")
        }
        if value.count > maximumIDLength {
            throw .ruleViolated(.idTooLong, field: field,
                                reason: "is \(value.count) characters long; at most \(maximumIDLength) are allowed")
        }
    }

    /// A name or model: not empty or only white space, no control characters, at most
    /// ``maximumNameLength`` characters.
    public static func name(_ value: String, field: String) throws(LendingError) {
        try TextRules.requirePrintable(value, field)
        if value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw .ruleViolated(.blankName, field: field, reason: "must not be empty or only spaces")
        }
        if value.count > maximumNameLength {
            throw .ruleViolated(.nameTooLong, field: field,
                                reason: "is \(value.count) characters long; at most \(maximumNameLength) are allowed")
        }
    }

    /// The longest return note.
    public static let maximumNoteLength = 1000

    /// A return note: lines of printable text (line breaks allowed), at most
    /// ``maximumNoteLength`` characters.
    public static func returnNote(_ note: String) throws(LendingError) {
        try TextRules.requirePrintable(note.replacing("\r\n", with: " ").replacing("\n", with: " "), "note")
        if note.count > maximumNoteLength {
            throw .ruleViolated(.noteTooLong, field: "note",
                                reason: "is \(note.count) characters long; at most \(maximumNoteLength) are allowed")
        }
    }

    /// A status given as text.
    public static func status(_ text: String) throws(LendingError) -> DeviceStatus {
        guard let status = DeviceStatus(rawValue: text) else {
            let allowed = DeviceStatus.allCases.map(\.rawValue).joined(separator: ", ")
            throw .ruleViolated(.unknownStatus, field: "status",
                                reason: "'\(printable(text))' is not a status; use one of: \(allowed)")
        }
        return status
    }

    /// A new ID against the existing one that equals it ignoring case, if any.
    public static func caseCollision(_ id: String, existing: String?, field: String) throws(LendingError) {
        guard let existing, existing != id else { return }
        throw .ruleViolated(.idCaseCollision, field: field,
                            reason: "'\(id)' differs only in case from the existing \(existing); use \(existing), or an ID that differs in more than case")
    }

    /// A device's fields: a new device's ID too when `isNew`.
    public static func device(_ device: Device, isNew: Bool) throws(LendingError) {
        if isNew { try id(device.id, field: "device ID") }
        try name(device.model, field: "model")
        // The note is free text (lines, any length); the short fields are names.
        for (value, field) in [(device.serialNumber, "serial number"), (device.osVersion, "OS version"),
                               (device.connectorType, "connector type")] {
            try TextRules.requirePrintable(value, field)
            if value.count > maximumNameLength {
                throw .ruleViolated(.nameTooLong, field: field,
                                    reason: "is \(value.count) characters long; at most \(maximumNameLength) are allowed")
            }
        }
    }

    /// A user's fields: a new user's ID too when `isNew`.
    public static func user(_ user: User, isNew: Bool) throws(LendingError) {
        if isNew { try id(user.id, field: "user ID") }
        try name(user.name, field: "name")
    }

    /// A group's fields: a new group's ID too when `isNew`.
    public static func group(_ group: DeviceGroup, isNew: Bool) throws(LendingError) {
        if isNew { try id(group.id, field: "group ID") }
        try name(group.name, field: "group name")
    }

    /// The value as it can be shown: control characters replaced by `?`, cut at 80 characters.
    static func printable(_ value: String) -> String {
        let shown = String(String.UnicodeScalarView(value.unicodeScalars.map { TextRules.isControl($0) ? "?" : $0 }))
        return shown.count > 80 ? String(shown.prefix(80)) + "…" : shown
    }
}
