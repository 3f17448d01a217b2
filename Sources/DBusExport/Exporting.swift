import DBus

extension DBusConnection {
    /// This connection's exported objects (created, and handed the connection's method calls, on first use).
    var objects: ObjectRegistry { callHandler { ObjectRegistry() } }

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
        let added = try objects.add(path, interfaces)
        if let manager = objects.manager(for: path) {
            try? emitSignal(path: manager, interface: Self.objectManagerInterface, member: "InterfacesAdded",
                            arguments: [.objectPath(path), ObjectRegistry.interfacesValue(added)])
        }
    }

    /// Removes the object at `path` (emitting `InterfacesRemoved` under an ObjectManager).
    public func unexport(_ path: DBusObjectPath) {
        guard let removed = objects.remove(path, interface: nil) else { return }
        if let manager = objects.manager(for: path) {
            try? emitSignal(path: manager, interface: Self.objectManagerInterface, member: "InterfacesRemoved",
                            arguments: [.objectPath(path), .stringArray(removed)])
        }
    }

    /// Removes one interface from the object at `path` (the object goes when its last interface does).
    public func unexport(_ path: DBusObjectPath, interface: String) {
        guard let removed = objects.remove(path, interface: interface) else { return }
        if let manager = objects.manager(for: path) {
            try? emitSignal(path: manager, interface: Self.objectManagerInterface, member: "InterfacesRemoved",
                            arguments: [.objectPath(path), .stringArray(removed)])
        }
    }

    /// Makes incoming method calls (and property sets) run one at a time in arrival order, as in a
    /// single-threaded service such as bluetoothd. By default handlers run concurrently.
    /// Irreversible for this connection.
    public func handleCallsInOrder() {
        objects.serializeCalls()
    }

    /// Serves `org.freedesktop.DBus.ObjectManager` at `path` for every object below it.
    public func addObjectManager(at path: DBusObjectPath) {
        objects.addManager(path)
    }

    /// Stores a new property value and emits `PropertiesChanged` if it changed (according to the
    /// property's `changeSignal`). A nil value removes the property (it is then reported as
    /// invalidated). Throws if the property is unknown or the type differs.
    public func updateProperty(_ name: String, interface: String, path: DBusObjectPath, value: DBusValue?) throws {
        try value?.validate()
        guard let signal = try objects.store(path, interface, name, value) else { return }
        try emitPropertiesChanged(path: path, interface: interface, signal: signal, name: name, value: value)
    }

    /// Stores several property values of one interface and emits one `PropertiesChanged` for all that changed
    /// (and those in `signalled`, changed or not, whatever their own change signal), in the given order: as bluetoothd's gdbus sends the properties
    /// set in one main-loop iteration together (gdbus/object.c `g_dbus_emit_property_changed_full()` queues them,
    /// `process_changes()` sends them at idle, one signal per interface).
    public func updateProperties(_ values: [(name: String, value: DBusValue)], interface: String, path: DBusObjectPath,
                                 signalled: Set<String> = []) throws {
        var changed: [DBusDictEntry] = []
        for (name, value) in values {
            try value.validate()
            let signal = try objects.store(path, interface, name, value)
            if signal == .emits || signalled.contains(name) {
                changed.append(DBusDictEntry(.string(name), .variant(value)))
            }
        }
        guard !changed.isEmpty else { return }
        try emitSignal(path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                       arguments: [.string(interface), .dictionary(keySignature: "s", valueSignature: "v", changed),
                                   .stringArray([])])
    }

    /// The current value of an exported property.
    public func exportedProperty(_ name: String, interface: String, path: DBusObjectPath) -> DBusValue? {
        objects.value(path, interface, name)
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
