import Foundation
import Lending
import struct RoomBridgeCore.TagUID
import Varlink

/// Typed access to a call's parameters (the service has already checked them against the IDL).
///
/// Strings are checked at this boundary: no string may contain NUL, and IDs and names
/// (``isIdentifierOrName(_:)``) no control character at all (``TextRules``); free text such as a
/// note may contain line breaks and tabs.
struct Parameters {
    let values: [String: JSONValue]
    /// The interface whose `InvalidField` error reports a refused string.
    let interface: String

    init(_ call: VarlinkCall) { values = call.parameters; interface = call.interface }
    init(_ values: [String: JSONValue], interface: String) { self.values = values; self.interface = interface }

    /// True for parameters that name or identify something: `id`, `name`, `…Id`, `identifier`,
    /// `uid`, `returnedBy`, `actor`.
    static func isIdentifierOrName(_ name: String) -> Bool {
        ["id", "name", "identifier", "uid", "returnedBy", "label", "actor"].contains(name) || name.hasSuffix("Id")
    }

    /// A required string.
    func string(_ name: String) throws(VarlinkError) -> String {
        guard let s = values[name]?.stringValue else { throw VarlinkError.invalidParameter(name) }
        return try checked(s, name)
    }

    /// A required tag UID (`uid`): hex, in either case, bytes optionally separated by `:`, `-` or spaces. This is
    /// where a client's UID becomes a ``TagUID``; nothing after it canonicalises again.
    func uid(_ name: String = "uid") throws -> TagUID {
        let text = try string(name)
        guard let uid = TagUID(text) else {
            throw LendingError.invalidField(name, reason: "expected hex digits such as 04A1B2C3D4E5F6, got '\(text)'")
        }
        return uid
    }

    /// An optional string (absent or null → nil).
    func optionalString(_ name: String) throws(VarlinkError) -> String? {
        guard let v = values[name], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw VarlinkError.invalidParameter(name) }
        return try checked(s, name)
    }

    private func checked(_ s: String, _ name: String) throws(VarlinkError) -> String {
        let refused = Self.isIdentifierOrName(name)
            ? TextRules.firstControlCharacter(in: s)
            : s.unicodeScalars.first { $0.value == 0 }
        if let scalar = refused {
            throw LendingWireErrors.varlink(
                .invalidField(name, reason: "contains the control character \(TextRules.codePoint(scalar)); use printable text only"),
                interface: interface)
        }
        return s
    }

    func optionalBool(_ name: String) throws(VarlinkError) -> Bool? {
        guard let v = values[name], !v.isNull else { return nil }
        guard let b = v.boolValue else { throw VarlinkError.invalidParameter(name) }
        return b
    }

    func optionalInt(_ name: String) throws(VarlinkError) -> Int? {
        guard let v = values[name], !v.isNull else { return nil }
        guard let i = v.intValue else { throw VarlinkError.invalidParameter(name) }
        return Int(clamping: i)
    }

    /// A nested object (absent → empty).
    func object(_ name: String) throws(VarlinkError) -> Parameters {
        guard let v = values[name], !v.isNull else { return Parameters([:], interface: interface) }
        guard let o = v.objectValue else { throw VarlinkError.invalidParameter(name) }
        return Parameters(o, interface: interface)
    }

    /// An optional time: ISO 8601 (with or without fractional seconds or offset) or a plain
    /// `YYYY-MM-DD` date (midnight UTC).
    func optionalDate(_ name: String, interface: String) throws(VarlinkError) -> Date? {
        guard let text = try optionalString(name) else { return nil }
        guard let date = WireTime.parseParameter(text) else {
            throw LendingWireErrors.varlink(
                .invalidField(name, reason: "expected a date such as 2026-11-21 or 2026-11-21T18:00:00Z, got '\(text)'"),
                interface: interface)
        }
        return date
    }

    /// `limit` and `cursor` as a page request.
    func page() throws(VarlinkError) -> PageRequest {
        PageRequest(limit: try optionalLimit() ?? 100, cursor: try optionalString("cursor"))
    }

    /// The documented page sizes.
    static let limitRange = 1...1000

    /// `limit`, if given: within ``limitRange``, else `InvalidParameter`.
    func optionalLimit() throws(VarlinkError) -> Int? {
        guard let limit = try optionalInt("limit") else { return nil }
        guard Self.limitRange.contains(limit) else { throw VarlinkError.invalidParameter("limit") }
        return limit
    }
}
