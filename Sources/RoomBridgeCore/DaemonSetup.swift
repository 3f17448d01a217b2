/// What a running roombridged was started with, as `io.roombridge.State.GetConfiguration`
/// reports it: so that `roombridgectl doctor` checks the daemon's own files and devices rather
/// than the host's defaults.
public struct DaemonSetup: Sendable, Codable, Equatable {
    /// The configuration file read at start; nil when none was (defaults and flags only).
    public var configPath: String?
    /// The SQLite database the daemon has open.
    public var databasePath: String
    /// The socket path from the configuration (systemd may hand the daemon its socket instead).
    public var socketPath: String
    public var nfcEnabled: Bool
    /// The `nfc.readers` entries as configured (`name=connstring`); empty: libnfc's own choice.
    public var nfcReaders: [String]
    public var curtainEnabled: Bool
    /// `curtain.address`; nil: the first curtain found.
    public var curtainAddress: String?

    public init(configPath: String?, databasePath: String, socketPath: String, nfcEnabled: Bool,
                nfcReaders: [String], curtainEnabled: Bool, curtainAddress: String?) {
        self.configPath = configPath
        self.databasePath = databasePath
        self.socketPath = socketPath
        self.nfcEnabled = nfcEnabled
        self.nfcReaders = nfcReaders
        self.curtainEnabled = curtainEnabled
        self.curtainAddress = curtainAddress
    }
}
