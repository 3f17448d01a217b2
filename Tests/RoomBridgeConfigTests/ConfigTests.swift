import Foundation
import Testing
@testable import RoomBridgeConfig

@Suite struct ConfigTests {
    private func load(_ toml: String?, _ args: [String] = []) throws(ConfigError) -> DaemonConfig {
        let cl = try DaemonCommandLine(arguments: args)
        return try cl.load(readFile: { _ in toml })
    }

    @Test func defaultsWithoutAFile() throws {
        let c = try load(nil)
        #expect(c[.socketPath] == "/run/roombridge/roombridge.sock")
        #expect(c[.lendingArmSeconds] == 30)
        #expect(c[.nfcReaders] == [])
    }

    @Test func fileThenFlagsWin() throws {
        let toml = """
            [socket]
            path = "/tmp/a.sock"
            max_connections = 8
            [nfc]
            readers = ["front=pn532_uart:/dev/ttyUSB0"]
            """
        let c = try load(toml, ["--socket-max-connections", "9", "--nfc-readers=back=pn53x_usb:",
                                "--no-curtain-enabled", "--socket-stall-timeout", "2.5"])
        #expect(c[.socketPath] == "/tmp/a.sock")
        #expect(c[.socketMaxConnections] == 9)
        #expect(c[.nfcReaders] == ["back=pn53x_usb:"])
        #expect(c[.curtainEnabled] == false)
        #expect(c[.socketStallTimeout] == 2.5)
    }

    @Test func repeatedListFlagsAccumulate() throws {
        let c = try load(nil, ["--nfc-readers", "a=x:", "--nfc-readers", "b=y:"])
        #expect(c[.nfcReaders] == ["a=x:", "b=y:"])
    }

    @Test func unknownKeyNamesKeyAndLine() {
        let toml = "[socket]\npath = \"/tmp/a.sock\"\n\n[socket]\n"
        let bad = "# comment\n[socket]\npath = \"/tmp/a.sock\"\nmax_conections = 3\n"
        #expect(throws: ConfigError.self) { try load(toml) }  // duplicate table: syntax error
        do {
            _ = try load(bad)
            Issue.record("accepted an unknown key")
        } catch {
            #expect(error.message.hasPrefix("/etc/roombridge/roombridged.toml:4: unknown key socket.max_conections"))
            #expect(error.message.contains("socket.max_connections"))
        }
    }

    @Test func wrongTypeNamesKeyAndLine() {
        do {
            _ = try load("[lending]\n\narm_seconds = \"thirty\"\n")
            Issue.record("accepted a string for an int")
        } catch {
            #expect(error.message == "/etc/roombridge/roombridged.toml:3: lending.arm_seconds must be a whole number")
        }
    }

    @Test func invalidValuesAreRefused() {
        #expect(throws: ConfigError.self) { try load("[socket]\nmode = \"999\"\n") }
        #expect(throws: ConfigError.self) { try load("[log]\nlevel = \"loud\"\n") }
        #expect(throws: ConfigError.self) { try load("[socket]\npath = \"relative.sock\"\n") }
        #expect(throws: ConfigError.self) { try load(nil, ["--lending-arm-seconds", "0"]) }
        #expect(throws: ConfigError.self) { try load(nil, ["--socket-max-connections", "many"]) }
    }

    @Test func theKioskTimeZoneIsTheConfiguredOneElseTheSystems() throws {
        let tokyo = try load("[lending]\ntime_zone = \"Asia/Tokyo\"\n")
        #expect(tokyo.kioskTimeZone.identifier == "Asia/Tokyo")
        #expect(tokyo.kioskTimeZoneName == "Asia/Tokyo")
        let system = try load(nil)
        #expect(system.kioskTimeZone == .current)
        #expect(system.kioskTimeZoneName == TimeZone.current.identifier)
        #expect(throws: ConfigError.self) { try load("[lending]\ntime_zone = \"Mars/Olympus_Mons\"\n") }
        // Reminders and the state are built with the zone at start; a reload names it as needing a restart.
        #expect(!DaemonConfig.isReloadable("lending.time_zone"))
        #expect(DaemonConfig.isReloadable("lending.loan_days"))
    }

    @Test func theSystemZoneIsNamedLikeFoundationNamesIt() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tz-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let link = dir.appendingPathComponent("localtime").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/usr/share/zoneinfo/Asia/Tokyo")
        let missing = dir.appendingPathComponent("none").path
        #expect(DaemonConfig.systemTimeZoneName(environment: [:], localtime: link) == "Asia/Tokyo")
        #expect(DaemonConfig.systemTimeZoneName(environment: ["TZ": "Europe/Berlin"], localtime: link) == "Europe/Berlin")
        #expect(DaemonConfig.systemTimeZoneName(environment: ["TZ": ":America/New_York"], localtime: link) == "America/New_York")
        #expect(DaemonConfig.systemTimeZoneName(environment: ["TZ": "/usr/share/zoneinfo/Pacific/Auckland"], localtime: link) == "Pacific/Auckland")
        #expect(DaemonConfig.systemTimeZoneName(environment: ["TZ": ""], localtime: missing) == "UTC")
        // The same answer as Foundation's for this process.
        #expect(TimeZone(identifier: DaemonConfig.systemTimeZoneName()) == TimeZone.current)
    }

    @Test func aDatabaseURLMayNotCarryAPassword() throws {
        let url = "postgresql://kiosk@db.example:5432/inventory?sslmode=require"
        #expect(try load("[database]\nurl = \"\(url)\"\n")[.databaseURL] == url)
        for bad in ["postgresql://kiosk:secret@db.example/inventory", "postgresql://kiosk@db.example/inventory?password=secret"] {
            do {
                _ = try load(nil, ["--database-url", bad])
                Issue.record("accepted a password in \(bad)")
            } catch {
                #expect(error.message.contains("must not contain a password") && error.message.contains("database.password_file"))
                #expect(!error.message.contains("secret"), "the refusal repeats the password: \(error.message)")
            }
        }
        #expect(throws: ConfigError.self) { try load(nil, ["--database-url", "mysql://db.example/inventory"]) }
    }

    @Test func syntaxErrorNamesLine() {
        do {
            _ = try load("[socket]\npath = \n")
            Issue.record("accepted broken TOML")
        } catch {
            #expect(error.message.hasPrefix("/etc/roombridge/roombridged.toml:2:"))
        }
    }

    @Test func unknownFlagAndMissingValue() {
        #expect(throws: ConfigError.self) { try DaemonCommandLine(arguments: ["--frobnicate"]) }
        #expect(throws: ConfigError.self) { try DaemonCommandLine(arguments: ["--socket-path"]) }
    }

    @Test func explicitMissingConfigFails() {
        #expect(throws: ConfigError.self) {
            try DaemonCommandLine(arguments: ["--config", "/nonexistent.toml"]).load(readFile: { _ in nil })
        }
    }

    /// `--config /dev/null` runs on the defaults (as `ssh -F /dev/null` does): the file is read
    /// through its descriptor, so a character device or a pipe works as a regular file does.
    @Test func devNullIsAnEmptyConfiguration() throws {
        let c = try DaemonCommandLine(arguments: ["--config", "/dev/null"]).load()
        #expect(c == DaemonConfig())
    }

    @Test func aDirectoryOrNonUTF8FileSaysWhatToDo() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: ConfigError("\(dir.path) is a directory; --config takes the configuration file (roombridged.toml)")) {
            try DaemonCommandLine(arguments: ["--config", dir.path]).load()
        }
        let latin1 = dir.appendingPathComponent("roombridged.toml")
        try Data([0x23, 0x20, 0xE9, 0x0A]).write(to: latin1)
        #expect(throws: ConfigError("\(latin1.path): the file is not UTF-8 text; save it as UTF-8")) {
            try DaemonCommandLine(arguments: ["--config", latin1.path]).load()
        }
        #expect(throws: ConfigError("\(dir.path)/absent.toml: no such configuration file; check the --config path")) {
            try DaemonCommandLine(arguments: ["--config", dir.path + "/absent.toml"]).load()
        }
    }

    @Test func printedConfigParsesBackToTheSame() throws {
        let c = try load(nil, ["--nfc-readers", "a=pn532_uart:/dev/x \"q\"", "--socket-stall-timeout", "3"])
        var again = DaemonConfig()
        try again.apply(toml: c.renderTOML(), file: "printed")
        #expect(again == c)
    }

    @Test func everyKeyHasAFlagInHelp() {
        let help = DaemonCommandLine.helpText()
        for key in configKeys { #expect(help.contains(key.flag)) }
    }

    @Test func typedKeysReadTheFilesValueOrTheDefault() throws {
        let c = try load("[socket]\ngroup = \"kiosk\"\n[presence]\nhistory = true\n")
        #expect(c[.socketGroup] == "kiosk")
        #expect(c[.presenceHistory])
        #expect(c[.socketMaxConnections] == 64)
        #expect(c[.authActorUsers] == ["roombridge-web"])
        #expect(DaemonConfig()[.presenceHistory] == false)
    }

    @Test func settingATypedKeyChecksTheValueAsTheFileWould() throws {
        var c = DaemonConfig()
        try c.set(.lendingLoanDays, to: 14)
        #expect(c[.lendingLoanDays] == 14)
        #expect(throws: ConfigError.self) { try c.set(.lendingArmSeconds, to: 0) }
        #expect(c[.lendingArmSeconds] == 30)
    }

    /// The reload works by name; a name that is no key is an error, never a crash.
    @Test func byNameAnUnknownKeyIsAnErrorNotACrash() throws {
        var c = DaemonConfig()
        #expect(c.value(named: "database.password") == nil)
        #expect(throws: ConfigError.self) { try c.replace("database.password", with: .string("x")) }
        #expect(throws: ConfigError.self) { try c.replace("log.level", with: .int(1)) }
        #expect(throws: ConfigError.self) { try c.describe("database.password") }
        #expect(throws: ConfigError.self) { try c.adopt("database.password", from: DaemonConfig()) }
        #expect(c == DaemonConfig())
        try c.replace("log.level", with: .string("debug"))
        #expect(c[.logLevel] == "debug")
        #expect(try c.describe("log.level") == "\"debug\"")
    }
}
