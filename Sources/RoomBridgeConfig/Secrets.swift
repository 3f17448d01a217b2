#if canImport(Glibc)
import Glibc
#endif

/// One secret the daemon may need, declared with where it can come from: a file (named by a configuration
/// key such as `curtain.password_file`, or by a `[curtains.NAME]`/`[outbox.targets.NAME]` table), the systemd
/// credential ``credential``, and — only for the secrets older configurations kept in the file — a plain key.
///
/// The secrets with keys of their own are ``curtainPassword``, ``curtainPIN`` (both with plain keys, kept so
/// that old configurations still load) and ``databasePassword`` (none: the password never goes into the
/// configuration). Secrets of one curtain or outbox target come from ``password(of:)``, ``pin(of:)``,
/// ``secret(of:)`` and ``token(of:)``.
public struct SecretKey: Sendable {
    /// Where the name of the secret's file comes from.
    public enum File: Sendable {
        /// A configuration key holding the path (empty: no file).
        case key(ConfigKey<String>)
        /// A path given by a table of the file (nil: none).
        case path(String?)
    }

    /// The plain-text configuration key an older configuration may hold the secret in.
    public enum PlainKey: Sendable {
        case string(ConfigKey<String>)
        case int(ConfigKey<Int>)

        public var name: String {
            switch self {
            case .string(let key): key.name
            case .int(let key): key.name
            }
        }
    }

    /// The systemd credential's name, `$CREDENTIALS_DIRECTORY/NAME`; also the secret's name in messages.
    public let credential: String
    public let file: File
    /// nil: the secret has no plain key; it comes from its file or credential or not at all.
    public let plainKey: PlainKey?

    public init(credential: String, file: File, plainKey: PlainKey? = nil) {
        self.credential = credential
        self.file = file
        self.plainKey = plainKey
    }

    /// The SwitchBot password of the curtain the `[curtain]` keys describe.
    public static let curtainPassword = SecretKey(credential: "curtain.password", file: .key(.curtainPasswordFile),
                                                  plainKey: .string(.curtainPassword))
    /// The AM43 PIN of the curtain the `[curtain]` keys describe (``Secrets/pin(_:in:environment:)`` reads it).
    public static let curtainPIN = SecretKey(credential: "curtain.pin", file: .key(.curtainPinFile),
                                             plainKey: .int(.curtainPin))
    /// The PostgreSQL password: `database.password_file`, else the credential `database.password`; no plain
    /// key. None at all: the daemon connects without a password (trust or peer authentication).
    public static let databasePassword = SecretKey(credential: "database.password", file: .key(.databasePasswordFile))

    /// The secrets declared with keys of their own.
    public static let all: [SecretKey] = [.curtainPassword, .curtainPIN, .databasePassword]

    /// The SwitchBot password of a `[curtains.NAME]` curtain: its `password_file`, else the credential
    /// `curtains.NAME.password`.
    public static func password(of curtain: CurtainEntry) -> SecretKey {
        SecretKey(credential: "curtains.\(curtain.name).password", file: .path(curtain.passwordFile))
    }

    /// The AM43 PIN of a `[curtains.NAME]` curtain: its `pin_file`, else the credential `curtains.NAME.pin`.
    public static func pin(of curtain: CurtainEntry) -> SecretKey {
        SecretKey(credential: "curtains.\(curtain.name).pin", file: .path(curtain.pinFile))
    }

    /// The HMAC secret of an outbox target: its `secret_file`, else the credential `outbox.targets.NAME.secret`.
    public static func secret(of target: OutboxTargetEntry) -> SecretKey {
        SecretKey(credential: "outbox.targets.\(target.name).secret", file: .path(target.secretFile))
    }

    /// The bearer token of an outbox target: its `token_file`, else the credential `outbox.targets.NAME.token`.
    public static func token(of target: OutboxTargetEntry) -> SecretKey {
        SecretKey(credential: "outbox.targets.\(target.name).token", file: .path(target.tokenFile))
    }
}

/// Secrets the daemon needs (the SwitchBot password, the AM43 PIN, the PostgreSQL password, the outbox's
/// secrets and tokens), kept out of the configuration file.
///
/// For a ``SecretKey`` such as ``SecretKey/curtainPassword`` the value comes from, in this order:
/// 1. the file its file key names (`curtain.password_file`);
/// 2. the systemd credential of the same name, `$CREDENTIALS_DIRECTORY/curtain.password`
///    (`LoadCredential=curtain.password:/etc/roombridge/curtain.password` in the unit);
/// 3. its plain key `curtain.password`, for the secrets that have one (kept so that old configurations
///    still load).
///
/// A secret file must be a regular file that other users cannot read (mode 0600 or 0400, as systemd
/// makes credentials); one trailing newline is ignored.
public enum Secrets {
    /// The secret `key` names, or nil when none of its sources has one.
    public static func value(of key: SecretKey, in config: DaemonConfig,
                             environment: [String: String]) throws(ConfigError) -> String? {
        let path: String? = switch key.file {
        case .key(let fileKey): config[fileKey]
        case .path(let path): path
        }
        if let secret = try value(file: path, credential: key.credential, environment: environment) {
            return secret
        }
        switch key.plainKey {
        case .string(let plain)?:
            let s = config[plain]
            return s.isEmpty ? nil : s
        case .int(let plain)?: return String(config[plain])
        case nil: return nil
        }
    }

    /// A PIN (`curtain.pin`, `curtains.NAME.pin`) from its sources, checked to be 0–65535.
    public static func pin(_ key: SecretKey, in config: DaemonConfig,
                           environment: [String: String]) throws(ConfigError) -> UInt16? {
        try pin(try value(of: key, in: config, environment: environment), key: key.credential)
    }

    /// The SwitchBot password of one curtain: for a `[curtains.NAME]` table ``SecretKey/password(of:)``; for the
    /// curtain of the `[curtain]` keys, ``SecretKey/curtainPassword``.
    public static func password(of curtain: CurtainEntry, in config: DaemonConfig,
                                environment: [String: String]) throws(ConfigError) -> String? {
        try value(of: config.curtains.isEmpty ? .curtainPassword : .password(of: curtain), in: config, environment: environment)
    }

    /// The AM43 PIN of one curtain, from the sources ``password(of:in:environment:)`` describes (`pin_file`,
    /// `curtains.NAME.pin`); nil: the profile's default.
    public static func pin(of curtain: CurtainEntry, in config: DaemonConfig,
                           environment: [String: String]) throws(ConfigError) -> UInt16? {
        try pin(config.curtains.isEmpty ? .curtainPIN : .pin(of: curtain), in: config, environment: environment)
    }

    /// A secret from a file, else from the systemd credential `credential`; nil when neither has one.
    static func value(file: String?, credential: String, environment: [String: String]) throws(ConfigError) -> String? {
        if let file, !file.isEmpty {
            return try read(file, for: credential, origin: credential + "_file")
        }
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let path = directory + "/" + credential
            if access(path, F_OK) == 0 {
                return try read(path, for: credential, origin: "the systemd credential \(credential)")
            }
        }
        return nil
    }

    private static func pin(_ text: String?, key: String) throws(ConfigError) -> UInt16? {
        guard let text else { return nil }
        guard let n = UInt16(text.trimmingSpaces()) else {
            throw ConfigError("\(key) must be a whole number from 0 to 65535 (the PIN of the Blind Engine app)")
        }
        return n
    }

    /// Reads a secret file, refusing one other users can read.
    static func read(_ path: String, for key: String, origin: String) throws(ConfigError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw ConfigError("\(origin): cannot open \(path) for \(key): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw ConfigError("\(origin): \(path) is not a regular file; put the \(key) in a file of its own")
        }
        let mode = info.st_mode & 0o777
        if mode & 0o007 != 0 {
            throw ConfigError("\(origin): \(path) can be read by every user (mode \(String(mode, radix: 8))); "
                              + "make it private: chmod 600 \(path)")
        }
        var bytes = try FileReading.readAll(fd, path: path, origin: origin, what: "a \(key)", limit: 65536)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError("\(origin): \(path) is not UTF-8 text")
        }
        return text
    }
}

extension String {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
