/// What answers the method calls addressed to a connection. The object export code (`DBusExport`, which only
/// the simulator uses) installs one per connection; a connection without one leaves method calls to libdbus,
/// which answers them with `UnknownMethod` (and `org.freedesktop.DBus.Peer` itself).
package protocol DBusCallHandler: AnyObject, Sendable {
    /// A method call arrived. Called on the connection's queue: start the work elsewhere and return.
    func handle(_ call: DBusIncomingCall)
    /// The connection closed: drop what might keep it alive (handlers often capture the connection).
    func connectionClosed()
}

/// A received method call, with the means to answer it on the connection it came on.
package struct DBusIncomingCall: Sendable {
    let raw: RawMessage
    let core: ConnectionCore

    /// The decoded call.
    package func message() throws(DBusError) -> DBusMessage {
        try raw.snapshot()
    }

    /// Sends the reply, from any thread (nothing if the caller expects none). Errors that are not
    /// `DBusError` become `Failed`.
    package func reply(_ result: Result<[DBusValue], any Error>) {
        guard !raw.noReplyExpected else { return }
        var out: RawMessage?
        switch result {
        case .success(let values):
            do {
                let r = try raw.methodReturn()
                try r.append(values)
                out = r
            } catch let e {
                out = raw.errorReply(e)
            }
        case .failure(let e as DBusError):
            out = raw.errorReply(e)
        case .failure(let e):
            out = raw.errorReply(DBusError.failed("\(e)"))
        }
        if let out { try? core.send(out) }
    }

    /// Emits a signal on the call's connection.
    package func emitSignal(path: DBusObjectPath, interface: String, member: String, arguments: [DBusValue]) throws {
        try core.emitSignal(path: path, interface: interface, member: member, arguments: arguments, destination: nil)
    }
}

extension DBusConnection {
    /// The connection's call handler: the one installed, else `make()`'s, installed now.
    package func callHandler<Handler: DBusCallHandler>(_ make: () -> Handler) -> Handler {
        core.callHandler.withLock { installed in
            if let installed {
                guard let handler = installed as? Handler else {
                    preconditionFailure("this connection's calls already go to a \(type(of: installed))")
                }
                return handler
            }
            let handler = make()
            installed = handler
            return handler
        }
    }
}
