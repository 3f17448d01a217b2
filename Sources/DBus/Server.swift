

/// A named, typed method/signal argument (for introspection and input checking).
public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var signature: DBusSignature
    public init(_ name: String, _ signature: DBusSignature) {
        self.name = name
        self.signature = signature
    }
}

/// An incoming method call, as seen by a handler.
public struct DBusMethodCall: Sendable {
    /// The whole message (sender, path, interface, member, body).
    public let message: DBusMessage
    public var arguments: [DBusValue] { message.body }
    public var sender: String? { message.sender }
    public var path: DBusObjectPath { message.path ?? .root }
}

/// An exported method. The handler returns the reply body or throws a `DBusError`, which is sent
/// verbatim as the error reply (any other error becomes `org.freedesktop.DBus.Error.Failed`).
public struct DBusMethod: Sendable {
    public var name: String
    public var inArguments: [DBusArgument]
    public var outArguments: [DBusArgument]
    /// If true (the default), calls whose signature differs from `inArguments` are refused with
    /// `InvalidArgs` before the handler runs.
    public var checksArguments: Bool
    public var handler: @Sendable (DBusMethodCall) async throws -> [DBusValue]

    public init(_ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
                checksArguments: Bool = true,
                handler: @escaping @Sendable (DBusMethodCall) async throws -> [DBusValue]) {
        self.name = name
        self.inArguments = inArguments
        self.outArguments = outArguments
        self.checksArguments = checksArguments
        self.handler = handler
    }

    var inSignature: String { inArguments.map(\.signature.rawValue).joined() }
}

/// An exported property with a stored value.
public struct DBusProperty: Sendable {
    public enum Access: String, Sendable { case read, write, readwrite }
    /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` behaviour.
    public enum ChangeSignal: String, Sendable { case emits = "true", invalidates, const, none = "false" }

    public var name: String
    public var signature: DBusSignature
    public var access: Access
    public var changeSignal: ChangeSignal
    /// The value at export time; nil means the property does not exist yet (as BlueZ's optional
    /// properties such as `RSSI`: left out of GetAll, `InvalidArgs` on Get).
    public var initialValue: DBusValue?
    /// Called when a peer sets the property (after type and access checks). Throw a `DBusError`
    /// to refuse; otherwise the value is stored and `PropertiesChanged` emitted.
    public var setter: (@Sendable (DBusValue, DBusMethodCall) async throws -> Void)?

    public init(_ name: String, value: DBusValue, access: Access = .read, changeSignal: ChangeSignal = .emits,
                setter: (@Sendable (DBusValue, DBusMethodCall) async throws -> Void)? = nil) {
        self.name = name
        self.signature = value.signature
        self.access = access
        self.changeSignal = changeSignal
        self.initialValue = value
        self.setter = setter
    }

    /// A property of type `signature` that has no value yet (see `initialValue`).
    public init(_ name: String, signature: DBusSignature, access: Access = .read, changeSignal: ChangeSignal = .emits,
                setter: (@Sendable (DBusValue, DBusMethodCall) async throws -> Void)? = nil) {
        self.name = name
        self.signature = signature
        self.access = access
        self.changeSignal = changeSignal
        self.initialValue = nil
        self.setter = setter
    }
}

/// A signal declared for introspection.
public struct DBusSignalDescription: Sendable {
    public var name: String
    public var arguments: [DBusArgument]
    public init(_ name: String, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// An interface to export at an object path.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignalDescription]
    public init(_ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
                signals: [DBusSignalDescription] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

extension DBusConnection {
    /// Exports `interfaces` at `path` (adding them to an already exported object). If an
    /// ObjectManager (see `addObjectManager`) is above `path`, `InterfacesAdded` is emitted.
    public func export(_ path: DBusObjectPath, interfaces: [DBusInterface]) throws {
        for i in interfaces {
            try Names.validateInterface(i.name)
            for m in i.methods { try Names.validateMember(m.name) }
            for p in i.properties {
                try Names.validateMember(p.name)
                guard p.signature.isSingleCompleteType else {
                    throw DBusError.invalidArgs("property \(p.name) must have a single complete type, not '\(p.signature)'")
                }
                if let v = p.initialValue {
                    try v.validateSignature()
                    try v.validate()
                }
            }
        }
        let added = try core.objects.add(path, interfaces)
        if let manager = core.objects.manager(for: path) {
            try? emitSignal(path: manager, interface: Self.objectManagerInterface, member: "InterfacesAdded",
                            arguments: [.objectPath(path), ObjectRegistry.interfacesValue(added)])
        }
    }

    /// Removes the object at `path` (emitting `InterfacesRemoved` under an ObjectManager).
    public func unexport(_ path: DBusObjectPath) {
        guard let removed = core.objects.remove(path, interface: nil) else { return }
        if let manager = core.objects.manager(for: path) {
            try? emitSignal(path: manager, interface: Self.objectManagerInterface, member: "InterfacesRemoved",
                            arguments: [.objectPath(path), .stringArray(removed)])
        }
    }

    /// Removes one interface from the object at `path` (the object goes when its last interface does).
    public func unexport(_ path: DBusObjectPath, interface: String) {
        guard let removed = core.objects.remove(path, interface: interface) else { return }
        if let manager = core.objects.manager(for: path) {
            try? emitSignal(path: manager, interface: Self.objectManagerInterface, member: "InterfacesRemoved",
                            arguments: [.objectPath(path), .stringArray(removed)])
        }
    }

    /// Makes incoming method calls (and property sets) run one at a time in arrival order, as in a
    /// single-threaded service such as bluetoothd. By default handlers run concurrently.
    /// Irreversible for this connection.
    public func handleCallsInOrder() {
        core.objects.serializeCalls()
    }

    /// Serves `org.freedesktop.DBus.ObjectManager` at `path` for every object below it.
    public func addObjectManager(at path: DBusObjectPath) {
        core.objects.addManager(path)
    }

    /// Stores a new property value and emits `PropertiesChanged` if it changed (according to the
    /// property's `changeSignal`). A nil value removes the property (it is then reported as
    /// invalidated). Throws if the property is unknown or the type differs.
    public func updateProperty(_ name: String, interface: String, path: DBusObjectPath, value: DBusValue?) throws {
        try value?.validate()
        guard let signal = try core.objects.store(path, interface, name, value) else { return }
        try emitPropertiesChanged(path: path, interface: interface, signal: signal, name: name, value: value)
    }

    /// The current value of an exported property.
    public func exportedProperty(_ name: String, interface: String, path: DBusObjectPath) -> DBusValue? {
        core.objects.value(path, interface, name)
    }

    func emitPropertiesChanged(path: DBusObjectPath, interface: String, signal: DBusProperty.ChangeSignal,
                               name: String, value: DBusValue?) throws {
        switch signal {
        case .emits where value != nil:
            try emitSignal(path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                           arguments: [.string(interface), .stringVariantDictionary([name: value!]), .stringArray([])])
        case .emits, .invalidates:
            try emitSignal(path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                           arguments: [.string(interface), .stringVariantDictionary([:]), .stringArray([name])])
        case .const, .none:
            break
        }
    }
}

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
    let state = Locked(State())
    /// Set when calls are handled one at a time, in arrival order.
    private let serialJobs = Locked<AsyncStream<@Sendable () async -> Void>.Continuation?>(nil)

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
    private func run(_ job: @escaping @Sendable () async -> Void) {
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

    // MARK: Dispatch (`handle` is called on the connection queue; the work runs in tasks)

    func handle(_ msg: RawMessage, core: ConnectionCore) {
        run { await self.process(msg, core) }
    }

    private func process(_ msg: RawMessage, _ core: ConnectionCore) async {
        let call: DBusMessage
        do {
            call = try msg.snapshot()
        } catch {
            reply(msg, core, .failure(error))
            return
        }
        guard let path = call.path, let member = call.member else { return }
        let interface = call.interface
        func error(_ name: String, _ text: String) { reply(msg, core, .failure(DBusError(name: name, message: text))) }

        // Standard interfaces.
        if (interface == "org.freedesktop.DBus.Introspectable" || interface == nil), member == "Introspect" {
            if let xml = introspect(path) { reply(msg, core, .success([.string(xml)])) }
            else { error(DBusError.unknownObjectName, "No such object path '\(path)'") }
            return
        }
        if interface == DBusConnection.objectManagerInterface || (interface == nil && member == "GetManagedObjects") {
            guard member == "GetManagedObjects", state.withLock({ $0.managers.contains(path) }) else {
                error(DBusError.unknownMethodName, "No method \(member) of org.freedesktop.DBus.ObjectManager at \(path)")
                return
            }
            reply(msg, core, .success([managedObjects(path)]))
            return
        }
        if interface == DBusConnection.propertiesInterface {
            await handleProperties(msg, call, core)
            return
        }

        // User interfaces.
        let object = state.withLock { $0.objects[path] }
        guard let object else {
            error(DBusError.unknownObjectName, "No such object path '\(path)'")
            return
        }
        let found: (DBusMethod, String)?
        if let interface {
            guard let i = object.interfaces[interface] else {
                error(DBusError.unknownInterfaceName, "No such interface '\(interface)' at object path '\(path)'")
                return
            }
            found = i.definition.methods.first { $0.name == member }.map { ($0, interface) }
        } else {
            found = object.order.lazy.compactMap { name in
                object.interfaces[name]!.definition.methods.first { $0.name == member }.map { ($0, name) }
            }.first
        }
        guard let (method, ifaceName) = found else {
            error(DBusError.unknownMethodName,
                  "No such method '\(member)' in interface '\(interface ?? "")' at object path '\(path)' (signature '\(call.signature)')")
            return
        }
        guard !method.checksArguments || method.inSignature == call.signature.rawValue else {
            error(DBusError.invalidArgsName,
                  "Type of message, '(\(call.signature))', does not match expected type '(\(method.inSignature))' for \(ifaceName).\(member)")
            return
        }
        let result: Result<[DBusValue], any Error>
        do { result = .success(try await method.handler(DBusMethodCall(message: call))) } catch { result = .failure(error) }
        reply(msg, core, result)
    }

    private func handleProperties(_ msg: RawMessage, _ call: DBusMessage, _ core: ConnectionCore) async {
        func fail(_ name: String, _ text: String) { reply(msg, core, .failure(DBusError(name: name, message: text))) }
        let path = call.path ?? .root
        let member = call.member ?? ""
        let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
        guard let sig = expected[member] else {
            fail(DBusError.unknownMethodName, "No such method '\(member)' in org.freedesktop.DBus.Properties")
            return
        }
        guard call.signature.rawValue == sig, case .string(let ifaceName) = call.body[0] else {
            fail(DBusError.invalidArgsName, "Properties.\(member) expects '(\(sig))', got '(\(call.signature))'")
            return
        }
        let snapshot = state.withLock { $0.objects[path] }
        guard let object = snapshot else {
            fail(DBusError.unknownObjectName, "No such object path '\(path)'")
            return
        }
        guard let iface = object.interfaces[ifaceName] else {
            fail(DBusError.unknownInterfaceName, "No such interface '\(ifaceName)' at object path '\(path)'")
            return
        }
        if member == "GetAll" {
            reply(msg, core, .success([.stringVariantDictionary(Self.readable(iface.definition, iface.values))]))
            return
        }
        guard case .string(let propName) = call.body[1],
              let def = iface.definition.properties.first(where: { $0.name == propName }) else {
            fail(DBusError.unknownPropertyName, "No such property '\(call.body[1])' in interface '\(ifaceName)'")
            return
        }
        if member == "Get" {
            guard def.access != .write else {
                fail(DBusError.failedName, "Property '\(propName)' is not readable")
                return
            }
            guard let v = iface.values[propName] else {
                fail(DBusError.invalidArgsName, "No such property '\(propName)'")
                return
            }
            reply(msg, core, .success([.variant(v)]))
            return
        }
        // Set
        guard def.access != .read else {
            fail(DBusError.propertyReadOnlyName, "Property '\(propName)' of '\(ifaceName)' is read-only")
            return
        }
        guard case .variant(let value) = call.body[2], value.signature == def.signature else {
            fail(DBusError.invalidArgsName, "Property '\(propName)' has type '\(def.signature)', not '\(call.body[2].unwrappingVariants.signature)'")
            return
        }
        do {
            if let setter = def.setter { try await setter(value, DBusMethodCall(message: call)) }
            if let change = try store(path, ifaceName, propName, value) {
                try emitChanged(core, path, ifaceName, propName, value, change)
            }
            reply(msg, core, .success([]))
        } catch {
            reply(msg, core, .failure(error))
        }
    }

    private func emitChanged(_ core: ConnectionCore, _ path: DBusObjectPath, _ iface: String, _ name: String,
                             _ value: DBusValue, _ change: DBusProperty.ChangeSignal) throws {
        let args: [DBusValue]
        switch change {
        case .emits: args = [.string(iface), .stringVariantDictionary([name: value]), .stringArray([])]
        case .invalidates: args = [.string(iface), .stringVariantDictionary([:]), .stringArray([name])]
        case .const, .none: return
        }
        let signal = try RawMessage.signal(path: path, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged")
        try signal.append(args)
        try core.send(signal)
    }

    /// Sends the reply (any thread). Errors that are not `DBusError` become `Failed`.
    private func reply(_ msg: RawMessage, _ core: ConnectionCore, _ result: Result<[DBusValue], any Error>) {
        guard !msg.noReplyExpected else { return }
        var out: RawMessage?
        switch result {
        case .success(let values):
            do {
                let r = try msg.methodReturn()
                try r.append(values)
                out = r
            } catch let e {
                out = msg.errorReply(e)
            }
        case .failure(let e as DBusError):
            out = msg.errorReply(e)
        case .failure(let e):
            out = msg.errorReply(DBusError.failed("\(e)"))
        }
        if let out { try? core.send(out) }
    }
}
