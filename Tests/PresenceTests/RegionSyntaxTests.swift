import Foundation
import Presence
import Testing

@Suite struct RegionSyntaxTests {
    let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func entriesParseWithOptionalMajorMinorAndWhoTheyStandFor() throws {
        #expect(try Region(parsing: "alice=\(uuid.uuidString) user=u-alice")
                == Region(name: "alice", uuid: uuid, userId: "u-alice"))
        #expect(try Region(parsing: "kit=\(uuid.uuidString)/7 device=D-0042")
                == Region(name: "kit", uuid: uuid, major: 7, deviceId: "D-0042"))
        #expect(try Region(parsing: "tag=\(uuid.uuidString)/7/9") == Region(name: "tag", uuid: uuid, major: 7, minor: 9))
        #expect(try Region(parsing: "any=\(uuid.uuidString)//9") == Region(name: "any", uuid: uuid, minor: 9))
    }

    @Test func anEntryRoundTripsThroughItsConfigurationText() throws {
        let r = Region(name: "kit", uuid: uuid, major: 7, minor: 1, deviceId: "D-0042")
        #expect(try Region(parsing: r.configurationEntry) == r)
    }

    @Test(arguments: ["alice", "=\("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")", "alice=not-a-uuid",
                      "alice=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/70000", "alice=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 pet=cat",
                      "alice=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2/3"])
    func badEntriesAreRefusedWithTheEntryNamed(_ entry: String) {
        #expect(throws: RegionSyntaxError.self) { try Region(parsing: entry) }
    }
}
