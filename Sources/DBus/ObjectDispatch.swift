internal import CDBus
import Synchronization

/// Method calls and property access on exported objects. `handle` is called on the connection
/// queue; the work runs in tasks.
extension ObjectRegistry {
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
