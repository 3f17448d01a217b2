import Testing
@testable import RoomBridgeDaemon

@Suite struct ReloadTests {
    /// The reload's log line hides the values of the secrets' plain keys, and only those.
    @Test func onlyThePlainKeysOfSecretsAreHidden() {
        #expect(ReloadService.isSecret("curtain.password"))
        #expect(ReloadService.isSecret("curtain.pin"))
        #expect(!ReloadService.isSecret("curtain.password_file"))
        #expect(!ReloadService.isSecret("database.password_file"))
        #expect(!ReloadService.isSecret("log.level"))
    }
}
