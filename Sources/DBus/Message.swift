internal import CDBus

/// Type codes (libdbus's DBUS_TYPE_* macros are not imported into Swift).
enum TypeCode {
    static let invalid: Int32 = 0
    static let byte = Int32(UInt8(ascii: "y"))
    static let boolean = Int32(UInt8(ascii: "b"))
    static let int16 = Int32(UInt8(ascii: "n"))
    static let uint16 = Int32(UInt8(ascii: "q"))
    static let int32 = Int32(UInt8(ascii: "i"))
    static let uint32 = Int32(UInt8(ascii: "u"))
    static let int64 = Int32(UInt8(ascii: "x"))
    static let uint64 = Int32(UInt8(ascii: "t"))
    static let double = Int32(UInt8(ascii: "d"))
    static let string = Int32(UInt8(ascii: "s"))
    static let objectPath = Int32(UInt8(ascii: "o"))
    static let signature = Int32(UInt8(ascii: "g"))
    static let unixFD = Int32(UInt8(ascii: "h"))
    static let array = Int32(UInt8(ascii: "a"))
    static let variant = Int32(UInt8(ascii: "v"))
    static let structure = Int32(UInt8(ascii: "r"))
    static let dictEntry = Int32(UInt8(ascii: "e"))
}

/// A received or sent D-Bus message: header fields and the decoded body.
public struct DBusMessage: Sendable {
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }
    public var kind: Kind
    public var serial: UInt32
    public var replySerial: UInt32?
    public var path: DBusObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    /// The unique name of the sender (set by the bus).
    public var sender: String?
    public var destination: String?
    public var signature: DBusSignature
    public var body: [DBusValue]
    public var noReplyExpected: Bool

    /// The first body argument as a string, if it is one (used by `argN` match rules).
    func argumentString(_ n: Int) -> String? {
        guard n < body.count else { return nil }
        switch body[n] {
        case .string(let s): return s
        case .objectPath(let p): return p.rawValue
        default: return nil
        }
    }
}

/// Owns one reference to a libdbus message. libdbus message refcounting is atomic, so this may
/// be released on any thread; the message itself is only read after it was received.
final class RawMessage: @unchecked Sendable {
    let ptr: OpaquePointer
    init(owning ptr: OpaquePointer) { self.ptr = ptr }
    init(retaining ptr: OpaquePointer) {
        dbus_message_ref(ptr)
        self.ptr = ptr
    }
    deinit { dbus_message_unref(ptr) }

    static func methodCall(destination: String?, path: DBusObjectPath, interface: String?, member: String) throws(DBusError) -> RawMessage {
        if let destination { try Names.validateBusName(destination) }
        if let interface { try Names.validateInterface(interface) }
        try Names.validateMember(member)
        let m = path.rawValue.withCString { p in
            member.withCString { mem in
                withOptionalCString(destination) { d in
                    withOptionalCString(interface) { i in dbus_message_new_method_call(d, p, i, mem) }
                }
            }
        }
        guard let m else { throw DBusError.failed("out of memory creating a D-Bus message") }
        return RawMessage(owning: m)
    }

    static func signal(path: DBusObjectPath, interface: String, member: String) throws(DBusError) -> RawMessage {
        try Names.validateInterface(interface)
        try Names.validateMember(member)
        let m = path.rawValue.withCString { p in
            interface.withCString { i in member.withCString { mem in dbus_message_new_signal(p, i, mem) } }
        }
        guard let m else { throw DBusError.failed("out of memory creating a D-Bus message") }
        return RawMessage(owning: m)
    }

    func methodReturn() throws(DBusError) -> RawMessage {
        guard let m = dbus_message_new_method_return(ptr) else { throw DBusError.failed("out of memory") }
        return RawMessage(owning: m)
    }

    func errorReply(_ error: DBusError) -> RawMessage? {
        var name = error.name
        if (try? Names.validateErrorName(name)) == nil { name = DBusError.failedName }
        let text = error.message.replacingNULs()
        let m = name.withCString { n in text.withCString { t in dbus_message_new_error(ptr, n, t) } }
        return m.map { RawMessage(owning: $0) }
    }

    func setDestination(_ destination: String) throws(DBusError) {
        try Names.validateBusName(destination)
        _ = destination.withCString { dbus_message_set_destination(ptr, $0) }
    }

    func setNoReply(_ flag: Bool) { dbus_message_set_no_reply(ptr, flag ? 1 : 0) }

    var type: Int32 { dbus_message_get_type(ptr) }
    var noReplyExpected: Bool { dbus_message_get_no_reply(ptr) != 0 }
    var sender: String? { dbus_message_get_sender(ptr).map { String(cString: $0) } }
    var path: String? { dbus_message_get_path(ptr).map { String(cString: $0) } }
    var interface: String? { dbus_message_get_interface(ptr).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(ptr).map { String(cString: $0) } }
    var errorName: String? { dbus_message_get_error_name(ptr).map { String(cString: $0) } }
    var signatureString: String { dbus_message_get_signature(ptr).map { String(cString: $0) } ?? "" }
    var containsUnixFDs: Bool { signatureString.utf8.contains(UInt8(ascii: "h")) }

    /// Appends `values` to the body (after validating them; libdbus aborts on invalid input).
    func append(_ values: [DBusValue]) throws(DBusError) {
        var total = 0
        for v in values {
            try v.validateSignature()
            try v.validate()
            total += v.signatureString.utf8.count
        }
        guard total <= 255 else { throw DBusError.invalidArgs("message body signature longer than 255 characters") }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(ptr, &iter)
        for v in values {
            guard Marshal.append(v, &iter) else { throw DBusError.failed("out of memory marshalling a D-Bus message") }
        }
    }

    /// Decodes the whole body.
    func decodeBody() throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(ptr, &iter) != 0 else { return [] }
        var out: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
            out.append(try Marshal.read(&iter))
            dbus_message_iter_next(&iter)
        }
        return out
    }

    /// A Sendable snapshot (header + decoded body).
    func snapshot() throws(DBusError) -> DBusMessage {
        let kind: DBusMessage.Kind
        switch type {
        case 1: kind = .methodCall
        case 2: kind = .methodReturn
        case 3: kind = .error
        default: kind = .signal
        }
        let rs = dbus_message_get_reply_serial(ptr)
        return DBusMessage(
            kind: kind, serial: dbus_message_get_serial(ptr), replySerial: rs == 0 ? nil : rs,
            path: path.map { DBusObjectPath(unchecked: $0) }, interface: interface, member: member,
            errorName: errorName, sender: sender,
            destination: dbus_message_get_destination(ptr).map { String(cString: $0) },
            signature: DBusSignature(unchecked: signatureString), body: try decodeBody(),
            noReplyExpected: dbus_message_get_no_reply(ptr) != 0)
    }
}

func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    if let s { return s.withCString { body($0) } }
    return body(nil)
}

extension String {
    func replacingNULs() -> String {
        utf8.contains(0) ? String(decoding: utf8.map { $0 == 0 ? UInt8(ascii: "?") : $0 }, as: UTF8.self) : self
    }
}

/// Name validation through libdbus (invalid names passed to libdbus abort the process).
package enum Names {
    private static func check(_ s: String, _ what: String,
                              _ fn: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t) throws(DBusError) {
        let ok = !s.utf8.contains(0) && s.withCString { fn($0, nil) != 0 }
        guard ok else { throw DBusError.invalidArgs("'\(s)' is not a valid D-Bus \(what)") }
    }
    static func validateBusName(_ s: String) throws(DBusError) { try check(s, "bus name", dbus_validate_bus_name) }
    package static func validateInterface(_ s: String) throws(DBusError) { try check(s, "interface name", dbus_validate_interface) }
    package static func validateMember(_ s: String) throws(DBusError) { try check(s, "member name", dbus_validate_member) }
    static func validateErrorName(_ s: String) throws(DBusError) { try check(s, "error name", dbus_validate_error_name) }
}

/// DBusMessageIter reading and writing.
enum Marshal {
    static func append(_ value: DBusValue, _ it: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
        func basic<T: BitwiseCopyable>(_ code: Int32, _ v: T) -> Bool {
            withUnsafePointer(to: v) { dbus_message_iter_append_basic(it, code, UnsafeRawPointer($0)) != 0 }
        }
        func text(_ code: Int32, _ s: String) -> Bool {
            s.withCString { p in
                var ptr: UnsafePointer<CChar>? = p
                return dbus_message_iter_append_basic(it, code, &ptr) != 0
            }
        }
        func container(_ code: Int32, _ sig: String?, _ body: (UnsafeMutablePointer<DBusMessageIter>) -> Bool) -> Bool {
            var sub = DBusMessageIter()
            let opened = withOptionalCString(sig) { dbus_message_iter_open_container(it, code, $0, &sub) != 0 }
            guard opened else { return false }
            guard body(&sub) else {
                dbus_message_iter_abandon_container(it, &sub)
                return false
            }
            return dbus_message_iter_close_container(it, &sub) != 0
        }
        switch value {
        case .byte(let v): return basic(TypeCode.byte, v)
        case .boolean(let v): return basic(TypeCode.boolean, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): return basic(TypeCode.int16, v)
        case .uint16(let v): return basic(TypeCode.uint16, v)
        case .int32(let v): return basic(TypeCode.int32, v)
        case .uint32(let v): return basic(TypeCode.uint32, v)
        case .int64(let v): return basic(TypeCode.int64, v)
        case .uint64(let v): return basic(TypeCode.uint64, v)
        case .double(let v): return basic(TypeCode.double, v)
        case .string(let s): return text(TypeCode.string, s)
        case .objectPath(let p): return text(TypeCode.objectPath, p.rawValue)
        case .signature(let g): return text(TypeCode.signature, g.rawValue)
        case .unixFD(let fd): return basic(TypeCode.unixFD, fd.rawValue)  // libdbus duplicates it
        case .bytes(let bytes):
            return container(TypeCode.array, "y") { sub in
                if bytes.isEmpty { return true }
                return bytes.withUnsafeBufferPointer { buf in
                    var p: UnsafePointer<UInt8>? = buf.baseAddress
                    return dbus_message_iter_append_fixed_array(sub, TypeCode.byte, &p, Int32(buf.count)) != 0
                }
            }
        case .array(let e, let els):
            return container(TypeCode.array, e.rawValue) { sub in els.allSatisfy { append($0, sub) } }
        case .dictionary(let k, let v, let entries):
            return container(TypeCode.array, "{" + k.rawValue + v.rawValue + "}") { sub in
                entries.allSatisfy { entry in
                    container2(sub, TypeCode.dictEntry) { e in append(entry.key, e) && append(entry.value, e) }
                }
            }
        case .structure(let fields):
            return container(TypeCode.structure, nil) { sub in fields.allSatisfy { append($0, sub) } }
        case .variant(let inner):
            return container(TypeCode.variant, inner.signatureString) { sub in append(inner, sub) }
        }
    }

    private static func container2(_ it: UnsafeMutablePointer<DBusMessageIter>, _ code: Int32,
                                   _ body: (UnsafeMutablePointer<DBusMessageIter>) -> Bool) -> Bool {
        var sub = DBusMessageIter()
        guard dbus_message_iter_open_container(it, code, nil, &sub) != 0 else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(it, &sub)
            return false
        }
        return dbus_message_iter_close_container(it, &sub) != 0
    }

    static func read(_ it: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> DBusValue {
        func basic<T: BitwiseCopyable>(_ initial: T) -> T {
            var v = initial
            withUnsafeMutablePointer(to: &v) { dbus_message_iter_get_basic(it, UnsafeMutableRawPointer($0)) }
            return v
        }
        func text() -> String {
            var p: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(it, &p)
            return p.map { String(cString: $0) } ?? ""
        }
        let type = dbus_message_iter_get_arg_type(it)
        switch type {
        case TypeCode.byte: return .byte(basic(UInt8(0)))
        case TypeCode.boolean: return .boolean(basic(dbus_bool_t(0)) != 0)
        case TypeCode.int16: return .int16(basic(Int16(0)))
        case TypeCode.uint16: return .uint16(basic(UInt16(0)))
        case TypeCode.int32: return .int32(basic(Int32(0)))
        case TypeCode.uint32: return .uint32(basic(UInt32(0)))
        case TypeCode.int64: return .int64(basic(Int64(0)))
        case TypeCode.uint64: return .uint64(basic(UInt64(0)))
        case TypeCode.double: return .double(basic(Double(0)))
        case TypeCode.string: return .string(text())
        case TypeCode.objectPath: return .objectPath(DBusObjectPath(unchecked: text()))
        case TypeCode.signature: return .signature(DBusSignature(unchecked: text()))
        case TypeCode.unixFD:
            // libdbus returns a duplicate that the caller owns.
            let fd = basic(Int32(-1))
            guard fd >= 0 else { throw DBusError.failed("the message carried an invalid unix fd") }
            return .unixFD(DBusUnixFD(taking: fd))
        case TypeCode.array:
            let sig = iterSignature(it)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(it, &sub)
            let elementType = dbus_message_iter_get_element_type(it)
            if elementType == TypeCode.byte {
                var p: UnsafePointer<UInt8>? = nil
                var n: Int32 = 0
                withUnsafeMutablePointer(to: &p) { dbus_message_iter_get_fixed_array(&sub, $0, &n) }
                guard let p, n > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeBufferPointer(start: p, count: Int(n))))
            }
            let sigValue = DBusSignature(unchecked: sig)
            if elementType == TypeCode.dictEntry {
                guard let (k, v) = sigValue.dictKeyValue else {
                    throw DBusError(name: DBusError.invalidSignatureName, message: "unexpected dictionary signature '\(sig)'")
                }
                var entries: [DBusDictEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == TypeCode.dictEntry {
                    var e = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &e)
                    let key = try read(&e)
                    dbus_message_iter_next(&e)
                    let value = try read(&e)
                    entries.append(DBusDictEntry(key, value))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(keySignature: k, valueSignature: v, entries)
            }
            guard let e = sigValue.arrayElement else {
                throw DBusError(name: DBusError.invalidSignatureName, message: "unexpected array signature '\(sig)'")
            }
            var els: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
                els.append(try read(&sub))
                dbus_message_iter_next(&sub)
            }
            return .array(elementSignature: e, els)
        case TypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(it, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
                fields.append(try read(&sub))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case TypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(it, &sub)
            return .variant(try read(&sub))
        default:
            throw DBusError(name: DBusError.invalidSignatureName, message: "unsupported D-Bus type code \(type)")
        }
    }

    private static func iterSignature(_ it: UnsafeMutablePointer<DBusMessageIter>) -> String {
        guard let p = dbus_message_iter_get_signature(it) else { return "" }
        defer { dbus_free(p) }
        return String(cString: p)
    }
}
