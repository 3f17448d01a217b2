import DBus
import Synchronization

/// Exported objects of one connection.
final class ObjectRegistry: Sendable {
    struct Interface {
        var definition: DBusInterface
        var values: [String: DBusValue]
    }
    struct Object {
        var interfaces: [String: Interface] = [:]
        var order: [String] = []
    }
    struct State {
        var objects: [DBusObjectPath: Object] = [:]
        var managers: Set<DBusObjectPath> = []
    }
    let state = Mutex(State())
    /// Set when calls are handled one at a time, in arrival order.
    private let serialJobs = Mutex<AsyncStream<@Sendable () async -> Void>.Continuation?>(nil)

    static let standardInterfaces = ["org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties"]

    /// Adds interfaces; returns what to report in InterfacesAdded.
    func add(_ path: DBusObjectPath, _ interfaces: [DBusInterface]) throws(DBusError) -> [(String, [String: DBusValue])] {
        try state.withLock { s throws(DBusError) in
            var object = s.objects[path] ?? Object()
            let isNew = s.objects[path] == nil
            var added: [(String, [String: DBusValue])] = []
            if isNew { added = Self.standardInterfaces.map { ($0, [:]) } }
            for i in interfaces {
                guard object.interfaces[i.name] == nil else {
                    throw DBusError.invalidArgs("interface \(i.name) is already exported at \(path)")
                }
                var values: [String: DBusValue] = [:]
                for p in i.properties { if let v = p.initialValue { values[p.name] = v } }
                object.interfaces[i.name] = Interface(definition: i, values: values)
                object.order.append(i.name)
                added.append((i.name, Self.readable(i, values)))
            }
            s.objects[path] = object
            return added
        }
    }

    /// Removes an interface (or the whole object); returns the removed interface names.
    func remove(_ path: DBusObjectPath, interface: String?) -> [String]? {
        state.withLock { s in
            guard var object = s.objects[path] else { return nil }
            if let interface {
                guard object.interfaces.removeValue(forKey: interface) != nil else { return nil }
                object.order.removeAll { $0 == interface }
                if object.interfaces.isEmpty {
                    s.objects[path] = nil
                    return [interface] + Self.standardInterfaces
                }
                s.objects[path] = object
                return [interface]
            }
            s.objects[path] = nil
            return object.order + Self.standardInterfaces
        }
    }

    func removeAll() {
        state.withLock { $0 = State() }
        serialJobs.withLock { $0?.finish() }
    }

    /// Switches to in-order handling: each handler finishes before the next call's starts.
    func serializeCalls() {
        serialJobs.withLock { jobs in
            guard jobs == nil else { return }
            let (stream, continuation) = AsyncStream<@Sendable () async -> Void>.makeStream()
            jobs = continuation
            Task {
                for await job in stream { await job() }
            }
        }
    }

    /// Runs a handler job, concurrently with others or in arrival order.
    func run(_ job: @escaping @Sendable () async -> Void) {
        let serial = serialJobs.withLock { $0 }
        if let serial { serial.yield(job) } else { Task { await job() } }
    }

    func addManager(_ path: DBusObjectPath) {
        state.withLock { _ = $0.managers.insert(path) }
    }

    /// The nearest ObjectManager strictly above `path`.
    func manager(for path: DBusObjectPath) -> DBusObjectPath? {
        state.withLock { s in
            var p = path.parent
            while let cur = p {
                if s.managers.contains(cur) { return cur }
                p = cur.parent
            }
            return nil
        }
    }

    /// Stores a value; returns the change-signal kind if it changed, nil if unchanged.
    func store(_ path: DBusObjectPath, _ interface: String, _ name: String,
               _ value: DBusValue?) throws(DBusError) -> DBusProperty.ChangeSignal? {
        try state.withLock { s throws(DBusError) in
            guard var iface = s.objects[path]?.interfaces[interface] else {
                throw DBusError(name: DBusError.unknownInterfaceName, message: "No interface \(interface) at \(path)")
            }
            guard let def = iface.definition.properties.first(where: { $0.name == name }) else {
                throw DBusError(name: DBusError.unknownPropertyName, message: "No property \(name) in \(interface)")
            }
            if let value, value.signature != def.signature {
                throw DBusError.invalidArgs("Property \(interface).\(name) has type '\(def.signature)', not '\(value.signature)'")
            }
            if iface.values[name] == value { return nil }
            iface.values[name] = value
            s.objects[path]!.interfaces[interface] = iface
            return def.changeSignal
        }
    }

    func value(_ path: DBusObjectPath, _ interface: String, _ name: String) -> DBusValue? {
        state.withLock { $0.objects[path]?.interfaces[interface]?.values[name] }
    }

    static func readable(_ def: DBusInterface, _ values: [String: DBusValue]) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        for p in def.properties where p.access != .write { out[p.name] = values[p.name] }
        return out
    }

    static func interfacesValue(_ list: [(String, [String: DBusValue])]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "a{sv}",
                    list.map { DBusDictEntry(.string($0.0), .stringVariantDictionary($0.1)) })
    }

    func managedObjects(_ root: DBusObjectPath) -> DBusValue {
        state.withLock { s in
            let entries = s.objects.keys.filter { $0.isDescendant(of: root) }.sorted().map { path in
                let object = s.objects[path]!
                var list: [(String, [String: DBusValue])] = Self.standardInterfaces.map { ($0, [:]) }
                for name in object.order {
                    let i = object.interfaces[name]!
                    list.append((name, Self.readable(i.definition, i.values)))
                }
                return DBusDictEntry(.objectPath(path), Self.interfacesValue(list))
            }
            return .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", entries)
        }
    }
}
