import JSON
import RoomBridgeAPI
import RoomBridgeCore
import Varlink

/// The OpenAPI 3.1 document of `/api/v1`, made from ``APIRoute/all`` and the interfaces' descriptions
/// (``InterfaceIDL``): each route's parameters, body and reply are its Varlink method's input and output, and every
/// IDL type is a schema of the same name. Nothing in it is written twice, so it cannot disagree with the routes or
/// the contract; `APIDocumentTests` checks that every route is in it and that it is valid enough for schemathesis.
enum APIDocument {
    static let text: String = make().serialized()

    /// The problems every route may answer, by status.
    static let problems: [String: String] = [
        "400": "Bad input: an unknown or malformed parameter, or a value the daemon refuses.",
        "401": "No token, or an unknown one.",
        "403": "A read token on a change, or the web front's user may not do it.",
        "404": "No such record.",
        "409": "The record is not in a state that allows it (lent, not lent, locked out).",
        "429": "Too many requests for this token: wait Retry-After seconds.",
        "503": "roombridged does not answer, or did not say whether a change was made.",
    ]

    static func make() -> JSONValue {
        let schemas = Schemas()
        var paths: [String: [String: JSONValue]] = [:]
        for route in APIRoute.all {
            guard let (interface, method) = ContractDescriptions.method(route.method) else { continue }
            var operation: [String: JSONValue] = [
                "operationId": .string(route.operationID),
                "summary": .string(route.summary),
                "description": .string("Varlink `\(route.method)`; needs a \(route.scope.rawValue) token."),
                "tags": .array([.string(interface.name.split(separator: ".").last.map(String.init) ?? interface.name)]),
            ]
            var parameters: [JSONValue] = []
            let inputs = method.input
            for name in route.pathParameters {
                let type = inputs.first { $0.name == route.field(of: name) }?.type ?? .string
                parameters.append(.object(["name": .string(name), "in": .string("path"), "required": .bool(true),
                                           "schema": schemas.schema(Self.unwrapped(type), in: interface)]))
            }
            let own = inputs.filter { !route.pathFields.contains($0.name) && $0.name != "actor" }
            if route.verb == .get {
                for field in own {
                    parameters.append(.object(["name": .string(field.name), "in": .string("query"),
                                               "required": .bool(!Self.isOptional(field.type)),
                                               "schema": schemas.schema(Self.unwrapped(field.type), in: interface)]))
                }
            } else if !own.isEmpty {
                operation["requestBody"] = .object([
                    "required": .bool(own.contains { !Self.isOptional($0.type) }),
                    "content": .object(["application/json": .object(["schema": schemas.object(own, in: interface)])]),
                ])
            }
            if !parameters.isEmpty { operation["parameters"] = .array(parameters) }
            var responses: [String: JSONValue] = [
                "200": .object(["description": .string("The method's reply, as the daemon sent it."),
                                "content": .object(["application/json": .object(["schema": schemas.object(method.output, in: interface)])])]),
            ]
            for code in problems.keys { responses[code] = .object(["$ref": .string("#/components/responses/Problem\(code)")]) }
            operation["responses"] = .object(responses)
            paths["/api/v1" + route.path, default: [:]][route.verb.rawValue] = .object(operation)
        }
        paths["/api/v1/events"] = ["get": .object([
            "operationId": .string("Events"),
            "summary": .string("Server-Sent Events: the state (event: state), then every event of io.roombridge.State.Watch as it sent it (event: its kind, id: its seq; Last-Event-ID resumes), or event: offline."),
            "tags": .array([.string("State")]),
            "responses": .object([
                "200": .object(["description": .string("An endless text/event-stream."),
                                "content": .object(["text/event-stream": .object(["schema": .object(["type": .string("string")])])])]),
                "401": .object(["$ref": .string("#/components/responses/Problem401")]),
                "429": .object(["$ref": .string("#/components/responses/Problem429")]),
            ]),
        ])]
        var problemResponses: [String: JSONValue] = [:]
        for (code, text) in problems {
            problemResponses["Problem\(code)"] = .object([
                "description": .string(text + " An RFC 9457 problem: the typed error name and the sentence in the request's language."),
                "content": .object(["application/problem+json": .object(["schema": .object(["$ref": .string("#/components/schemas/Problem")])])]),
            ])
        }
        var components = schemas.all
        components["Problem"] = .object([
            "type": .string("object"),
            "required": .array(["type", "title", "status", "detail", "error"].map { .string($0) }),
            "properties": .object([
                "type": .object(["type": .string("string")]),
                "title": .object(["type": .string("string")]),
                "status": .object(["type": .string("integer")]),
                "detail": .object(["type": .string("string")]),
                "error": .object(["type": .string("string")]),
                "parameters": .object(["type": .string("object")]),
            ]),
        ])
        return .object([
            "openapi": .string("3.1.0"),
            "info": .object([
                "title": .string("RoomBridge"),
                "version": .string(RoomBridgeVersion.string),
                "description": .string("roombridge-web's HTTP API over roombridged's Varlink interfaces (docs/web.md)."),
            ]),
            "security": .array([.object(["bearer": .array([])])]),
            "components": .object([
                "securitySchemes": .object(["bearer": .object(["type": .string("http"), "scheme": .string("bearer")])]),
                "schemas": .object(components),
                "responses": .object(problemResponses),
            ]),
            "paths": .object(paths.mapValues { .object($0) }),
        ])
    }

    static func isOptional(_ type: VarlinkType) -> Bool {
        if case .optional = type { return true }
        return false
    }

    static func unwrapped(_ type: VarlinkType) -> VarlinkType {
        if case .optional(let t) = type { return t }
        return type
    }

    /// Every IDL type as a JSON Schema, by name; a name two interfaces give different types is `Interface.Name`.
    final class Schemas {
        /// (interface, IDL name) → schema name.
        private var names: [String: String] = [:]
        private(set) var all: [String: JSONValue] = [:]

        init() {
            var byName: [String: [(VarlinkInterfaceDefinition, VarlinkType)]] = [:]
            for def in ContractDescriptions.definitions.values.sorted(by: { $0.name < $1.name }) {
                for (name, type) in def.types { byName[name, default: []].append((def, type)) }
            }
            for (name, defs) in byName {
                let same = Set(defs.map { $0.1 }).count == 1
                for (def, _) in defs {
                    names[def.name + "/" + name] = same ? name : (def.name.split(separator: ".").last.map(String.init) ?? def.name) + "." + name
                }
            }
            for (name, defs) in byName {
                for (def, type) in defs {
                    all[names[def.name + "/" + name] ?? name] = schema(type, in: def)
                }
            }
        }

        func schema(_ type: VarlinkType, in def: VarlinkInterfaceDefinition) -> JSONValue {
            switch type {
            case .bool: return .object(["type": .string("boolean")])
            case .int: return .object(["type": .string("integer")])
            case .float: return .object(["type": .string("number")])
            case .string: return .object(["type": .string("string")])
            case .object: return .object(["type": .string("object")])
            case .named(let n): return .object(["$ref": .string("#/components/schemas/" + (names[def.name + "/" + n] ?? n))])
            case .struct(let fields): return object(fields, in: def)
            case .enum(let values): return .object(["type": .string("string"), "enum": .array(values.map { .string($0) })])
            case .optional(let t): return .object(["anyOf": .array([schema(t, in: def), .object(["type": .string("null")])])])
            case .array(let t): return .object(["type": .string("array"), "items": schema(t, in: def)])
            case .dictionary(let t): return .object(["type": .string("object"), "additionalProperties": schema(t, in: def)])
            }
        }

        func object(_ fields: [VarlinkField], in def: VarlinkInterfaceDefinition) -> JSONValue {
            var o: [String: JSONValue] = [
                "type": .string("object"),
                "properties": .object(Dictionary(fields.map { ($0.name, schema($0.type, in: def)) }) { a, _ in a }),
            ]
            let required = fields.filter { !APIDocument.isOptional($0.type) }.map { JSONValue.string($0.name) }
            if !required.isEmpty { o["required"] = .array(required) }
            return .object(o)
        }
    }
}
