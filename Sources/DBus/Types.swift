internal import CDBus
import Glibc
import Synchronization


/// A validated D-Bus object path such as `/org/bluez/hci0`.
public struct DBusObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Validates `rawValue` (`/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`).
    public init(_ rawValue: String) throws(DBusError) {
        guard DBusObjectPath.isValid(rawValue) else {
            throw DBusError.invalidArgs("'\(rawValue)' is not a valid D-Bus object path (expected e.g. /org/example/Object)")
        }
        self.rawValue = rawValue
    }

    init(unchecked: String) { self.rawValue = unchecked }

    /// A literal path; traps if invalid (a programming error).
    public init(stringLiteral value: String) {
        precondition(DBusObjectPath.isValid(value), "invalid D-Bus object path literal '\(value)'")
        self.rawValue = value
    }

    public static let root = DBusObjectPath(unchecked: "/")

    public var description: String { rawValue }
    public static func < (a: DBusObjectPath, b: DBusObjectPath) -> Bool { a.rawValue < b.rawValue }

    /// `self` appended with one element, e.g. `/org/bluez` + `hci0`.
    public func appending(_ element: String) throws(DBusError) -> DBusObjectPath {
        try DBusObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// The parent path, or nil for `/`.
    public var parent: DBusObjectPath? {
        guard rawValue != "/" else { return nil }
        let idx = rawValue.lastIndex(of: "/")!
        return idx == rawValue.startIndex ? .root : DBusObjectPath(unchecked: String(rawValue[..<idx]))
    }

    /// True if `self` lies strictly below `ancestor`.
    public func isDescendant(of ancestor: DBusObjectPath) -> Bool {
        if ancestor.rawValue == "/" { return rawValue != "/" }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    static func isValid(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.first == UInt8(ascii: "/") else { return false }
        if u.count == 1 { return true }
        guard u.last != UInt8(ascii: "/") else { return false }
        var prevSlash = false
        for c in u {
            if c == UInt8(ascii: "/") {
                if prevSlash { return false }
                prevSlash = true
            } else {
                prevSlash = false
                let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
                if !ok { return false }
            }
        }
        return true
    }
}

/// A validated D-Bus type signature such as `a{sv}` (zero or more complete types).
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Validates `rawValue` with libdbus's own signature validator.
    public init(_ rawValue: String) throws(DBusError) {
        guard DBusSignature.isValid(rawValue) else {
            throw DBusError(name: DBusError.invalidSignatureName,
                            message: "'\(rawValue)' is not a valid D-Bus signature")
        }
        self.rawValue = rawValue
    }

    init(unchecked: String) { self.rawValue = unchecked }

    /// A literal signature; traps if invalid (a programming error).
    public init(stringLiteral value: String) {
        precondition(DBusSignature.isValid(value), "invalid D-Bus signature literal '\(value)'")
        self.rawValue = value
    }

    public static let empty = DBusSignature(unchecked: "")

    public var description: String { rawValue }

    /// The complete types this signature consists of (`"sa{sv}"` → `["s", "a{sv}"]`).
    public var completeTypes: [DBusSignature] {
        let u = Array(rawValue.utf8)
        var result: [DBusSignature] = []
        var i = 0
        while i < u.count {
            let len = DBusSignature.completeTypeLength(u, i)
            result.append(DBusSignature(unchecked: String(decoding: u[i..<(i + len)], as: UTF8.self)))
            i += len
        }
        return result
    }

    /// True if this is exactly one complete type.
    public var isSingleCompleteType: Bool {
        let u = Array(rawValue.utf8)
        return !u.isEmpty && DBusSignature.completeTypeLength(u, 0) == u.count
    }

    /// For an array type `aX`: the element type `X`.
    var arrayElement: DBusSignature? {
        guard rawValue.utf8.first == UInt8(ascii: "a") else { return nil }
        return DBusSignature(unchecked: String(rawValue.dropFirst()))
    }

    /// For a dict type `a{KV}`: the key and value types.
    var dictKeyValue: (DBusSignature, DBusSignature)? {
        guard rawValue.hasPrefix("a{"), rawValue.hasSuffix("}") else { return nil }
        let inner = DBusSignature(unchecked: String(rawValue.dropFirst(2).dropLast())).completeTypes
        guard inner.count == 2 else { return nil }
        return (inner[0], inner[1])
    }

    static func completeTypeLength(_ u: [UInt8], _ start: Int) -> Int {
        var i = start
        // Any number of array prefixes.
        while i < u.count, u[i] == UInt8(ascii: "a") { i += 1 }
        guard i < u.count else { return i - start }
        let c = u[i]
        if c == UInt8(ascii: "(") || c == UInt8(ascii: "{") {
            var depth = 0
            while i < u.count {
                if u[i] == UInt8(ascii: "(") || u[i] == UInt8(ascii: "{") { depth += 1 }
                if u[i] == UInt8(ascii: ")") || u[i] == UInt8(ascii: "}") {
                    depth -= 1
                    if depth == 0 { return i + 1 - start }
                }
                i += 1
            }
            return i - start
        }
        return i + 1 - start
    }

    static func isValid(_ s: String) -> Bool {
        guard !s.utf8.contains(0) else { return false }
        return s.withCString { dbus_signature_validate($0, nil) != 0 }
    }

    static func isBasic(_ s: DBusSignature) -> Bool {
        guard s.rawValue.utf8.count == 1 else { return false }
        return "ybnqiuxtdsogh".utf8.contains(s.rawValue.utf8.first!)
    }
}

/// A Unix file descriptor carried in a D-Bus message (type `h`).
///
/// The descriptor is owned by this object and closed when it is deallocated; use `duplicate()`
/// to obtain a descriptor you own, or `take()` to take over this one.
public final class DBusUnixFD: Sendable, Hashable, CustomStringConvertible {
    private let fd: Mutex<Int32>

    /// Takes ownership of `fd` (it will be closed by this object).
    public init(taking fd: Int32) { self.fd = Mutex(fd) }

    /// Duplicates `fd` (close-on-exec); the caller keeps ownership of `fd`.
    public init(duplicating fd: Int32) throws(DBusError) {
        let d = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard d >= 0 else {
            throw DBusError.invalidArgs("cannot duplicate file descriptor \(fd): errno \(errno)")
        }
        self.fd = Mutex(d)
    }

    deinit {
        let f = fd.withLock { $0 }
        if f >= 0 { close(f) }
    }

    /// The descriptor, still owned by this object (-1 after `take()`).
    public var rawValue: Int32 { fd.withLock { $0 } }

    /// Gives up ownership: returns the descriptor (the caller must close it), leaving -1 here.
    public func take() -> Int32 { fd.withLock { f in let r = f; f = -1; return r } }

    /// A new descriptor (close-on-exec) that the caller owns.
    public func duplicate() throws(DBusError) -> Int32 {
        let f = rawValue
        let d = fcntl(f, F_DUPFD_CLOEXEC, 3)
        guard d >= 0 else { throw DBusError.failed("cannot duplicate file descriptor \(f): errno \(errno)") }
        return d
    }

    public static func == (a: DBusUnixFD, b: DBusUnixFD) -> Bool { a === b }
    public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }
    public var description: String { "fd(\(rawValue))" }
}
