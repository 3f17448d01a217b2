import Foundation
import Lending
import Testing

@Suite("CSV reader and import lines")
struct ImportTests {
    @Test func quotedFieldsLineBreaksInsideThemAndABOM() throws {
        let text = "\u{FEFF}id,name,note\r\n1,\"Tanaka, \"\"Ken\"\"\",\"two\nlines\"\r\n\r\n2,Plain,\n3,\"\",last"
        let table = try CSVReader.parse(text)
        #expect(table.header == ["id", "name", "note"])
        #expect(table.records.map(\.fields) == [["1", "Tanaka, \"Ken\"", "two\nlines"], ["2", "Plain", ""], ["3", "", "last"]])
        #expect(table.records.map(\.line) == [2, 5, 6])  // the line each record starts on; blank line 4 skipped
        #expect(try CSVReader.parse("a\rb\r").records.map(\.fields) == [["b"]])  // CR line ends
    }

    @Test func malformedQuotesNameTheLine() {
        #expect(throws: CSVReader.Failure.unterminatedQuote(line: 3)) { try CSVReader.parse("a,b\n1,2\n3,\"open\n\n") }
        #expect(throws: CSVReader.Failure.strayQuote(line: 2)) { try CSVReader.parse("a,b\n1,x\"y\n") }
        #expect(throws: CSVReader.Failure.strayQuote(line: 2)) { try CSVReader.parse("a,b\n\"1\"x,2\n") }
        #expect(throws: CSVReader.Failure.empty) { try CSVReader.parse("\u{FEFF}") }
    }

    @Test func everyBadLineIsReportedWithItsNumber() {
        let csv = """
            id,group_id,model,status,note
            D-1,iphone,iPhone 15,normal,"spare, boxed"
            D 2,iphone,iPhone 15,,
            D-3,iphone,,,
            D-4,iphone,Pixel,lost,
            D-1,ipad,iPad,,
            D-5,ipad,iPad
            D-6,ipad,iPad,broken,
            """
        let (lines, problems) = InventoryImport.read(.devices, csv: csv, at: Date(timeIntervalSince1970: 0))
        #expect(lines.map(\.line) == [2, 8] && lines.map(\.item.id) == ["D-1", "D-6"])
        if case .device(let d) = lines.first?.item { #expect(d.note == "spare, boxed" && d.groupId == "iphone") }
        #expect(problems.map(\.line) == [3, 4, 5, 6, 7])
        #expect(problems[0].reason.contains("idCharacters"))
        #expect(problems[1].reason.contains("blankName"))
        #expect(problems[2].reason.contains("normal, broken, disposed"))
        #expect(problems[3].reason.contains("already on line 2"))
        #expect(problems[4].reason.contains("3 fields"))
    }

    /// Issue 32: the user import suggested "e.g. D-0001" for a user ID.
    @Test func aBadIDSuggestsAnIDOfItsOwnKind() {
        let users = InventoryImport.read(.users, csv: "id,name\nU 1,Ada\n", at: Date()).problems
        #expect(users.count == 1 && users[0].reason.contains("e.g. U-0001") && !users[0].reason.contains("D-0001"))
        let devices = InventoryImport.read(.devices, csv: "id,group_id,model\nD 1,iphone,X\n", at: Date()).problems
        #expect(devices.count == 1 && devices[0].reason.contains("e.g. D-0001"))
    }

    @Test func theHeaderIsChecked() {
        let (lines, problems) = InventoryImport.read(.users, csv: "id,nmae\nU-1,Ada\n", at: Date())
        #expect(lines.isEmpty && problems.count == 1 && problems[0].line == 1)
        #expect(problems[0].reason.contains("missing column name") && problems[0].reason.contains("unknown column nmae"))
        let badges = InventoryImport.read(.badges, csv: "Identifier,USER_ID,kind\n04:a1:b2:c3,U-1,\n01020304050607,U-2,felica\nzz,U-1,\n", at: Date())
        #expect(badges.lines.map(\.item.id) == ["04A1B2C3"])
        #expect(badges.problems.map(\.line) == [3, 4])  // a FeliCa IDm has 8 bytes; zz is not hex
    }

    @Test func aStoredRecordKeepsItsRegistrationAndOnlyRealChangesUpdateIt() {
        let t0 = Date(timeIntervalSince1970: 1_700_000_000), t1 = t0.addingTimeInterval(3600)
        let old = User(id: "U-1", name: "Aiko", registeredAt: t0)
        #expect(ImportMerge.user(User(id: "U-1", name: "Aiko", registeredAt: t1), onto: old) == nil)
        #expect(ImportMerge.user(User(id: "U-1", name: "Aiko T", registeredAt: t1), onto: old)
                == User(id: "U-1", name: "Aiko T", registeredAt: t0))
        var device = Device(id: "D-1", groupId: "g", model: "M", serialNumber: "S", osVersion: "1", status: .normal,
                            connectorType: "USB-C", registeredAt: t0, note: nil)
        device.isNFCRegistered = true
        var line = device
        line.registeredAt = t1
        line.isNFCRegistered = false
        #expect(ImportMerge.device(line, onto: device) == nil, "a line cannot unregister a tag")
        line.model = "M2"
        #expect(ImportMerge.device(line, onto: device)?.isNFCRegistered == true)
    }

    @Test func anImportCommitsOnlyWhenItShould() {
        var clean = ImportReport()
        let cleanCommits = clean.finish(dryRun: false, partial: false)
        #expect(cleanCommits && clean.written)
        var dry = ImportReport()
        let dryCommits = dry.finish(dryRun: true, partial: true)
        #expect(!dryCommits && !dry.written)
        var bad = ImportReport(problems: [ImportProblem(line: 5, reason: "b")])
        bad.refused(ImportLine(line: 3, item: .user(User(id: "U", name: "x", registeredAt: .now))), .noSuchUser("U-9"))
        let allOrNothing = bad.finish(dryRun: false, partial: false)
        #expect(!allOrNothing)
        #expect(bad.problems.map(\.line) == [3, 5])
        let partial = bad.finish(dryRun: false, partial: true)
        #expect(partial)
    }
}
