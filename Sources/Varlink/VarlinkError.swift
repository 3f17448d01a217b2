/// A Varlink error reply: a fully-qualified error name plus parameters.
///
/// Throw it from a ``VarlinkInterface`` handler to answer the call with an error; the client
/// throws it when it receives an error reply.
public struct VarlinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fully-qualified error name, e.g. `org.varlink.service.InvalidParameter`.
    public var name: String
    /// Error parameters (as declared by the interface's `error` definition).
    public var parameters: [String: JSONValue]

    public init(_ name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters).serialized())"
    }
}

extension VarlinkError {
    public static let interfaceNotFoundName = "org.varlink.service.InterfaceNotFound"
    public static let methodNotFoundName = "org.varlink.service.MethodNotFound"
    public static let methodNotImplementedName = "org.varlink.service.MethodNotImplemented"
    public static let invalidParameterName = "org.varlink.service.InvalidParameter"
    public static let permissionDeniedName = "org.varlink.service.PermissionDenied"
    public static let expectedMoreName = "org.varlink.service.ExpectedMore"
    /// Not in the varlink.org spec; used (as by varlink-cpp and zlink) when a handler fails with
    /// an error that is not a ``VarlinkError``. Declared in this library's
    /// `org.varlink.service` description.
    public static let internalErrorName = "org.varlink.service.InternalError"

    /// `org.varlink.service.InterfaceNotFound{interface}`.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(interfaceNotFoundName, parameters: ["interface": .string(interface)])
    }

    /// `org.varlink.service.MethodNotFound{method}` (`method` is the fully-qualified name).
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(methodNotFoundName, parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.MethodNotImplemented{method}`: declared in the interface, not implemented.
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(methodNotImplementedName, parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.InvalidParameter{parameter}`, naming the offending field.
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(invalidParameterName, parameters: ["parameter": .string(parameter)])
    }

    /// `org.varlink.service.InvalidParameter` for a failed Codable decoding, naming the field path.
    public static func invalidParameter(_ error: DecodingError) -> VarlinkError {
        invalidParameter(JSONValueDecoder.fieldPath(of: error))
    }

    /// `org.varlink.service.PermissionDenied`.
    public static var permissionDenied: VarlinkError { VarlinkError(permissionDeniedName) }

    /// `org.varlink.service.ExpectedMore`: the method must be called with `more: true`.
    public static var expectedMore: VarlinkError { VarlinkError(expectedMoreName) }

    /// `org.varlink.service.InternalError`: the service failed unexpectedly.
    public static var internalError: VarlinkError { VarlinkError(internalErrorName) }

    /// The parameter named by an `InvalidParameter` error, if this is one.
    public var invalidParameterName: String? {
        name == Self.invalidParameterName ? parameters["parameter"]?.stringValue : nil
    }
}
