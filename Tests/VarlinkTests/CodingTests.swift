import Testing
@testable import JSON
@testable import Varlink

struct Inner: Codable, Equatable {
    var id: Int
    var label: String?
}

struct Outer: Codable, Equatable {
    enum Kind: String, Codable { case alpha, beta }
    var name: String
    var kind: Kind
    var ratio: Double
    var flags: [Bool]
    var inner: Inner
    var items: [Inner]
    var tags: [String: Int]
    var optional: Int?
    var raw: JSONValue
}

struct Widths: Codable, Equatable {
    var i8: Int8, i16: Int16, i32: Int32, i64: Int64, i: Int
    var u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, u: UInt
    var f: Float
}

@Suite struct CodingTests {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()

    let sample = Outer(
        name: "n", kind: .beta, ratio: 0.25, flags: [true, false],
        inner: Inner(id: 1, label: nil), items: [Inner(id: 2, label: "two"), Inner(id: 3, label: nil)],
        tags: ["x": 1, "y": 2], optional: nil, raw: ["any": [1, "thing"]])

    @Test func encodesToExpectedJSON() throws {
        let json = try encoder.encode(sample)
        #expect(json == [
            "name": "n", "kind": "beta", "ratio": 0.25, "flags": [true, false],
            "inner": ["id": 1], "items": [["id": 2, "label": "two"], ["id": 3]],
            "tags": ["x": 1, "y": 2], "raw": ["any": [1, "thing"]],
        ])
    }

    @Test func roundTrip() throws {
        let json = try encoder.encode(sample)
        #expect(try decoder.decode(Outer.self, from: json) == sample)
        // Through text too.
        let reparsed = try JSONValue(parsing: json.serialized())
        #expect(try decoder.decode(Outer.self, from: reparsed) == sample)
    }

    @Test func integerWidthsRoundTrip() throws {
        let extremes = [
            Widths(i8: .min, i16: .min, i32: .min, i64: .min, i: .min, u8: 0, u16: 0, u32: 0, u64: 0, u: 0, f: -1.5),
            Widths(i8: .max, i16: .max, i32: .max, i64: .max, i: .max, u8: .max, u16: .max, u32: .max,
                   u64: UInt64(Int64.max), u: UInt(Int64.max), f: 3.25),
        ]
        for w in extremes {
            let json = try JSONValue(parsing: try encoder.encode(w).serialized())
            #expect(try decoder.decode(Widths.self, from: json) == w)
        }
    }

    @Test func unsignedAboveInt64IsRefused() {
        #expect(throws: EncodingError.self) { try encoder.encode(["big": UInt64.max]) }
    }

    @Test func integersInArraysKeepTheirValuesAndARefusalNamesItsPlace() throws {
        #expect(try encoder.encode([Int8.min, 0, Int8.max]) == [-128, 0, 127])
        #expect(try encoder.encode([UInt32.max]) == [.int(Int64(UInt32.max))])
        #expect(try encoder.encode([Int.min]) == [.int(Int64.min)])
        #expect(try encoder.encode([UInt(Int64.max)]) == [.int(Int64.max)])
        do {
            _ = try encoder.encode(["a": [UInt64(1), UInt64.max]])
            Issue.record("UInt64.max was encoded")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["a", "1"])
        }
        do {
            _ = try encoder.encode(["b": UInt.max])
            Issue.record("UInt.max was encoded")
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["b"])
        }
    }

    @Test func integersFromDoubles() throws {
        #expect(try decoder.decode(Int.self, from: .double(3.0)) == 3)
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .double(3.5)) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt8.self, from: .int(256)) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt8.self, from: .int(-1)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .string("3")) }
        #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: .int(1)) }
        #expect(try decoder.decode(Double.self, from: .int(2)) == 2.0)
    }

    func failurePath<T: Decodable>(_ type: T.Type, _ json: JSONValue) -> String? {
        do {
            _ = try decoder.decode(type, from: json)
            return nil
        } catch let error as DecodingError {
            return JSONValueDecoder.fieldPath(of: error)
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test func errorsNameTheField() throws {
        var json = try encoder.encode(sample).objectValue!
        json["name"] = 5
        #expect(failurePath(Outer.self, .object(json)) == "name")

        json = try encoder.encode(sample).objectValue!
        json.removeValue(forKey: "ratio")
        #expect(failurePath(Outer.self, .object(json)) == "ratio")

        json = try encoder.encode(sample).objectValue!
        json["inner"] = ["id": "x"]
        #expect(failurePath(Outer.self, .object(json)) == "inner.id")

        json = try encoder.encode(sample).objectValue!
        json["items"] = [["id": 1], ["id": 2.5]]
        #expect(failurePath(Outer.self, .object(json)) == "items[1].id")

        json = try encoder.encode(sample).objectValue!
        json["kind"] = "gamma"
        #expect(failurePath(Outer.self, .object(json)) == "kind")

        json = try encoder.encode(sample).objectValue!
        json["tags"] = ["x": true]
        #expect(failurePath(Outer.self, .object(json)) == "tags.x")

        json = try encoder.encode(sample).objectValue!
        json["name"] = nil
        json["name"] = .null
        #expect(failurePath(Outer.self, .object(json)) == "name")

        let error = VarlinkError.invalidParameter(DecodingError.keyNotFound(
            AnyKey(stringValue: "room"), .init(codingPath: [AnyKey(stringValue: "filter")], debugDescription: "")))
        #expect(error.invalidParameterName == "filter.room")
    }

    @Test func nullDecodesAsNilOptional() throws {
        let v = try decoder.decode(Inner.self, from: ["id": 1, "label": nil])
        #expect(v == Inner(id: 1, label: nil))
    }

    @Test func encodeObjectRejectsNonObjects() {
        #expect(throws: EncodingError.self) { try encoder.encodeObject([1, 2]) }
        #expect(throws: Never.self) { try encoder.encodeObject(Inner(id: 1, label: nil)) }
    }
}
