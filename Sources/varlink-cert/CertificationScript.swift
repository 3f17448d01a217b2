import Varlink

/// The Varlink project's conformance test, `org.varlink.certification`, as both sides run it.
///
/// A client calls Start, Test01 … Test11 and End in that order on one connection; each call's
/// parameters are `client_id` plus the previous call's reply. The expected values and the
/// rules are those of the reference implementations: python-varlink's
/// `varlink/tests/test_certification.py` (`CertService`, `run_client`) and varlink-go's
/// `cmd/varlink-go-certification/main.go` (`run_client`, `test.Test01` … `test.End`).
/// Test10 is called with `more` and answers ten replies; Test11 is `oneway`.
enum CertificationScript {
    static let interfaceName = "org.varlink.certification"

    /// The interface description, verbatim from varlink-go's
    /// `cmd/varlink-go-certification/orgvarlinkcertification/org.varlink.certification.varlink`
    /// (identical to python-varlink's `varlink/tests/org.varlink.certification.varlink`).
    static let idl = """
        # Interface to test varlink implementations against.
        # First you write a varlink client calling:
        # Start, Test01, Test02, …, Test09, End
        # The return value of the previous call should be the argument of the next call.
        # Then you test this client against well known servers like python or rust from
        # https://github.com/varlink/
        #
        # Next you write a varlink server providing the same service as the well known ones.
        # Now run your client against it and run well known clients like python or rust
        # from https://github.com/varlink/ against your server. If all works out, then
        # your new language bindings should be varlink certified.
        interface org.varlink.certification

        type Interface (
          foo: ?[]?[string](foo, bar, baz),
          anon: (foo: bool, bar: bool)
        )

        type MyType (
          object: object,
          enum: (one, two, three),
          struct: (first: int, second: string),
          array: []string,
          dictionary: [string]string,
          stringset: [string](),
          nullable: ?string,
          nullable_array_struct: ?[](first: int, second: string),
          interface: Interface
        )

        method Start() -> (client_id: string)

        method Test01(client_id: string) -> (bool: bool)

        method Test02(client_id: string, bool: bool) -> (int: int)

        method Test03(client_id: string, int: int) -> (float: float)

        method Test04(client_id: string, float: float) -> (string: string)

        method Test05(client_id: string, string: string) -> (
          bool: bool,
          int: int,
          float: float,
          string: string
        )

        method Test06(
          client_id: string,
          bool: bool,
          int: int,
          float: float,
          string: string
        ) -> (
          struct: (
            bool: bool,
            int: int,
            float: float,
            string: string
          )
        )

        method Test07(
          client_id: string,
          struct: (
            bool: bool,
            int: int,
            float: float,
            string: string
          )
        ) -> (map: [string]string)

        method Test08(client_id: string, map: [string]string) -> (set: [string]())

        method Test09(client_id: string, set: [string]()) -> (mytype: MyType)

        # returns more than one reply with "continues"
        method Test10(client_id: string, mytype: MyType) -> (string: string)

        method Test11(
          client_id: string,
          last_more_replies: []string
        ) -> ()

        method End(client_id: string) -> (all_ok: bool)

        error ClientIdError ()

        error CertificationError (wants: object, got: object)

        """

    /// The methods in the order a client must call them.
    static let order = ["Start", "Test01", "Test02", "Test03", "Test04", "Test05", "Test06",
                        "Test07", "Test08", "Test09", "Test10", "Test11", "End"]

    /// The method a client must call after `method` (`nil` after End).
    static func method(after method: String) -> String? {
        guard let i = order.firstIndex(of: method), i + 1 < order.count else { return nil }
        return order[i + 1]
    }

    static let pi = 3.141592653589793
    static let fourValues: [String: JSONValue] = [
        "bool": false, "int": 2, "float": .double(pi), "string": "a lot of string",
    ]
    static let stringSet: JSONValue = ["one": [:], "two": [:], "three": [:]]

    /// The reference's `MyType` value (python-varlink's `CertService.Test09`).
    static let myType: JSONValue = [
        "object": ["method": "org.varlink.certification.Test09",
                   "parameters": ["map": ["foo": "Foo", "bar": "Bar"]]],
        "enum": "two",
        "struct": ["first": 1, "second": "2"],
        "array": ["one", "two", "three"],
        "dictionary": ["foo": "Foo", "bar": "Bar"],
        "stringset": stringSet,
        "nullable": nil,
        "nullable_array_struct": nil,
        "interface": [
            "foo": [nil, ["foo": "foo", "bar": "bar"], nil, ["one": "foo", "two": "bar"]],
            "anon": ["foo": true, "bar": false],
        ],
    ]

    static let moreReplies: [String] = (1...10).map { "Reply number \($0)" }

    /// The reply a server gives to `method` (for Test10: the final one of its ten; Start's
    /// `client_id` is the server's choice).
    static func reply(to method: String) -> [String: JSONValue] {
        switch method {
        case "Test01": return ["bool": true]
        case "Test02": return ["int": 1]
        case "Test03": return ["float": 1.0]
        case "Test04": return ["string": "ping"]
        case "Test05": return fourValues
        case "Test06": return ["struct": .object(fourValues)]
        case "Test07": return ["map": ["foo": "Foo", "bar": "Bar"]]
        case "Test08": return ["set": stringSet]
        case "Test09": return ["mytype": myType]
        case "Test10": return ["string": .string(moreReplies[9])]
        case "End": return ["all_ok": true]
        default: return [:]
        }
    }

    /// The whole call a correct client sends for `method`: the previous reply plus `client_id`,
    /// with the flags the reference client sets.
    static func expectedCall(_ method: String, clientID: String) -> VarlinkCall {
        let qualified = "\(interfaceName).\(method)"
        switch method {
        case "Start": return VarlinkCall(method: qualified)
        case "Test01", "End": return VarlinkCall(method: qualified, parameters: ["client_id": .string(clientID)])
        case "Test11":
            return VarlinkCall(method: qualified, parameters: [
                "client_id": .string(clientID), "last_more_replies": .array(moreReplies.map { .string($0) }),
            ], oneway: true)
        default:
            let previous = order[order.firstIndex(of: method)! - 1]
            var parameters = reply(to: previous)
            parameters["client_id"] = .string(clientID)
            return VarlinkCall(method: qualified, parameters: parameters, more: method == "Test10")
        }
    }

    /// JSON equality as the reference implementations compare: numbers by value (`1` equals
    /// `1.0`; Go writes the float 1.0 as `1`), and an object member that is `null` counts as
    /// absent (the IDL's optional fields).
    static func equivalent(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x == y
        case (.int, .double), (.double, .int), (.double, .double): return a.doubleValue == b.doubleValue
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equivalent($0, $1) }
        case (.object(let x), .object(let y)):
            let x = x.filter { !$0.value.isNull }, y = y.filter { !$0.value.isNull }
            return Set(x.keys) == Set(y.keys) && x.allSatisfy { equivalent($0.value, y[$0.key]!) }
        default: return a == b
        }
    }

    /// `true` if `call` is `expected`: the same method, flags and parameters (see ``equivalent(_:_:)``).
    static func matches(_ call: VarlinkCall, _ expected: VarlinkCall) -> Bool {
        call.method == expected.method && call.more == expected.more && call.oneway == expected.oneway
            && call.upgrade == expected.upgrade
            && equivalent(.object(call.parameters), .object(expected.parameters))
    }
}
