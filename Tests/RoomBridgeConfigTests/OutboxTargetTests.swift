import Foundation
import Testing
@testable import RoomBridgeConfig

/// Outbox delivery targets: `[outbox.targets.NAME]` tables, what is refused, and their secrets.
@Suite struct OutboxTargetTests {
    private func load(_ toml: String?) throws(ConfigError) -> DaemonConfig {
        try DaemonCommandLine(arguments: []).load(readFile: { _ in toml })
    }

    static let two = """
        [outbox]
        retry_max = 60

        [outbox.targets.slack]
        url = "https://hooks.slack.example/T1/B2"
        format = "slack"
        events = ["overdue"]

        [outbox.targets.intranet]
        url = "http://intranet.example/lending"
        secret_file = "/etc/roombridge/intranet.secret"
        timeout = 3
        """

    @Test func tablesNameEachTargetSortedByName() throws {
        let c = try load(Self.two)
        #expect(c.outboxTargets == [
            OutboxTargetEntry(name: "intranet", url: "http://intranet.example/lending",
                              secretFile: "/etc/roombridge/intranet.secret", timeout: 3),
            OutboxTargetEntry(name: "slack", url: "https://hooks.slack.example/T1/B2", format: "slack", events: ["overdue"]),
        ])
        #expect(c[.outboxRetryMax] == 60)
        #expect(try load(nil).outboxTargets.isEmpty)
        // The printed configuration reads back the same.
        var again = DaemonConfig()
        try again.apply(toml: c.renderTOML(), file: "printed")
        #expect(again.outboxTargets == c.outboxTargets)
    }

    @Test(arguments: [
        ("[outbox.targets.x]\nformat = \"json\"\n", "needs a url"),
        ("[outbox.targets.x]\nurl = \"ftp://x\"\n", "must start with http:// or https://"),
        ("[outbox.targets.x]\nurl = \"http://x/\"\nformat = \"xml\"\n", "must be json or slack"),
        ("[outbox.targets.x]\nurl = \"http://x/\"\nevents = [\"lent\"]\n", "unknown event \"lent\""),
        ("[outbox.targets.x]\nurl = \"http://x/\"\nsecret = \"s\"\n", "keep the secret out of the configuration"),
        ("[outbox.targets.x]\nurl = \"http://x/\"\ncolour = \"red\"\n", "unknown key outbox.targets.x.colour"),
        ("[outbox.targets.x]\nurl = \"http://x/\"\ntimeout = 0\n", "timeout must be more than 0"),
        ("[outbox.targets.X]\nurl = \"http://x/\"\n", "outbox target name \"X\""),
    ])
    func badTablesAreRefusedNamingTheKey(_ toml: String, _ message: String) {
        #expect { try load(toml) } throws: { error in
            (error as? ConfigError)?.message.contains(message) == true
        }
    }

    @Test func secretAndTokenComeFromFilesOrCredentials() throws {
        let directory = FileManager.default.temporaryDirectory.path + "/outbox-secrets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/outbox.targets.hook.secret"
        try Data("hush\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let target = OutboxTargetEntry(name: "hook", url: "http://x/")
        #expect(try Secrets.secret(of: target, environment: ["CREDENTIALS_DIRECTORY": directory]) == "hush")
        #expect(try Secrets.token(of: target, environment: ["CREDENTIALS_DIRECTORY": directory]) == nil)
        #expect(try Secrets.secret(of: OutboxTargetEntry(name: "hook", url: "http://x/", secretFile: path),
                                   environment: [:]) == "hush")
    }
}
