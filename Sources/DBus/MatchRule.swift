/// A D-Bus match rule (https://dbus.freedesktop.org/doc/dbus-specification.html#message-bus-routing-match-rules).
/// Used both for `AddMatch` on the bus and to filter incoming messages locally.
public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
    public var type: DBusMessage.Kind? = .signal
    /// Unique or well-known sender name. For a well-known name the connection tracks its owner,
    /// so only messages from the current owner match locally.
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: DBusObjectPath?
    /// Matches `path` itself and every path below it.
    public var pathNamespace: DBusObjectPath?
    public var destination: String?
    /// `argN='value'`: the N-th argument is a string equal to value.
    public var arguments: [Int: String] = [:]
    /// `argNpath='value'`: path-prefix matching as in the spec.
    public var argumentPaths: [Int: String] = [:]
    /// `arg0namespace='org.example'`.
    public var arg0Namespace: String?

    public init(type: DBusMessage.Kind? = .signal, sender: String? = nil, interface: String? = nil,
                member: String? = nil, path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil,
                destination: String? = nil, arguments: [Int: String] = [:], argumentPaths: [Int: String] = [:],
                arg0Namespace: String? = nil) {
        self.type = type
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.argumentPaths = argumentPaths
        self.arg0Namespace = arg0Namespace
    }

    /// `NameOwnerChanged` for one name (sent by the bus driver).
    public static func nameOwnerChanged(_ name: String) -> DBusMatchRule {
        DBusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                      member: "NameOwnerChanged", path: "/org/freedesktop/DBus", arguments: [0: name])
    }

    /// The rule as the bus expects it (`type='signal',sender='org.bluez',…`).
    public var string: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String) {
            // A literal apostrophe is written as '\'' (close quote, escaped apostrophe, reopen).
            parts.append(key + "='" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'")
        }
        if let type {
            switch type {
            case .signal: add("type", "signal")
            case .methodCall: add("type", "method_call")
            case .methodReturn: add("type", "method_return")
            case .error: add("type", "error")
            }
        }
        if let sender { add("sender", sender) }
        if let interface { add("interface", interface) }
        if let member { add("member", member) }
        if let path { add("path", path.rawValue) }
        if let pathNamespace { add("path_namespace", pathNamespace.rawValue) }
        if let destination { add("destination", destination) }
        for (n, v) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(n)", v) }
        for (n, v) in argumentPaths.sorted(by: { $0.key < $1.key }) { add("arg\(n)path", v) }
        if let arg0Namespace { add("arg0namespace", arg0Namespace) }
        return parts.joined(separator: ",")
    }

    public var description: String { string }

    /// Local matching. `senderOwner(name)` returns nil if the owner of a well-known name is not
    /// known (then the bus's routing is trusted), `.some(nil)` if it has no owner.
    func matches(_ m: DBusMessage, senderOwner: (String) -> String??) -> Bool {
        if let type, type != m.kind { return false }
        if let sender, sender != m.sender {
            if sender.hasPrefix(":") { return false }
            if let known = senderOwner(sender), known != m.sender { return false }
        }
        if let interface, interface != m.interface { return false }
        if let member, member != m.member { return false }
        if let path, path != m.path { return false }
        if let ns = pathNamespace {
            guard let p = m.path, p == ns || p.isDescendant(of: ns) else { return false }
        }
        if let destination, destination != m.destination { return false }
        for (n, v) in arguments {
            guard n < m.body.count, case .string(let s) = m.body[n], s == v else { return false }
        }
        for (n, v) in argumentPaths {
            guard let s = m.argumentString(n) else { return false }
            let ok = s == v || (v.hasSuffix("/") && s.hasPrefix(v)) || (s.hasSuffix("/") && v.hasPrefix(s))
            if !ok { return false }
        }
        if let ns = arg0Namespace {
            guard let s = m.argumentString(0), s == ns || s.hasPrefix(ns + ".") else { return false }
        }
        return true
    }
}
