import DBus
import Synchronization

/// Method calls and property access on exported objects. `handle` is called on the connection
/// queue; the work runs in tasks.
extension ObjectRegistry: DBusCallHandler {
    package func handle(_ msg: DBusIncomingCall) {
        run { await self.process(msg) }
    }

    package func connectionClosed() {
        removeAll()
    }

    private func process(_ msg: DBusIncomingCall) async {
        let call: DBusMessage
        do {
            call = try msg.message()
        } catch {
            msg.reply(.failure(error))
            return
        }
        guard let path = call.path, let member = call.member else { return }
        let interface = call.interface
        func error(_ name: String, _ text: String) { msg.reply(.failure(DBusError(name: name, message: text))) }

        // Standard interfaces.
        if (interface == "org.freedesktop.DBus.Introspectable" || interface == nil), member == "Introspect" {
            if let xml = introspect(path) { msg.reply(.success([.string(xml)])) }
            else { error(DBusError.unknownObjectName, "No such object path '\(path)'") }
            return
        }
        if interface == DBusConnection.objectManagerInterface || (interface == nil && member == "GetManagedObjects") {
            guard member == "GetManagedObjects", state.withLock({ $0.managers.contains(path) }) else {
                error(DBusError.unknownMethodName, "No method \(member) of org.freedesktop.DBus.ObjectManager at \(path)")
                return
            }
            msg.reply(.success([managedObjects(path)]))
            return
        }
        if interface == DBusConnection.propertiesInterface {
            await handleProperties(msg, call)
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
        msg.reply(result)
    }

    private func handleProperties(_ msg: DBusIncomingCall, _ call: DBusMessage) async {
        func fail(_ name: String, _ text: String) { msg.reply(.failure(DBusError(name: name, message: text))) }
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
            msg.reply(.success([.stringVariantDictionary(Self.readable(iface.definition, iface.values))]))
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
            msg.reply(.success([.variant(v)]))
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
                try emitChanged(msg, path, ifaceName, propName, value, change)
            }
            msg.reply(.success([]))
        } catch {
            msg.reply(.failure(error))
        }
    }

    private func emitChanged(_ msg: DBusIncomingCall, _ path: DBusObjectPath, _ iface: String, _ name: String,
                             _ value: DBusValue, _ change: DBusProperty.ChangeSignal) throws {
        let args: [DBusValue]
        switch change {
        case .emits: args = [.string(iface), .stringVariantDictionary([name: value]), .stringArray([])]
        case .invalidates: args = [.string(iface), .stringVariantDictionary([:]), .stringArray([name])]
        case .const, .none: return
        }
        try msg.emitSignal(path: path, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged", arguments: args)
    }
}
