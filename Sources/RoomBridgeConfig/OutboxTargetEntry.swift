import Lending

/// One outbox delivery target: a `[outbox.targets.NAME]` table of the configuration file.
///
/// ```toml
/// [outbox.targets.intranet]
/// url = "https://intranet.example.com/hooks/lending"
/// format = "json"                       # or "slack" ({"text": …}, also Teams and Google Chat)
/// events = ["lend", "return"]           # empty or absent: every kind
/// secret_file = "/etc/roombridge/intranet.secret"
/// token_file = "/etc/roombridge/intranet.token"
/// timeout = 10
/// ```
///
/// The HMAC secret and the bearer token stay out of the file: `secret_file`/`token_file`, or the
/// systemd credentials `outbox.targets.NAME.secret` and `outbox.targets.NAME.token` (``Secrets``).
public struct OutboxTargetEntry: Sendable, Equatable {
    /// The keys a `[outbox.targets.NAME]` table may hold.
    static let keys = ["url", "format", "events", "secret_file", "token_file", "timeout"]
    /// The event kinds a filter may name.
    public static let eventKinds = OutboxEventKind.allCases.map(\.rawValue)
    public static let formats = ["json", "slack"]

    /// The target's name: in `roombridgectl outbox`, logs and the outbox's rows.
    public var name: String
    /// `http://` or `https://` URL the events are POSTed to.
    public var url: String
    /// `json` (the event document) or `slack` (`{"text": "…"}`).
    public var format: String
    /// The kinds sent; empty: every kind.
    public var events: [String]
    public var secretFile: String?
    public var tokenFile: String?
    /// Seconds one request may take.
    public var timeout: Double

    public init(name: String, url: String, format: String = "json", events: [String] = [], secretFile: String? = nil,
                tokenFile: String? = nil, timeout: Double = 10) {
        self.name = name
        self.url = url
        self.format = format
        self.events = events
        self.secretFile = secretFile
        self.tokenFile = tokenFile
        self.timeout = timeout
    }

    /// Why `name` cannot name a target, or nil (the rule of curtain names).
    static func problem(withName name: String) -> String? {
        CurtainEntry.problem(withName: name).map { _ in
            "outbox target name \"\(name)\" must be 1 to 32 lower-case letters, digits, - or _, starting with a letter "
                + "or digit (e.g. [outbox.targets.intranet])"
        }
    }

    /// Reads one `[outbox.targets.NAME]` table; `origin(leaf)` says where a key is.
    static func parse(name: String, strings: [String: String], events: [String]?, timeout: Double?,
                      origin: (String) -> String) throws(ConfigError) -> OutboxTargetEntry {
        guard let url = strings["url"] else {
            throw ConfigError("\(origin("url")): outbox.targets.\(name) needs a url (url = \"https://…\")")
        }
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.count > "https://".count else {
            throw ConfigError("\(origin("url")): outbox.targets.\(name).url \"\(url)\" must start with http:// or https://")
        }
        let format = strings["format"] ?? "json"
        guard formats.contains(format) else {
            throw ConfigError("\(origin("format")): outbox.targets.\(name).format must be json or slack, not \"\(format)\"")
        }
        let kinds = events ?? []
        if let bad = kinds.first(where: { !eventKinds.contains($0) }) {
            throw ConfigError("\(origin("events")): outbox.targets.\(name).events: unknown event \"\(bad)\"; "
                              + "known: \(eventKinds.joined(separator: ", "))")
        }
        let seconds = timeout ?? 10
        guard seconds > 0, seconds <= 300 else {
            throw ConfigError("\(origin("timeout")): outbox.targets.\(name).timeout must be more than 0 and at most 300 seconds")
        }
        for leaf in ["secret_file", "token_file"] {
            if let path = strings[leaf], !path.hasPrefix("/") {
                throw ConfigError("\(origin(leaf)): outbox.targets.\(name).\(leaf) must be an absolute path")
            }
        }
        return OutboxTargetEntry(name: name, url: url, format: format, events: kinds, secretFile: strings["secret_file"],
                                 tokenFile: strings["token_file"], timeout: seconds)
    }
}

extension Secrets {
    /// The HMAC secret of an outbox target: its `secret_file`, else the systemd credential
    /// `outbox.targets.NAME.secret`; nil: requests are not signed.
    public static func secret(of target: OutboxTargetEntry, environment: [String: String]) throws(ConfigError) -> String? {
        try value(of: .secret(of: target), in: DaemonConfig(), environment: environment)
    }

    /// The bearer token of an outbox target: its `token_file`, else the systemd credential
    /// `outbox.targets.NAME.token`; nil: no `Authorization` header.
    public static func token(of target: OutboxTargetEntry, environment: [String: String]) throws(ConfigError) -> String? {
        try value(of: .token(of: target), in: DaemonConfig(), environment: environment)
    }
}
