import Foundation
import Testing
@testable import RoomBridgeConfig

/// The curtain password and PIN from files and systemd credentials, on real files in a temporary directory.
@Suite struct SecretsTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.path + "/secrets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    private func write(_ name: String, _ text: String, mode: Int) throws -> String {
        let path = directory + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    private func config(_ toml: String) throws -> DaemonConfig {
        var c = DaemonConfig()
        try c.apply(toml: toml, file: "test.toml")
        return c
    }

    @Test func aPrivateFileWinsOverThePlainKey() throws {
        let path = try write("password", "s3cret\n", mode: 0o600)
        let c = try config("[curtain]\npassword = \"plain\"\npassword_file = \"\(path)\"\n")
        #expect(try Secrets.value(of: .curtainPassword, in: c, environment: [:]) == "s3cret")
    }

    @Test func aWorldReadableFileIsRefusedWithTheFix() throws {
        let path = try write("password", "s3cret", mode: 0o644)
        let c = try config("[curtain]\npassword_file = \"\(path)\"\n")
        #expect {
            _ = try Secrets.value(of: .curtainPassword, in: c, environment: [:])
        } throws: { error in
            let text = "\(error)"
            return text.contains("can be read by every user") && text.contains("chmod 600 \(path)")
        }
    }

    @Test func theSystemdCredentialIsUsedWhenNoFileIsNamed() throws {
        _ = try write("curtain.pin", "1234\n", mode: 0o400)
        let c = DaemonConfig()
        #expect(try Secrets.pin(.curtainPIN, in: c, environment: ["CREDENTIALS_DIRECTORY": directory]) == 1234)
        // Without a credential, the plain key (default 8888).
        #expect(try Secrets.pin(.curtainPIN, in: c, environment: [:]) == 8888)
        #expect(try Secrets.value(of: .curtainPassword, in: c, environment: ["CREDENTIALS_DIRECTORY": directory]) == nil)
    }

    @Test func aPINThatIsNotANumberSaysWhatItMustBe() throws {
        let path = try write("pin", "88a8", mode: 0o600)
        let c = try config("[curtain]\npin_file = \"\(path)\"\n")
        #expect {
            _ = try Secrets.pin(.curtainPIN, in: c, environment: [:])
        } throws: { error in "\(error)".contains("0 to 65535") }
    }

    @Test func aRelativeFileKeyIsRefused() {
        #expect(throws: ConfigError.self) { _ = try config("[curtain]\npassword_file = \"password\"\n") }
    }

    /// database.password has no plain key: without a file or credential there is no password (trust or peer
    /// authentication). It used to fall back to a key database.password that does not exist, and crashed.
    @Test func theDatabasePasswordComesFromItsFileOrCredentialOrNowhere() throws {
        #expect(SecretKey.databasePassword.plainKey == nil)
        #expect(try Secrets.value(of: .databasePassword, in: DaemonConfig(), environment: [:]) == nil)
        let credentials = ["CREDENTIALS_DIRECTORY": directory]
        #expect(try Secrets.value(of: .databasePassword, in: DaemonConfig(), environment: credentials) == nil)
        _ = try write("database.password", "from-credential\n", mode: 0o400)
        #expect(try Secrets.value(of: .databasePassword, in: DaemonConfig(), environment: credentials) == "from-credential")
        let path = try write("db", "from-file\n", mode: 0o600)
        let c = try config("[database]\npassword_file = \"\(path)\"\n")
        #expect(try Secrets.value(of: .databasePassword, in: c, environment: credentials) == "from-file")
    }

    @Test func onlyTheCurtainSecretsHavePlainKeysAndTheyAreDeclared() {
        let plain = SecretKey.all.compactMap(\.plainKey?.name)
        #expect(plain == ["curtain.password", "curtain.pin"])
        for name in plain { #expect(configKeys.contains { $0.name == name }) }
    }
}
