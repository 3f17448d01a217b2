/// A Varlink message could not be decoded.
public enum VarlinkMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message is not valid JSON.
    case invalidJSON(JSONParseError)
    /// The message is JSON but not an object.
    case notAnObject
    /// A required envelope field is missing (e.g. `method`).
    case missingField(String)
    /// An envelope field has the wrong type (e.g. `"more": "yes"`).
    case wrongType(field: String, expected: String)

    public var description: String {
        switch self {
        case .invalidJSON(let e): return "malformed Varlink message: \(e)"
        case .notAnObject: return "malformed Varlink message: not a JSON object"
        case .missingField(let f): return "malformed Varlink message: missing field \"\(f)\""
        case .wrongType(let f, let expected): return "malformed Varlink message: field \"\(f)\" must be \(expected)"
        }
    }

    /// The error reply a server sends for this problem:
    /// `org.varlink.service.InvalidParameter` naming the envelope field (`""` when the
    /// message is not a JSON object at all).
    public var varlinkError: VarlinkError {
        switch self {
        case .invalidJSON, .notAnObject: return .invalidParameter("")
        case .missingField(let f), .wrongType(let f, _): return .invalidParameter(f)
        }
    }
}

private func object(from bytes: [UInt8]) throws(VarlinkMessageError) -> [String: JSONValue] {
    let json: JSONValue
    do { json = try JSONParser.parse(bytes) } catch { throw .invalidJSON(error) }
    guard case .object(let o) = json else { throw .notAnObject }
    return o
}

private func optionalBool(_ o: [String: JSONValue], _ key: String) throws(VarlinkMessageError) -> Bool {
    switch o[key] {
    case nil, .null?: return false
    case .bool(let b)?: return b
    default: throw .wrongType(field: key, expected: "a bool")
    }
}

private func optionalParameters(_ o: [String: JSONValue]) throws(VarlinkMessageError) -> [String: JSONValue] {
    switch o["parameters"] {
    case nil, .null?: return [:]
    case .object(let p)?: return p
    default: throw .wrongType(field: "parameters", expected: "an object")
    }
}

/// A method call: `{"method":"iface.Method","parameters":{...},"more":true,"oneway":true,"upgrade":true}`.
public struct VarlinkCall: Sendable, Hashable {
    /// Fully-qualified method name, `interface.Method`.
    public var method: String
    /// Input parameters; omitted, `null` and `{}` all decode as empty.
    public var parameters: [String: JSONValue]
    /// The client accepts several replies (`continues: true` on all but the last).
    public var more: Bool
    /// The client wants no reply at all.
    public var oneway: Bool
    /// The client asks to take the connection over after the reply (not supported by ``VarlinkService``).
    public var upgrade: Bool

    public init(method: String, parameters: [String: JSONValue] = [:], more: Bool = false, oneway: Bool = false, upgrade: Bool = false) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The interface part of ``method`` (everything before the last dot; `""` if there is no dot).
    public var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The method part of ``method`` (after the last dot).
    public var methodName: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// Decodes a call from a message (JSON without the NUL terminator). Unknown envelope keys
    /// are ignored (the spec reserves them for vendor extensions).
    public init(bytes: [UInt8]) throws(VarlinkMessageError) {
        try self.init(envelope: object(from: bytes))
    }

    /// Decodes a call from a parsed JSON object.
    public init(envelope o: [String: JSONValue]) throws(VarlinkMessageError) {
        switch o["method"] {
        case .string(let m)?: method = m
        case nil, .null?: throw .missingField("method")
        default: throw .wrongType(field: "method", expected: "a string")
        }
        parameters = try optionalParameters(o)
        more = try optionalBool(o, "more")
        oneway = try optionalBool(o, "oneway")
        upgrade = try optionalBool(o, "upgrade")
    }

    /// The JSON envelope (flags only present when set; parameters always present).
    public var json: JSONValue {
        var o: [String: JSONValue] = ["method": .string(method), "parameters": .object(parameters)]
        if more { o["more"] = true }
        if oneway { o["oneway"] = true }
        if upgrade { o["upgrade"] = true }
        return .object(o)
    }

    /// The serialized message including its NUL terminator, ready to write to a socket.
    public func framedBytes() -> [UInt8] {
        var b = json.serializedBytes()
        b.append(0)
        return b
    }
}

/// A reply: `{"parameters":{...},"continues":true}` or `{"error":"iface.Name","parameters":{...}}`.
///
/// A reply may carry its parameters already serialized (``init(encodedParameters:continues:)``),
/// so that a value sent to many clients, or the same state sent again, is serialized once:
/// ``framedBytes()`` then only wraps those bytes.
public struct VarlinkReply: Sendable, Hashable {
    private var decoded: [String: JSONValue]
    /// The parameters as serialized bytes of a JSON object, when the reply was made from them.
    public private(set) var encodedParameters: [UInt8]?

    /// Output parameters, or the error's parameters. For a reply made from encoded parameters
    /// this parses them (invalid bytes read as no parameters); setting it drops the encoded form.
    public var parameters: [String: JSONValue] {
        get {
            guard let encodedParameters else { return decoded }
            return (try? JSONParser.parse(encodedParameters))?.objectValue ?? [:]
        }
        set {
            decoded = newValue
            encodedParameters = nil
        }
    }
    /// More replies to the same call follow.
    public var continues: Bool
    /// Fully-qualified error name if the call failed.
    public var error: String?

    public init(parameters: [String: JSONValue] = [:], continues: Bool = false, error: String? = nil) {
        self.decoded = parameters
        self.encodedParameters = nil
        self.continues = continues
        self.error = error
    }

    /// A (non-error) reply whose parameters are already serialized: `bytes` must be one JSON
    /// object as ``JSONSerializer`` writes it (the caller keeps that promise; it is not parsed).
    public init(encodedParameters bytes: [UInt8], continues: Bool = false) {
        self.decoded = [:]
        self.encodedParameters = bytes
        self.continues = continues
        self.error = nil
    }

    /// An error reply for `error`.
    public init(_ error: VarlinkError) {
        self.init(parameters: error.parameters, continues: false, error: error.name)
    }

    public static func == (a: VarlinkReply, b: VarlinkReply) -> Bool {
        a.continues == b.continues && a.error == b.error && a.parameters == b.parameters
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(continues)
        hasher.combine(error)
        hasher.combine(parameters)
    }

    /// The ``VarlinkError`` this reply carries, if it is an error reply.
    public var varlinkError: VarlinkError? {
        error.map { VarlinkError($0, parameters: parameters) }
    }

    /// Decodes a reply from a message (JSON without the NUL terminator).
    public init(bytes: [UInt8]) throws(VarlinkMessageError) {
        try self.init(envelope: object(from: bytes))
    }

    /// Decodes a reply from a parsed JSON object.
    public init(envelope o: [String: JSONValue]) throws(VarlinkMessageError) {
        decoded = try optionalParameters(o)
        encodedParameters = nil
        continues = try optionalBool(o, "continues")
        switch o["error"] {
        case nil, .null?: error = nil
        case .string(let e)?: error = e
        default: throw .wrongType(field: "error", expected: "a string")
        }
    }

    /// The JSON envelope.
    public var json: JSONValue {
        var o: [String: JSONValue] = ["parameters": .object(parameters)]
        if continues { o["continues"] = true }
        if let error { o["error"] = .string(error) }
        return .object(o)
    }

    /// The serialized message including its NUL terminator.
    public func framedBytes() -> [UInt8] {
        guard let encodedParameters, error == nil else {
            var b = json.serializedBytes()
            b.append(0)
            return b
        }
        // The envelope as JSONSerializer writes it (keys sorted: "continues" < "parameters").
        let head = continues ? Self.continuingHead : Self.finalHead
        var b: [UInt8] = []
        b.reserveCapacity(head.count + encodedParameters.count + 2)
        b.append(contentsOf: head)
        b.append(contentsOf: encodedParameters)
        b.append(UInt8(ascii: "}"))
        b.append(0)
        return b
    }

    private static let continuingHead = Array(#"{"continues":true,"parameters":"#.utf8)
    private static let finalHead = Array(#"{"parameters":"#.utf8)
}
