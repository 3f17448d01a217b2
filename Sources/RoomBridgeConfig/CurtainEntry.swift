import RoomBridgeCore

/// One curtain the daemon drives: a `[curtains.NAME]` table of the configuration file, or the single curtain
/// of the older `[curtain]` keys (`curtain.address`, `curtain.profile`, …), which is named `curtain`.
///
/// ```toml
/// [curtains.left]
/// address = "C4:7C:8D:6A:3E:21"
/// profile = "switchbot"
/// password_file = "/etc/roombridge/left.password"
///
/// [curtains.right]
/// address = "C4:7C:8D:6A:3E:22"
/// profile = "switchbot"
/// ```
///
/// The `[curtain]` keys `enabled`, `adapter` and `notify` apply to every curtain. Passwords and PINs stay out
/// of the file: `pin_file`/`password_file`, or the systemd credentials `curtains.NAME.pin` and
/// `curtains.NAME.password` (``Secrets``).
public struct CurtainEntry: Sendable, Equatable {
    /// The name of the curtain the older single-curtain keys describe.
    public static let defaultName = "curtain"
    /// The keys a `[curtains.NAME]` table may hold.
    static let keys = ["address", "profile", "pin_file", "password_file"]

    /// The curtain's name in RoomBridge (state, Varlink `name`, `roombridgectl curtain --name`).
    public var name: String
    /// Its Bluetooth address, upper case; nil picks the first curtain advertising the profile's service
    /// (allowed only when it is the only curtain).
    public var address: String?
    /// `roombridge`, `switchbot` or `am43`.
    public var profile: String
    /// A private file holding the AM43 PIN.
    public var pinFile: String?
    /// A private file holding the SwitchBot password.
    public var passwordFile: String?

    public init(name: String, address: String? = nil, profile: String = "roombridge",
                pinFile: String? = nil, passwordFile: String? = nil) {
        self.name = name
        self.address = address?.uppercased()
        self.profile = profile
        self.pinFile = pinFile
        self.passwordFile = passwordFile
    }

    /// The curtains a configuration asks for, sorted by name; none when
    /// `curtain.enabled` is false. Without `[curtains.NAME]` tables, the one curtain of the `[curtain]` keys.
    public static func all(in config: DaemonConfig) -> [CurtainEntry] {
        guard config[.curtainEnabled] else { return [] }
        if !config.curtains.isEmpty { return config.curtains }
        let address = config[.curtainAddress]
        return [CurtainEntry(name: defaultName, address: address.isEmpty ? nil : address,
                             profile: config[.curtainProfile])]
    }

    /// Why `name` cannot name a curtain, or nil.
    static func problem(withName name: String) -> String? {
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
        guard !name.isEmpty, name.count <= 32, allowed, name.first != "-", name.first != "_" else {
            return "curtain name \"\(name)\" must be 1 to 32 lower-case letters, digits, - or _, starting with a "
                + "letter or digit (e.g. [curtains.left])"
        }
        return nil
    }

    /// Whether `text` looks like a Bluetooth address (six hex pairs separated by colons).
    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}

extension CurtainGroup {
    /// Why `name` cannot name a group in `[curtain.groups]`, or nil.
    static func problem(withName name: String) -> String? {
        if name == every { return "curtain group name \"\(every)\" is taken: it means every curtain already" }
        return CurtainEntry.problem(withName: name).map { _ in
            "curtain group name \"\(name)\" must be 1 to 32 lower-case letters, digits, - or _, starting with a letter "
                + "or digit (e.g. window = [\"left\", \"right\"])"
        }
    }
}

extension DaemonConfig {
    /// Checks the curtain list as a whole: every curtain has an address when there are several, no address
    /// appears twice, and the list is not mixed with the single-curtain keys that only the `[curtain]` table
    /// describes (`curtain.address`, `curtain.profile`, the PIN and password keys). Every group names configured
    /// curtains, and no group has a curtain's name.
    public func validateCurtains(origin: String) throws(ConfigError) {
        let names = curtains.isEmpty ? [CurtainEntry.defaultName] : curtains.map(\.name)
        for group in curtainGroups {
            if names.contains(group.name) {
                throw ConfigError("\(origin): curtain.groups.\(group.name) has the name of a curtain; give the group "
                                  + "another name")
            }
            if let unknown = group.curtains.first(where: { !names.contains($0) }) {
                throw ConfigError("\(origin): curtain.groups.\(group.name) names \"\(unknown)\", which is no configured "
                                  + "curtain; the curtains are: \(names.joined(separator: ", "))")
            }
        }
        guard !curtains.isEmpty else { return }
        let single = [AnyConfigKey(.curtainAddress), AnyConfigKey(.curtainProfile), AnyConfigKey(.curtainPin),
                      AnyConfigKey(.curtainPinFile), AnyConfigKey(.curtainPassword), AnyConfigKey(.curtainPasswordFile)]
            .map(\.name)
        let defaults = DaemonConfig()
        if let mixed = single.first(where: { value(named: $0) != defaults.value(named: $0) }) {
            let leaf = mixed.dropFirst("curtain.".count)
            throw ConfigError("\(origin): \(mixed) describes the single curtain, but [curtains.NAME] tables are given; "
                              + "move it into each curtain's table (\(leaf == "pin" || leaf == "password" ? "\(leaf)_file" : leaf) = …)")
        }
        var owner: [String: String] = [:]
        for entry in curtains {
            guard let address = entry.address else {
                if curtains.count > 1 {
                    throw ConfigError("\(origin): [curtains.\(entry.name)] has no address; with several curtains each "
                                      + "needs its own (bluetoothctl devices shows them)")
                }
                continue
            }
            if let first = owner[address] {
                throw ConfigError("\(origin): [curtains.\(first)] and [curtains.\(entry.name)] both have address "
                                  + "\(address); give each curtain its own controller's address")
            }
            owner[address] = entry.name
        }
    }
}
