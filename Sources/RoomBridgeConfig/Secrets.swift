#if canImport(Glibc)
import Glibc
#endif

/// Secrets the daemon needs (the SwitchBot password, the AM43 PIN), kept out of the configuration file.
///
/// For a key such as `curtain.password` the value comes from, in this order:
/// 1. the file named by `curtain.password_file`;
/// 2. the systemd credential of the same name, `$CREDENTIALS_DIRECTORY/curtain.password`
///    (`LoadCredential=curtain.password:/etc/roombridge/curtain.password` in the unit);
/// 3. the plain key `curtain.password` (kept so that old configurations still load).
///
/// A secret file must be a regular file that other users cannot read (mode 0600 or 0400, as systemd
/// makes credentials); one trailing newline is ignored.
public enum Secrets {
    /// The secret for `key`, or nil when none of the sources has one.
    public static func value(of key: String, in config: DaemonConfig,
                             environment: [String: String]) throws(ConfigError) -> String? {
        if let secret = try value(file: config.string(key + "_file"), credential: key, environment: environment) {
            return secret
        }
        switch config[key] {
        case .string(let s): return s.isEmpty ? nil : s
        case .int(let i): return String(i)
        default: return nil
        }
    }

    /// The AM43 PIN (`curtain.pin`) from its sources, checked to be 0–65535.
    public static func pin(_ key: String, in config: DaemonConfig,
                           environment: [String: String]) throws(ConfigError) -> UInt16? {
        try pin(try value(of: key, in: config, environment: environment), key: key)
    }

    /// The SwitchBot password of one curtain: for a `[curtains.NAME]` table its `password_file`, else the
    /// systemd credential `curtains.NAME.password`; for the curtain of the `[curtain]` keys, `curtain.password`'s
    /// sources (``value(of:in:environment:)``).
    public static func password(of curtain: CurtainEntry, in config: DaemonConfig,
                                environment: [String: String]) throws(ConfigError) -> String? {
        guard !config.curtains.isEmpty else { return try value(of: "curtain.password", in: config, environment: environment) }
        return try value(file: curtain.passwordFile, credential: "curtains.\(curtain.name).password", environment: environment)
    }

    /// The AM43 PIN of one curtain, from the sources ``password(of:in:environment:)`` describes (`pin_file`,
    /// `curtains.NAME.pin`); nil: the profile's default.
    public static func pin(of curtain: CurtainEntry, in config: DaemonConfig,
                           environment: [String: String]) throws(ConfigError) -> UInt16? {
        guard !config.curtains.isEmpty else { return try pin("curtain.pin", in: config, environment: environment) }
        let key = "curtains.\(curtain.name).pin"
        return try pin(try value(file: curtain.pinFile, credential: key, environment: environment), key: key)
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
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ConfigError("\(origin): cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += buffer[..<n]
            guard bytes.count <= 65536 else { throw ConfigError("\(origin): \(path) is too large for a \(key)") }
        }
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
