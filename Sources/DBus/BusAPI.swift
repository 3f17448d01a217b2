/// The owner of a bus name, as reported by `nameOwnerChanges(of:)`.
public enum DBusNameOwner: Sendable, Hashable {
    case owned(by: String)
    case unowned
}

/// Flags for `requestName`.
public struct DBusRequestNameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let allowReplacement = DBusRequestNameFlags(rawValue: 1)
    public static let replaceExisting = DBusRequestNameFlags(rawValue: 2)
    public static let doNotQueue = DBusRequestNameFlags(rawValue: 4)
}

/// The reply of `RequestName`.
public enum DBusRequestNameReply: UInt32, Sendable {
    case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
}

/// A `PropertiesChanged` signal.
public struct DBusPropertiesChanged: Sendable {
    public var path: DBusObjectPath
    public var sender: String?
    public var interface: String
    public var changed: [String: DBusValue]
    public var invalidated: [String]
}

/// An `InterfacesAdded` / `InterfacesRemoved` signal of an ObjectManager.
public enum DBusObjectManagerEvent: Sendable {
    case interfacesAdded(DBusObjectPath, [String: [String: DBusValue]])
    case interfacesRemoved(DBusObjectPath, [String])
}

extension DBusConnection {
    static let busName = "org.freedesktop.DBus"
    static let busPath: DBusObjectPath = "/org/freedesktop/DBus"
    package static let propertiesInterface = "org.freedesktop.DBus.Properties"
    package static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

    // MARK: Names

    /// `RequestName`; throws unless the bus accepted the request.
    @discardableResult
    public func requestName(_ name: String, flags: DBusRequestNameFlags = .doNotQueue) async throws -> DBusRequestNameReply {
        let reply = try await call(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                   member: "RequestName", arguments: [.string(name), .uint32(flags.rawValue)])
        guard case .uint32(let code)? = reply.first, let r = DBusRequestNameReply(rawValue: code) else {
            throw DBusError.failed("unexpected RequestName reply \(reply)")
        }
        if r == .exists {
            throw DBusError(name: "org.freedesktop.DBus.Error.NameExists",
                            message: "the name '\(name)' is already owned by another connection")
        }
        return r
    }

    /// The unique name owning `name`, or nil if it has no owner.
    public func nameOwner(_ name: String) async throws -> String? {
        do {
            return try await call(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                  member: "GetNameOwner", arguments: [.string(name)]).first?.string()
        } catch let e as DBusError where e.name == DBusError.nameHasNoOwnerName {
            return nil
        }
    }

    /// The owner of `name` now (first element, from `GetNameOwner`) and on every change
    /// (`NameOwnerChanged`). Consecutive duplicates are suppressed. Ends when the connection closes.
    public func nameOwnerChanges(of name: String) async throws -> AsyncStream<DBusNameOwner> {
        let signals = try await self.signals(matching: .nameOwnerChanged(name))
        let initial: DBusNameOwner = try await nameOwner(name).map { .owned(by: $0) } ?? .unowned
        return AsyncStream { cont in
            let task = Task {
                var last = initial
                cont.yield(initial)
                for await s in signals {
                    guard s.body.count == 3, case .string(let n) = s.body[0], n == name,
                          case .string(let newOwner) = s.body[2] else { continue }
                    let event: DBusNameOwner = newOwner.isEmpty ? .unowned : .owned(by: newOwner)
                    if event != last {
                        last = event
                        cont.yield(event)
                    }
                }
                cont.finish()
            }
            cont.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Properties (client side)

    /// `org.freedesktop.DBus.Properties.Get`; returns the value without its variant wrapper.
    public func getProperty(destination: String, path: DBusObjectPath, interface: String, name: String,
                            timeout: Duration = .seconds(25)) async throws -> DBusValue {
        let r = try await call(destination: destination, path: path, interface: Self.propertiesInterface, member: "Get",
                               arguments: [.string(interface), .string(name)], timeout: timeout)
        guard let v = r.first else { throw DBusError.failed("empty reply to Properties.Get") }
        return v.unwrappingVariants
    }

    /// `org.freedesktop.DBus.Properties.GetAll`.
    public func getAllProperties(destination: String, path: DBusObjectPath, interface: String,
                                 timeout: Duration = .seconds(25)) async throws -> [String: DBusValue] {
        let r = try await call(destination: destination, path: path, interface: Self.propertiesInterface, member: "GetAll",
                               arguments: [.string(interface)], timeout: timeout)
        guard let v = r.first else { throw DBusError.failed("empty reply to Properties.GetAll") }
        return try v.stringVariantDictionary()
    }

    /// `org.freedesktop.DBus.Properties.Set` (the value is wrapped in a variant).
    public func setProperty(destination: String, path: DBusObjectPath, interface: String, name: String,
                            value: DBusValue, timeout: Duration = .seconds(25)) async throws {
        _ = try await call(destination: destination, path: path, interface: Self.propertiesInterface, member: "Set",
                           arguments: [.string(interface), .string(name), .variant(value)], timeout: timeout)
    }

    /// `PropertiesChanged` signals from `sender`, optionally restricted to one object path (or
    /// everything below `pathNamespace`) and one interface.
    public func propertiesChanged(sender: String?, path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil,
                                  interface: String? = nil) async throws -> AsyncStream<DBusPropertiesChanged> {
        var rule = DBusMatchRule(sender: sender, interface: Self.propertiesInterface, member: "PropertiesChanged",
                                 path: path, pathNamespace: pathNamespace)
        if let interface { rule.arguments[0] = interface }
        let signals = try await self.signals(matching: rule)
        return AsyncStream { cont in
            let task = Task {
                for await s in signals {
                    guard let p = s.path, s.body.count >= 2, case .string(let iface) = s.body[0],
                          let changed = try? s.body[1].stringVariantDictionary() else { continue }
                    let invalidated = (s.body.count > 2 ? try? s.body[2].stringArray() : nil) ?? []
                    cont.yield(DBusPropertiesChanged(path: p, sender: s.sender, interface: iface,
                                                     changed: changed, invalidated: invalidated))
                }
                cont.finish()
            }
            cont.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: ObjectManager (client side)

    /// `org.freedesktop.DBus.ObjectManager.GetManagedObjects`.
    public func getManagedObjects(destination: String, path: DBusObjectPath = .root,
                                  timeout: Duration = .seconds(25)) async throws -> [DBusObjectPath: [String: [String: DBusValue]]] {
        let r = try await call(destination: destination, path: path, interface: Self.objectManagerInterface,
                               member: "GetManagedObjects", timeout: timeout)
        guard let v = r.first else { throw DBusError.failed("empty reply to GetManagedObjects") }
        return try v.managedObjects()
    }

    /// `InterfacesAdded` / `InterfacesRemoved` from the ObjectManager at `path` of `sender`.
    public func objectManagerEvents(sender: String, path: DBusObjectPath = .root) async throws -> AsyncStream<DBusObjectManagerEvent> {
        let signals = try await self.signals(matching: DBusMatchRule(sender: sender, interface: Self.objectManagerInterface, path: path))
        return AsyncStream { cont in
            let task = Task {
                for await s in signals {
                    guard s.body.count == 2, case .objectPath(let p) = s.body[0] else { continue }
                    if s.member == "InterfacesAdded", let ifaces = try? s.body[1].interfacesAndProperties() {
                        cont.yield(.interfacesAdded(p, ifaces))
                    } else if s.member == "InterfacesRemoved", let names = try? s.body[1].stringArray() {
                        cont.yield(.interfacesRemoved(p, names))
                    }
                }
                cont.finish()
            }
            cont.onTermination = { _ in task.cancel() }
        }
    }
}
