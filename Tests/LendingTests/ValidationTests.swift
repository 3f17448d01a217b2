import Foundation
import Lending
import Testing

extension LendingError {
    /// The validation rule this error names, if any.
    var rule: ValidationRule? {
        if case .ruleViolated(let rule, _, _) = self { return rule }
        return nil
    }
}

func violatedRule(_ body: () throws -> Void) -> ValidationRule? {
    do {
        try body()
        return nil
    } catch let error as LendingError {
        return error.rule
    } catch {
        Issue.record("unexpected \(error)")
        return nil
    }
}

@Suite("Validation rules (named in the error)")
struct ValidationTests {
    @Test(arguments: [
        ("", ValidationRule.idCharacters), ("D 0001", .idCharacters), (" D-1", .idCharacters), ("D-1\t", .idCharacters),
        ("D-\u{7}", .idCharacters), ("D\u{A0}1", .idCharacters), (String(repeating: "x", count: 65), .idTooLong),
    ])
    func badIDs(_ id: String, _ rule: ValidationRule) {
        #expect(violatedRule { try Validation.id(id, field: "device ID") } == rule)
    }

    @Test(arguments: ["D-0001", "U_17", "iphone", "端末-1", String(repeating: "x", count: 64)])
    func goodIDs(_ id: String) {
        #expect(violatedRule { try Validation.id(id, field: "device ID") } == nil)
    }

    @Test(arguments: [
        ("", ValidationRule.blankName), ("   ", .blankName), ("\u{3000}", .blankName),
        (String(repeating: "n", count: 201), .nameTooLong),
    ])
    func badNames(_ name: String, _ rule: ValidationRule) {
        #expect(violatedRule { try Validation.name(name, field: "name") } == rule)
    }

    @Test func aNameOf200CharactersIsFine() {
        #expect(violatedRule { try Validation.name(String(repeating: "山", count: 200), field: "name") } == nil)
    }

    @Test func anUnknownStatusListsTheAllowedOnes() {
        do throws(LendingError) {
            _ = try Validation.status("broke")
            Issue.record("accepted 'broke'")
        } catch {
            #expect(error.rule == .unknownStatus)
            #expect(error.description.contains("normal, broken, disposed"))
            #expect(error.description.contains("unknownStatus"))
        }
        #expect(violatedRule { _ = try Validation.status("broken") } == nil)
    }

    @Test func anIDDifferingOnlyInCaseNamesTheExistingOne() {
        do throws(LendingError) {
            try Validation.caseCollision("d-0001", existing: "D-0001", field: "device ID")
            Issue.record("accepted d-0001 next to D-0001")
        } catch {
            #expect(error.rule == .idCaseCollision && error.description.contains("D-0001"))
        }
        #expect(violatedRule { try Validation.caseCollision("D-0002", existing: nil, field: "device ID") } == nil)
    }

    @Test func devicesUsersAndGroups() {
        let t = Date(timeIntervalSince1970: 0)
        #expect(violatedRule { try Validation.device(Device(id: "D-1", groupId: "iphone", model: " ", registeredAt: t), isNew: true) } == .blankName)
        #expect(violatedRule { try Validation.device(Device(id: "D 1", groupId: "iphone", model: "M", registeredAt: t), isNew: true) } == .idCharacters)
        // An existing device's ID is not checked again (it may predate the rules).
        #expect(violatedRule { try Validation.device(Device(id: "D 1", groupId: "iphone", model: "M", registeredAt: t), isNew: false) } == nil)
        #expect(violatedRule { try Validation.user(User(id: "U-1", name: " \u{3000} ", registeredAt: t), isNew: true) } == .blankName)
        #expect(violatedRule { try Validation.group(DeviceGroup(id: "e reader", name: "E-reader"), isNew: true) } == .idCharacters)
    }
}
