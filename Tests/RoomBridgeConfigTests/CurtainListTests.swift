import Foundation
import RoomBridgeCore
import Testing
@testable import RoomBridgeConfig

/// Several curtains: `[curtains.NAME]` tables, the single-curtain keys they replace, and what is refused.
@Suite struct CurtainListTests {
    private func load(_ toml: String?, _ args: [String] = []) throws(ConfigError) -> DaemonConfig {
        try DaemonCommandLine(arguments: args).load(readFile: { _ in toml })
    }

    static let pair = """
        [curtain]
        adapter = "hci1"

        [curtains.right]
        address = "c4:7c:8d:6a:3e:22"
        profile = "switchbot"
        password_file = "/etc/roombridge/right.password"

        [curtains.left]
        address = "C4:7C:8D:6A:3E:21"
        profile = "am43"
        pin_file = "/etc/roombridge/left.pin"
        """

    @Test func tablesNameEachCurtainSortedByName() throws {
        let c = try load(Self.pair)
        #expect(CurtainEntry.all(in: c) == [
            CurtainEntry(name: "left", address: "C4:7C:8D:6A:3E:21", profile: "am43", pinFile: "/etc/roombridge/left.pin"),
            CurtainEntry(name: "right", address: "C4:7C:8D:6A:3E:22", profile: "switchbot",
                         passwordFile: "/etc/roombridge/right.password"),
        ])
        #expect(c[.curtainAdapter] == "hci1")
        // curtain.enabled = false still turns every curtain off.
        #expect(CurtainEntry.all(in: try load(Self.pair, ["--no-curtain-enabled"])) == [])
    }

    @Test func theSingleCurtainKeysMeanOneCurtainNamedCurtain() throws {
        #expect(CurtainEntry.all(in: try load(nil)) == [CurtainEntry(name: "curtain")])
        let c = try load("[curtain]\naddress = \"C4:7C:8D:6A:3E:21\"\nprofile = \"switchbot\"\n")
        #expect(CurtainEntry.all(in: c) == [CurtainEntry(name: "curtain", address: "C4:7C:8D:6A:3E:21", profile: "switchbot")])
    }

    @Test func oneTableMayLeaveTheAddressOut() throws {
        #expect(CurtainEntry.all(in: try load("[curtains.window]\nprofile = \"switchbot\"\n"))
                == [CurtainEntry(name: "window", profile: "switchbot")])
    }

    @Test(arguments: [
        // Two curtains, one controller.
        ("[curtains.a]\naddress = \"C4:7C:8D:6A:3E:21\"\n[curtains.b]\naddress = \"c4:7c:8d:6a:3e:21\"\n",
         "[curtains.a] and [curtains.b] both have address C4:7C:8D:6A:3E:21"),
        // The same name twice is a TOML error, reported with its line.
        ("[curtains.a]\naddress = \"C4:7C:8D:6A:3E:21\"\n[curtains.a]\naddress = \"C4:7C:8D:6A:3E:22\"\n", "test.toml:3"),
        ("[curtains.a]\nprofile = \"am43\"\n[curtains.b]\naddress = \"C4:7C:8D:6A:3E:22\"\n",
         "[curtains.a] has no address; with several curtains each needs its own"),
        ("[curtain]\naddress = \"C4:7C:8D:6A:3E:21\"\n[curtains.b]\naddress = \"C4:7C:8D:6A:3E:22\"\n",
         "curtain.address describes the single curtain"),
        ("[curtains.a]\npassword = \"x\"\n", "keep the password out of the configuration"),
        ("[curtains.a]\nspeed = \"slow\"\n", "test.toml:2: unknown key curtains.a.speed; known keys here: address, profile"),
        ("[curtains.a]\nprofile = \"somfy\"\n", "curtains.a.profile must be roombridge, switchbot or am43"),
        ("[curtains.a]\naddress = \"left window\"\n", "is not a Bluetooth address"),
        ("[curtains.Left]\n", "curtain name \"Left\" must be 1 to 32 lower-case letters"),
        ("[curtains.a]\npin_file = \"left.pin\"\n", "curtains.a.pin_file must be an absolute path"),
        ("curtains = 3\n", "curtains must be tables, one per curtain"),
    ])
    func badListsAreRefusedWithTheFix(toml: String, message: String) {
        #expect {
            _ = try DaemonCommandLine(arguments: []).load(readFile: { _ in toml }).curtains
        } throws: { error in
            let text = "\(error)".replacingOccurrences(of: DaemonCommandLine.defaultConfigPath, with: "test.toml")
            return text.contains(message)
        }
    }

    @Test func aFlagForTheSingleCurtainCannotBeMixedWithTables() {
        #expect(throws: ConfigError.self) {
            try load("[curtains.a]\naddress = \"C4:7C:8D:6A:3E:21\"\n", ["--curtain-profile", "switchbot"])
        }
    }

    @Test func aChangedListIsReloadableAndPrintedBack() throws {
        let old = try load(Self.pair)
        let new = try load(Self.pair.replacingOccurrences(of: "[curtains.right]", with: "[curtains.middle]"))
        #expect(new.changedKeys(since: old) == ["curtains"])
        #expect(DaemonConfig.isReloadable("curtains"))
        #expect(try new.describe("curtains") == "[left, middle]")
        var effective = old
        try effective.adopt("curtains", from: new)
        #expect(effective == new)
        var again = DaemonConfig()
        try again.apply(toml: old.renderTOML(), file: "printed")
        #expect(again == old)
    }
}

/// Each curtain's PIN and password from its own file or systemd credential.
@Suite struct CurtainSecretsTests {
    @Test func eachCurtainReadsItsOwnFileOrCredential() throws {
        let directory = FileManager.default.temporaryDirectory.path + "/curtain-secrets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func write(_ name: String, _ text: String) throws -> String {
            let path = directory + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            return path
        }
        let pinFile = try write("left.pin", "1234\n")
        _ = try write("curtains.right.password", "s3cret\n")
        var c = DaemonConfig()
        try c.apply(toml: """
            [curtains.left]
            address = "C4:7C:8D:6A:3E:21"
            profile = "am43"
            pin_file = "\(pinFile)"
            [curtains.right]
            address = "C4:7C:8D:6A:3E:22"
            profile = "switchbot"
            """, file: "test.toml")
        let environment = ["CREDENTIALS_DIRECTORY": directory]
        let (left, right) = (c.curtains[0], c.curtains[1])
        #expect(try Secrets.pin(of: left, in: c, environment: environment) == 1234)
        #expect(try Secrets.password(of: right, in: c, environment: environment) == "s3cret")
        // Nothing given: the profile's default PIN, no password (not the single curtain's curtain.pin 8888).
        #expect(try Secrets.pin(of: right, in: c, environment: [:]) == nil)
        #expect(try Secrets.password(of: left, in: c, environment: environment) == nil)
        // The single curtain keeps its keys.
        #expect(try Secrets.pin(of: CurtainEntry(name: "curtain"), in: DaemonConfig(), environment: [:]) == 8888)
    }

}

/// Groups of curtains (`[curtain.groups]`) and the adapter's connection budget (`curtain.connections`).
@Suite struct CurtainGroupTests {
    private func load(_ toml: String?, _ args: [String] = []) throws(ConfigError) -> DaemonConfig {
        try DaemonCommandLine(arguments: args).load(readFile: { _ in toml })
    }

    static let pair = CurtainListTests.pair

    @Test func groupsNameCurtainsTogetherAndAreReloadable() throws {
        let c = try load(Self.pair + "\n[curtain.groups]\nwindow = [\"left\", \"right\", \"left\"]\nwest = [\"right\"]\n")
        #expect(c.curtainGroups == [CurtainGroup(name: "west", curtains: ["right"]),
                                    CurtainGroup(name: "window", curtains: ["left", "right"])])
        #expect(c.changedKeys(since: try load(Self.pair)) == ["curtain.groups"])
        #expect(DaemonConfig.isReloadable("curtain.groups"))
        #expect(c.renderTOML().contains("[curtain.groups]\nwest = [\"right\"]\nwindow = [\"left\", \"right\"]\n"))
        // The single curtain of the [curtain] keys is named curtain.
        #expect(try load("[curtain.groups]\nall_of_it = [\"curtain\"]\n").curtainGroups
                == [CurtainGroup(name: "all_of_it", curtains: ["curtain"])])
        #expect(try load(Self.pair)[.curtainConnections] == 3)
        #expect(try load(Self.pair, ["--curtain-connections", "1"])[.curtainConnections] == 1)
    }

    @Test(arguments: [
        ("[curtain.groups]\nwindow = [\"left\", \"middle\"]\n",
         "curtain.groups.window names \"middle\", which is no configured curtain; the curtains are: left, right"),
        ("[curtain.groups]\nleft = [\"right\"]\n", "curtain.groups.left has the name of a curtain"),
        ("[curtain.groups]\nall = [\"left\"]\n", "curtain group name \"all\" is taken: it means every curtain already"),
        ("[curtain.groups]\nWindow = [\"left\"]\n", "curtain group name \"Window\" must be 1 to 32 lower-case letters"),
        ("[curtain.groups]\nwindow = []\n", "curtain.groups.window must be a list of curtain names"),
        ("[curtain.groups]\nwindow = \"left\"\n", "curtain.groups.window must be a list of curtain names"),
        ("[curtain.groups]\nwindow = [1, 2]\n", "curtain.groups.window must be a list of curtain names"),
    ])
    func badGroupsAreRefusedNamingTheProblem(extra: String, expected: String) {
        #expect {
            _ = try load(Self.pair + "\n" + extra)
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func aConnectionBudgetBelowOneIsRefused() {
        #expect(throws: ConfigError.self) { _ = try load(nil, ["--curtain-connections", "0"]) }
    }
}
