import Testing
@testable import Varlink

@Suite struct IDLTests {
    @Test func parsesServiceInterface() throws {
        let def = try VarlinkInterfaceDefinition(parsing: VarlinkService.serviceInterfaceDescription)
        #expect(def.name == "org.varlink.service")
        #expect(Set(def.methods.keys) == ["GetInfo", "GetInterfaceDescription"])
        #expect(def.methods["GetInfo"]?.input == [])
        #expect(def.methods["GetInfo"]?.output.map(\.name) == ["vendor", "product", "version", "url", "interfaces"])
        #expect(def.methods["GetInfo"]?.output.last?.type == .array(.string))
        #expect(def.methods["GetInterfaceDescription"]?.input == [VarlinkField(name: "interface", type: .string)])
        #expect(Set(def.errors.keys) == ["InterfaceNotFound", "MethodNotFound", "MethodNotImplemented", "InvalidParameter",
                                         "PermissionDenied", "ExpectedMore", "InternalError"])
        #expect(def.errors["PermissionDenied"]?.parameters == [])
    }

    @Test func parsesRealisticInterface() throws {
        let def = try VarlinkInterfaceDefinition(parsing: TestInterface(probe: Probe()).interfaceDescription)
        #expect(def.name == "org.example.test")
        #expect(def.memberNames.first == "Address")
        #expect(def.types["Address"] == .struct([
            VarlinkField(name: "street", type: .string), VarlinkField(name: "zip", type: .optional(.int)),
        ]))
        guard case .struct(let person)? = def.types["Person"] else { Issue.record("Person"); return }
        let types = Dictionary(uniqueKeysWithValues: person.map { ($0.name, $0.type) })
        #expect(types["kind"] == .enum(["staff", "student", "guest"]))
        #expect(types["addresses"] == .array(.named("Address")))
        #expect(types["labels"] == .dictionary(.string))
        #expect(types["extra"] == .optional(.object))
        #expect(types["scores"] == .optional(.array(.float)))
        #expect(def.methods["Echo"]?.output.map(\.name) == ["person", "note"])
        #expect(def.errors["Custom"]?.parameters == [VarlinkField(name: "reason", type: .string)])
    }

    @Test func specExampleTypes() throws {
        let text = """
            interface org.example.types
            type MyOtherType ()
            type MyType (
               example_bool: bool,
               example_int: int,
               example_float: float,
               example_string: string,
               example_object: object,
               example_enum: (one, two, three),
               example_struct: (first: int, second: string),
               example_array: []string,
               example_dictionary: [string]string,
               example_stringset: [string](),
               example_nullable: ?string,
               example_nullable_array_struct: ?[](first: int, second: string),
               example_other_type: MyOtherType,
               nested: [][string]?[]int
            )
            method Foo(a: int, b: MyType) -> (bar: MyOtherType, baz: float, more: (i: int, f: float, s: string))
            error UnknownAction(action: string, more_data: MyType)
            """
        let def = try VarlinkInterfaceDefinition(parsing: text)
        guard case .struct(let fields)? = def.types["MyType"] else { Issue.record("MyType"); return }
        let types = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.type) })
        #expect(types["example_stringset"] == .dictionary(.struct([])))
        #expect(types["example_nullable_array_struct"] == .optional(.array(.struct([
            VarlinkField(name: "first", type: .int), VarlinkField(name: "second", type: .string)]))))
        #expect(types["nested"] == .array(.dictionary(.optional(.array(.int)))))
        #expect(def.methods["Foo"] != nil)
    }

    @Test(arguments: [
        ("", 1),
        ("# only a comment\n", 2),
        ("interface org.example.x", 1),                                    // no members
        ("interface Org.example.x\nmethod A() -> ()", 1),                 // uppercase interface
        ("interface orgexample\nmethod A() -> ()", 1),                    // no dot
        ("interface org.example.x\nmethod a() -> ()", 2),                 // lowercase method
        ("interface org.example.x\nmethod A() -> ()\nmethod A() -> ()", 3),  // duplicate
        ("interface org.example.x\nmethod A(x: int -> ()", 2),             // missing ')'
        ("interface org.example.x\nmethod A(x: int) ()", 2),               // missing '->'
        ("interface org.example.x\nmethod A(x: Unknown) -> ()", 2),        // undeclared type
        ("interface org.example.x\ntype T (a: int, a: string)", 2),        // duplicate field
        ("interface org.example.x\ntype T (a, b: int)", 2),                // mixed enum/struct
        ("interface org.example.x\ntype T (a: ??int)", 2),                 // double optional
        ("interface org.example.x\ntype T (a: int,)", 2),                  // trailing comma
        ("interface org.example.x\ntype T (_a: int)", 2),                  // bad field name
        ("interface org.example.x\ntype T (a__b: int)", 2),                // bad field name
        ("interface org.example.x\ntype T (a: [int]string)", 2),           // only [string] maps
        ("interface org.example.x\nfoo Bar()", 2),                         // unknown keyword
        ("interface org.example.x\nmethod A() -> ()\n$", 3),              // junk
    ])
    func syntaxErrors(_ text: String, _ line: Int) {
        do {
            _ = try VarlinkInterfaceDefinition(parsing: text)
            Issue.record("expected a syntax error for: \(text)")
        } catch {
            #expect(error.line == line, "\(error)")
        }
    }

    @Test func validation() throws {
        let def = try VarlinkInterfaceDefinition(parsing: TestInterface(probe: Probe()).interfaceDescription)
        func check(_ params: [String: JSONValue]) -> String? {
            def.firstInvalidField(params, against: def.methods["Echo"]!.input)
        }
        #expect(check(["person": validPerson]) == nil)
        #expect(check(["person": validPerson, "note": nil]) == nil)
        #expect(check([:]) == "person")
        #expect(check(["person": nil]) == "person")
        #expect(check(["person": validPerson, "note": 5]) == "note")
        #expect(check(["person": validPerson, "bogus": 1]) == "bogus")

        func withPerson(_ key: String, _ value: JSONValue?) -> [String: JSONValue] {
            var p = validPerson.objectValue!
            p[key] = value
            return ["person": .object(p)]
        }
        #expect(check(withPerson("age", "36")) == "person.age")
        #expect(check(withPerson("age", 36.0)) == nil)   // whole number accepted as int
        #expect(check(withPerson("age", 36.5)) == "person.age")
        #expect(check(withPerson("name", nil)) == "person.name")
        #expect(check(withPerson("kind", "alien")) == "person.kind")
        #expect(check(withPerson("addresses", [["street": 1]])) == "person.addresses[0].street")
        #expect(check(withPerson("addresses", [["street": "x", "zip": "y"]])) == "person.addresses[0].zip")
        #expect(check(withPerson("labels", ["a": 1])) == "person.labels.a")
        #expect(check(withPerson("extra", [1])) == "person.extra")
        #expect(check(withPerson("extra", ["free": ["form": true]])) == nil)
        #expect(check(withPerson("scores", [1, 2.5])) == nil)
        #expect(check(withPerson("scores", [1, "x"])) == "person.scores[1]")
        #expect(check(withPerson("unknown", 1)) == "person.unknown")

        #expect(throws: VarlinkError.methodNotFound("org.example.test.Nope")) {
            try def.validateCall(method: "Nope", parameters: [:])
        }
    }
}
