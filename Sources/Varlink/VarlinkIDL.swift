// The Varlink interface definition language (https://varlink.org/Interface-Definition):
// a parser and a validator of JSON parameters against the parsed types.

/// A Varlink type.
public indirect enum VarlinkType: Sendable, Hashable, CustomStringConvertible {
    case bool
    case int
    case float
    case string
    /// A foreign, untyped JSON object.
    case object
    /// A reference to a `type` declared in the same interface.
    case named(String)
    /// An anonymous structure `(a: int, b: string)`; `()` is the empty structure.
    case `struct`([VarlinkField])
    /// An anonymous enum `(one, two, three)`; values travel as JSON strings.
    case `enum`([String])
    /// `?T`: the field may be absent or `null`.
    case optional(VarlinkType)
    /// `[]T`
    case array(VarlinkType)
    /// `[string]T`: a JSON object with arbitrary keys.
    case dictionary(VarlinkType)

    public var description: String {
        switch self {
        case .bool: return "bool"
        case .int: return "int"
        case .float: return "float"
        case .string: return "string"
        case .object: return "object"
        case .named(let n): return n
        case .struct(let fields): return "(" + fields.map { "\($0.name): \($0.type)" }.joined(separator: ", ") + ")"
        case .enum(let values): return "(" + values.joined(separator: ", ") + ")"
        case .optional(let t): return "?\(t)"
        case .array(let t): return "[]\(t)"
        case .dictionary(let t): return "[string]\(t)"
        }
    }
}

/// A named field of a structure, a method's input/output or an error.
public struct VarlinkField: Sendable, Hashable {
    public var name: String
    public var type: VarlinkType
    public init(name: String, type: VarlinkType) {
        self.name = name
        self.type = type
    }
}

/// `method Name(input) -> (output)`.
public struct VarlinkMethodDefinition: Sendable, Hashable {
    public var name: String
    public var input: [VarlinkField]
    public var output: [VarlinkField]
}

/// `error Name (parameters)`.
public struct VarlinkErrorDefinition: Sendable, Hashable {
    public var name: String
    public var parameters: [VarlinkField]
}

/// A syntax or consistency error in an interface description, with its 1-based position.
public struct VarlinkIDLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int

    public var description: String { "interface description \(line):\(column): \(message)" }
}

/// A parsed interface description.
public struct VarlinkInterfaceDefinition: Sendable, Hashable {
    /// Reverse-domain interface name, e.g. `org.example.ftl`.
    public var name: String
    /// `type` declarations by name (each a `.struct` or `.enum`).
    public var types: [String: VarlinkType]
    /// Methods by (unqualified) name.
    public var methods: [String: VarlinkMethodDefinition]
    /// Errors by (unqualified) name.
    public var errors: [String: VarlinkErrorDefinition]
    /// Member names in declaration order.
    public var memberNames: [String]

    init(name: String) {
        self.name = name
        types = [:]
        methods = [:]
        errors = [:]
        memberNames = []
    }

    /// Parses and checks an interface description: syntax, name rules, unique member and
    /// field names, and that every named type is declared.
    public init(parsing text: String) throws(VarlinkIDLError) {
        var p = IDLParser(text: text)
        self = try p.parseInterface()
    }

    /// Checks `parameters` against `fields` (a method's input or output, or an error's
    /// parameters), following sd-varlink and python-varlink: every non-optional field must be
    /// present and not `null`, every value must match its type, and fields that are not
    /// declared are rejected. An `int` accepts a JSON number that is a whole number.
    /// - Returns: `nil` if valid, else the offending field as a dotted path
    ///   (`"name"`, `"filter.room"`, `"items[2].id"`).
    /// - Parameter allowUnknownFields: accept (and ignore) undeclared fields at every level
    ///   instead of rejecting them.
    public func firstInvalidField(_ parameters: [String: JSONValue], against fields: [VarlinkField], allowUnknownFields: Bool = false) -> String? {
        Validator(definition: self, allowUnknownFields: allowUnknownFields).validateFields(fields, parameters, path: "", depth: 0)
    }

    /// Validates a call's parameters against the input of method `method` (unqualified).
    /// - Throws: `MethodNotFound` if the method is not declared, `InvalidParameter` naming the field.
    public func validateCall(method: String, parameters: [String: JSONValue], allowUnknownFields: Bool = false) throws(VarlinkError) {
        guard let m = methods[method] else { throw .methodNotFound("\(name).\(method)") }
        if let bad = firstInvalidField(parameters, against: m.input, allowUnknownFields: allowUnknownFields) { throw .invalidParameter(bad) }
    }
}

private struct Validator {
    let definition: VarlinkInterfaceDefinition
    let allowUnknownFields: Bool
    var types: [String: VarlinkType] { definition.types }

    private func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    func validateFields(_ fields: [VarlinkField], _ object: [String: JSONValue], path: String, depth: Int) -> String? {
        for field in fields {
            let fieldPath = join(path, field.name)
            let value = object[field.name] ?? .null
            if value.isNull {
                if case .optional = field.type { continue }
                return fieldPath
            }
            if let bad = validate(value, field.type, path: fieldPath, depth: depth) { return bad }
        }
        for key in object.keys where !allowUnknownFields && !fields.contains(where: { $0.name == key }) {
            return join(path, key)
        }
        return nil
    }

    private func validate(_ value: JSONValue, _ type: VarlinkType, path: String, depth: Int) -> String? {
        if depth > 64 { return path }  // recursive named types against hostile input
        switch type {
        case .optional(let inner):
            return value.isNull ? nil : validate(value, inner, path: path, depth: depth)
        case .bool: return value.boolValue != nil ? nil : path
        case .int: return value.intValue != nil ? nil : path
        case .float: return value.doubleValue != nil ? nil : path
        case .string: return value.stringValue != nil ? nil : path
        case .object: return value.objectValue != nil ? nil : path
        case .named(let n):
            guard let t = types[n] else { return path }
            return validate(value, t, path: path, depth: depth + 1)
        case .struct(let fields):
            guard let o = value.objectValue else { return path }
            return validateFields(fields, o, path: path, depth: depth + 1)
        case .enum(let values):
            guard let s = value.stringValue, values.contains(s) else { return path }
            return nil
        case .array(let inner):
            guard let a = value.arrayValue else { return path }
            for (i, e) in a.enumerated() {
                if let bad = validate(e, inner, path: "\(path)[\(i)]", depth: depth + 1) { return bad }
            }
            return nil
        case .dictionary(let inner):
            guard let o = value.objectValue else { return path }
            for (k, e) in o {
                if let bad = validate(e, inner, path: join(path, k), depth: depth + 1) { return bad }
            }
            return nil
        }
    }
}

// MARK: - Lexer and parser

private enum Token: Equatable {
    case word(String)
    case punct(String)  // ( ) , : ? -> [] [string]
    case end
}

private struct IDLParser {
    let chars: [Unicode.Scalar]
    var pos = 0
    var line = 1
    var column = 1
    var tokenLine = 1
    var tokenColumn = 1

    init(text: String) { chars = Array(text.unicodeScalars) }

    func error(_ message: String) -> VarlinkIDLError {
        VarlinkIDLError(message: message, line: tokenLine, column: tokenColumn)
    }

    mutating func advance() {
        if chars[pos] == "\n" { line += 1; column = 1 } else { column += 1 }
        pos += 1
    }

    mutating func skipTrivia() {
        while pos < chars.count {
            let c = chars[pos]
            if c == " " || c == "\t" || c == "\r" || c == "\n" {
                advance()
            } else if c == "#" {
                while pos < chars.count, chars[pos] != "\n" { advance() }
            } else {
                return
            }
        }
    }

    static func isWordStart(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z")
    }

    static func isWordChar(_ c: Unicode.Scalar) -> Bool {
        isWordStart(c) || (c >= "0" && c <= "9") || c == "_" || c == "." || c == "-"
    }

    /// Reads the next token.
    mutating func next() throws(VarlinkIDLError) -> Token {
        skipTrivia()
        tokenLine = line
        tokenColumn = column
        guard pos < chars.count else { return .end }
        let c = chars[pos]
        if Self.isWordStart(c) {
            var s = ""
            while pos < chars.count, Self.isWordChar(chars[pos]) {
                if chars[pos] == "-", pos + 1 < chars.count, chars[pos + 1] == ">" { break }
                s.unicodeScalars.append(chars[pos])
                advance()
            }
            return .word(s)
        }
        switch c {
        case "(", ")", ",", ":", "?":
            advance()
            return .punct(String(c))
        case "-":
            advance()
            guard pos < chars.count, chars[pos] == ">" else { throw error("expected '->'") }
            advance()
            return .punct("->")
        case "[":
            advance()
            skipTrivia()
            if pos < chars.count, chars[pos] == "]" { advance(); return .punct("[]") }
            let save = (pos, line, column)
            var s = ""
            while pos < chars.count, Self.isWordChar(chars[pos]) { s.unicodeScalars.append(chars[pos]); advance() }
            skipTrivia()
            if s == "string", pos < chars.count, chars[pos] == "]" { advance(); return .punct("[string]") }
            (pos, line, column) = save
            throw error("expected '[]' or '[string]'")
        default:
            throw error("unexpected character '\(c)'")
        }
    }

    mutating func peek() throws(VarlinkIDLError) -> Token {
        let save = (pos, line, column, tokenLine, tokenColumn)
        let t = try next()
        (pos, line, column, tokenLine, tokenColumn) = save
        return t
    }

    mutating func expectPunct(_ p: String) throws(VarlinkIDLError) {
        let t = try next()
        guard t == .punct(p) else { throw error("expected '\(p)', found \(describe(t))") }
    }

    mutating func expectWord(_ what: String) throws(VarlinkIDLError) -> String {
        let t = try next()
        guard case .word(let w) = t else { throw error("expected \(what), found \(describe(t))") }
        return w
    }

    func describe(_ t: Token) -> String {
        switch t {
        case .word(let w): return "'\(w)'"
        case .punct(let p): return "'\(p)'"
        case .end: return "end of text"
        }
    }

    static func isInterfaceName(_ s: String) -> Bool {
        // As the reference implementations accept it (python-varlink's scanner, systemd's
        // io.systemd.* names): [A-Za-z]... segments of letters, digits and inner dashes.
        // [A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9]([-]*[A-Za-z0-9])*)+
        func isAlpha(_ c: Unicode.Scalar) -> Bool { (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") }
        func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return false }
        for (i, part) in parts.enumerated() {
            let scalars = Array(part.unicodeScalars)
            guard let first = scalars.first, let last = scalars.last else { return false }
            let firstOK = i == 0 ? isAlpha(first) : (isAlpha(first) || isDigit(first))
            guard firstOK, last != "-" else { return false }
            for c in scalars where !(isAlpha(c) || isDigit(c) || c == "-") { return false }
        }
        return true
    }

    static func isMemberName(_ s: String) -> Bool {
        // [A-Z][A-Za-z0-9]*
        let scalars = Array(s.unicodeScalars)
        guard let first = scalars.first, first >= "A" && first <= "Z" else { return false }
        return scalars.allSatisfy { ($0 >= "A" && $0 <= "Z") || ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") }
    }

    static func isFieldName(_ s: String) -> Bool {
        // [A-Za-z](_?[A-Za-z0-9])*
        let scalars = Array(s.unicodeScalars)
        guard let first = scalars.first, isWordStart(first), scalars.last != "_" else { return false }
        var previousUnderscore = false
        for c in scalars.dropFirst() {
            if c == "_" {
                if previousUnderscore { return false }
                previousUnderscore = true
            } else if isWordStart(c) || (c >= "0" && c <= "9") {
                previousUnderscore = false
            } else {
                return false
            }
        }
        return true
    }

    mutating func parseInterface() throws(VarlinkIDLError) -> VarlinkInterfaceDefinition {
        guard try next() == .word("interface") else { throw error("an interface description must start with 'interface <name>'") }
        let name = try expectWord("an interface name")
        guard Self.isInterfaceName(name) else { throw error("'\(name)' is not a valid interface name (reverse-domain, e.g. org.example.thing)") }
        var def = VarlinkInterfaceDefinition(name: name)
        var namedReferences: [(String, Int, Int)] = []
        func addMember(_ member: String, line: Int, column: Int) throws(VarlinkIDLError) {
            if def.memberNames.contains(member) {
                throw VarlinkIDLError(message: "'\(member)' is declared twice", line: line, column: column)
            }
            def.memberNames.append(member)
        }
        while true {
            let t = try next()
            let (kwLine, kwColumn) = (tokenLine, tokenColumn)
            switch t {
            case .end:
                for (ref, l, c) in namedReferences where def.types[ref] == nil {
                    throw VarlinkIDLError(message: "type '\(ref)' is not declared", line: l, column: c)
                }
                if def.memberNames.isEmpty { throw error("an interface needs at least one type, method or error") }
                return def
            case .word("type"):
                let member = try expectWord("a type name")
                guard Self.isMemberName(member) else { throw error("'\(member)' is not a valid type name (must start uppercase, then letters and digits)") }
                try addMember(member, line: kwLine, column: kwColumn)
                guard try peek() == .punct("(") else { throw error("expected '(' after 'type \(member)'") }
                def.types[member] = try parseType(&namedReferences)
            case .word("method"):
                let member = try expectWord("a method name")
                guard Self.isMemberName(member) else { throw error("'\(member)' is not a valid method name (must start uppercase, then letters and digits)") }
                try addMember(member, line: kwLine, column: kwColumn)
                let input = try parseStruct(&namedReferences, context: "input of \(member)")
                try expectPunct("->")
                let output = try parseStruct(&namedReferences, context: "output of \(member)")
                def.methods[member] = VarlinkMethodDefinition(name: member, input: input, output: output)
            case .word("error"):
                let member = try expectWord("an error name")
                guard Self.isMemberName(member) else { throw error("'\(member)' is not a valid error name (must start uppercase, then letters and digits)") }
                try addMember(member, line: kwLine, column: kwColumn)
                let params = try parseStruct(&namedReferences, context: "error \(member)")
                def.errors[member] = VarlinkErrorDefinition(name: member, parameters: params)
            default:
                throw error("expected 'type', 'method' or 'error', found \(describe(t))")
            }
        }
    }

    /// A `( field: type, ... )` list (struct only, as for method input/output and errors).
    mutating func parseStruct(_ refs: inout [(String, Int, Int)], context: String) throws(VarlinkIDLError) -> [VarlinkField] {
        guard try peek() == .punct("(") else {
            _ = try next()
            throw error("expected '(' for the \(context)")
        }
        let t = try parseType(&refs)
        switch t {
        case .struct(let fields): return fields
        case .enum: throw error("expected fields 'name: type' for the \(context), found an enum")
        default: throw error("expected '(' for the \(context)")
        }
    }

    mutating func parseType(_ refs: inout [(String, Int, Int)]) throws(VarlinkIDLError) -> VarlinkType {
        let t = try next()
        switch t {
        case .punct("?"):
            if try peek() == .punct("?") { _ = try next(); throw error("'??' is not a valid type") }
            return .optional(try parseType(&refs))
        case .punct("[]"):
            return .array(try parseType(&refs))
        case .punct("[string]"):
            return .dictionary(try parseType(&refs))
        case .punct("("):
            return try parseStructOrEnumBody(&refs)
        case .word("bool"): return .bool
        case .word("int"): return .int
        case .word("float"): return .float
        case .word("string"): return .string
        case .word("object"): return .object
        case .word(let w):
            guard Self.isMemberName(w) else { throw error("'\(w)' is not a type (expected bool, int, float, string, object, a type name, '(', '[]', '[string]' or '?')") }
            refs.append((w, tokenLine, tokenColumn))
            return .named(w)
        default:
            throw error("expected a type, found \(describe(t))")
        }
    }

    /// After '(' : `)` | `name: type, ...)` | `name, name ...)`.
    mutating func parseStructOrEnumBody(_ refs: inout [(String, Int, Int)]) throws(VarlinkIDLError) -> VarlinkType {
        if try peek() == .punct(")") { _ = try next(); return .struct([]) }
        var fields: [VarlinkField] = []
        var values: [String] = []
        var isEnum: Bool?
        while true {
            let name = try expectWord("a field name")
            guard Self.isFieldName(name) else { throw error("'\(name)' is not a valid field name (letters, digits, single '_' inside)") }
            if fields.contains(where: { $0.name == name }) || values.contains(name) {
                throw error("field '\(name)' appears twice")
            }
            let sep = try next()
            if sep == .punct(":") {
                if isEnum == true { throw error("cannot mix enum values and 'name: type' fields") }
                isEnum = false
                fields.append(VarlinkField(name: name, type: try parseType(&refs)))
                let after = try next()
                if after == .punct(")") { return .struct(fields) }
                guard after == .punct(",") else { throw error("expected ',' or ')', found \(describe(after))") }
            } else if sep == .punct(",") || sep == .punct(")") {
                if isEnum == false { throw error("expected ':' after field '\(name)'") }
                isEnum = true
                values.append(name)
                if sep == .punct(")") { return .enum(values) }
            } else {
                throw error("expected ':', ',' or ')' after '\(name)', found \(describe(sep))")
            }
            // The grammar has no trailing ',' before ')'.
            if try peek() == .punct(")") { throw error("trailing ',' before ')'") }
        }
    }
}
