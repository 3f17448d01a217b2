import Lending
/// Where and how to reach the PostgreSQL database: parsed from a libpq-style URL,
/// `postgresql://user@host:port/database?sslmode=require`. The password never comes from the
/// URL (it would end up in configuration files and logs); it is passed apart, read from
/// `database.password_file` or a systemd credential.
public struct PostgresStoreConfiguration: Sendable, Hashable {
    /// TLS like libpq's `sslmode`: `disable` (never), `prefer` (TLS when the server offers it,
    /// the default), `require` (TLS or no connection). Like libpq's `require`, the server's
    /// certificate is not verified against a CA.
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        case disable, prefer, require
    }

    /// Host name or address; nil when ``unixSocketDirectory`` is set.
    public var host: String?
    public var port: Int
    /// The directory holding the server's socket (libpq's `host=/run/postgresql`).
    public var unixSocketDirectory: String?
    public var username: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    /// Connections the pool keeps at most.
    public var maximumConnections: Int
    /// How long a call waits for a connection before it reports the database offline.
    public var connectTimeout: Duration
    /// How long a call's statements may take on its connection before the connection is closed
    /// and the call reports the database offline (or the outcome unknown, when committing).
    public var callTimeout: Duration
    /// The outbox's delivery targets: lends, returns, renewals and overdue events write outbox
    /// entries for them. Empty (no targets configured): no entries are written. These are the
    /// routes at open; the store's `setOutboxRoutes(_:)` replaces them (a reloaded configuration).
    public var outboxRoutes: [OutboxRoute] = []

    public init(
        host: String? = "localhost", port: Int = 5432, unixSocketDirectory: String? = nil,
        username: String, password: String? = nil, database: String, sslMode: SSLMode = .prefer,
        maximumConnections: Int = 10, connectTimeout: Duration = .seconds(3), callTimeout: Duration = .seconds(5)
    ) {
        self.callTimeout = callTimeout
        self.host = host
        self.port = port
        self.unixSocketDirectory = unixSocketDirectory
        self.username = username
        self.password = password
        self.database = database
        self.sslMode = sslMode
        self.maximumConnections = maximumConnections
        self.connectTimeout = connectTimeout
    }

    /// Parses `postgresql://[user@][host][:port][/database][?sslmode=…&host=/socket/dir]`
    /// (`postgres://` too). Missing parts default like libpq's: user `roombridge`, host
    /// `localhost`, port 5432, database = user.
    public init(url: String, password: String?) throws(PostgresURLError) {
        var rest: Substring
        if url.hasPrefix("postgresql://") {
            rest = url.dropFirst("postgresql://".count)
        } else if url.hasPrefix("postgres://") {
            rest = url.dropFirst("postgres://".count)
        } else {
            throw PostgresURLError(url: url, reason: "it must start with postgresql://")
        }
        var query: Substring = ""
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var user = "roombridge"
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            if userinfo.contains(":") {
                throw PostgresURLError(url: Self.redacted(url),
                                       reason: "it contains a password; put the password in database.password_file (or a systemd credential) instead")
            }
            user = try Self.decode(userinfo, url: url)
            rest = rest[rest.index(after: at)...]
        }
        var host: String? = nil
        var port = 5432
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                throw PostgresURLError(url: url, reason: "the port must be a number from 1 to 65535")
            }
            port = p
            rest = rest[..<colon]
        }
        if !rest.isEmpty { host = try Self.decode(rest.trimmingPrefix("[").split(separator: "]").first ?? "", url: url) }
        var socketDirectory: String? = nil
        var sslMode = SSLMode.prefer
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1)
            let key = String(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1], url: url) : ""
            switch key {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw PostgresURLError(url: url, reason: "sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", ")) (libpq's verify-ca and verify-full are not supported)")
                }
                sslMode = mode
            case "host":
                guard value.hasPrefix("/") else {
                    throw PostgresURLError(url: url, reason: "the host parameter must be a socket directory such as /run/postgresql")
                }
                socketDirectory = value
            case "user":
                user = value
            case "port":
                guard let p = Int(value), (1...65535).contains(p) else {
                    throw PostgresURLError(url: url, reason: "the port must be a number from 1 to 65535")
                }
                port = p
            case "password":
                throw PostgresURLError(url: Self.redacted(url),
                                       reason: "it contains a password; put the password in database.password_file (or a systemd credential) instead")
            default:
                throw PostgresURLError(url: url, reason: "unknown parameter \(key) (known: sslmode, host, user, port)")
            }
        }
        if host?.hasPrefix("/") == true { socketDirectory = host; host = nil }
        let database = path.isEmpty ? user : try Self.decode(path, url: url)
        self.init(host: socketDirectory == nil ? (host ?? "localhost") : nil, port: port,
                  unixSocketDirectory: socketDirectory, username: user, password: password,
                  database: database, sslMode: sslMode)
    }

    /// The URL without a password, for logs and status.
    public var displayURL: String {
        let location = unixSocketDirectory.map { "/\(database)?host=\($0)&port=\(port)" } ?? "\(host ?? "localhost"):\(port)/\(database)"
        let separator = location.contains("?") ? "&" : "?"
        return "postgresql://\(username)@\(location)\(separator)sslmode=\(sslMode.rawValue)"
    }

    /// The socket file of a Unix-socket connection (`DIR/.s.PGSQL.PORT`, as libpq names it).
    var unixSocketPath: String? { unixSocketDirectory.map { "\($0)/.s.PGSQL.\(port)" } }

    private static func decode(_ text: Substring, url: String) throws(PostgresURLError) -> String {
        guard let decoded = String(text).removingPercentEncodingStrictly() else {
            throw PostgresURLError(url: url, reason: "bad percent-encoding in '\(text)'")
        }
        return decoded
    }

    /// `url` with the password (in the user part or a `password=` parameter) replaced by `…`.
    private static func redacted(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://"),
           let at = text[scheme.upperBound...].prefix(while: { $0 != "/" && $0 != "?" }).lastIndex(of: "@"),
           let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
            text.replaceSubrange(text.index(after: colon)..<at, with: "…")
        }
        if let parameter = text.range(of: "password=") {
            let end = text[parameter.upperBound...].firstIndex(of: "&") ?? text.endIndex
            text.replaceSubrange(parameter.upperBound..<end, with: "…")
        }
        return text
    }
}

/// A `database.url` that cannot be used.
public struct PostgresURLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var url: String
    public var reason: String
    public var description: String { "database.url \(url) cannot be used: \(reason)" }
}

extension String {
    /// `%XX` sequences decoded as UTF-8; nil when one is malformed.
    fileprivate func removingPercentEncodingStrictly() -> String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
