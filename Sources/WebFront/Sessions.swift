import Foundation

/// Signed-in admins and the login rate limit, in memory (a restart signs everyone out).
public actor Sessions {
    public struct Session: Sendable {
        public let user: String
        /// The inventory user a self-service account books for; nil for an admin.
        public let userId: String?
        /// The token every form of this session carries.
        public let csrf: String
        var lastSeen: ContinuousClock.Instant
    }

    /// Sessions end after this long without a request.
    public static let idleTimeout = Duration.seconds(8 * 3600)
    /// Failed logins allowed per account name within `failureWindow`; more are refused until
    /// the window has passed, even with the right password.
    public static let maxFailures = 5
    public static let failureWindow = Duration.seconds(300)

    /// Password checks allowed to run at once for names in the accounts file, and for other
    /// names: each is a few hundred milliseconds of a core (scrypt), so an unauthenticated
    /// client must not be able to queue them without bound. Past the limit a sign-in is refused
    /// at once ("busy, try again"); attempts for unknown names never take a known admin's place.
    public static let maxChecksKnown = 2
    public static let maxChecksUnknown = 2
    /// Checks of unknown names one client address may have under way at once, so that one
    /// source cannot hold every place for unknown names. (Known names are not bounded per
    /// source: behind a reverse proxy every client has the proxy's address, and an attacker
    /// there must not keep the admin out.)
    public static let maxUnknownChecksPerSource = 1

    private var sessions: [String: Session] = [:]
    /// What the next page of a session says about the change just made ("Lent D-0042 to …").
    private var notices: [String: String] = [:]
    private var failures: [String: [ContinuousClock.Instant]] = [:]
    /// Sign-ins under way per name: they count against ``maxFailures`` from the moment they start.
    private var attempting: [String: Int] = [:]
    private var checksKnown = 0
    private var checksUnknown = 0
    private var unknownChecksBySource: [String: Int] = [:]
    private let clock = ContinuousClock()

    public init() {}

    /// A new random token (32 bytes from the system's CSPRNG, base64url).
    static func token() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public func start(user: String, userId: String? = nil) -> (id: String, session: Session) {
        let id = Self.token()
        let session = Session(user: user, userId: userId, csrf: Self.token(), lastSeen: clock.now)
        sessions[id] = session
        return (id, session)
    }

    public func session(_ id: String?) -> Session? {
        guard let id, var s = sessions[id] else { return nil }
        guard clock.now - s.lastSeen < Self.idleTimeout else {
            sessions[id] = nil
            return nil
        }
        s.lastSeen = clock.now
        sessions[id] = s
        return s
    }

    public func end(_ id: String?) {
        if let id {
            sessions[id] = nil
            notices[id] = nil
        }
    }

    /// Leaves `notice` for the session's next page (kept on the server: a link cannot forge one).
    public func post(_ notice: String, to id: String?) {
        if let id, sessions[id] != nil { notices[id] = notice }
    }

    /// The notice left for the session, once.
    public func takeNotice(_ id: String?) -> String? {
        guard let id else { return nil }
        return notices.removeValue(forKey: id)
    }

    /// Whether a sign-in may start now.
    public enum Admission: Sendable, Equatable {
        /// Go ahead; call ``endAttempt(_:known:succeeded:)`` when the check is done.
        case admitted
        /// `name` has had ``maxFailures`` failed or unfinished sign-ins within ``failureWindow``.
        case tooManyForName
        /// As many password checks as allowed are running; try again in a moment.
        case busy
    }

    /// Starts a sign-in as `name` (`known`: the accounts file has the name). It counts as a
    /// failure until it ends, so that simultaneous attempts cannot all get past the limit.
    public func beginAttempt(_ name: String, known: Bool, source: String = "?") -> Admission {
        guard recentFailures(name) + attempting[name, default: 0] < Self.maxFailures else { return .tooManyForName }
        if known {
            guard checksKnown < Self.maxChecksKnown else { return .busy }
            checksKnown += 1
        } else {
            guard checksUnknown < Self.maxChecksUnknown,
                  unknownChecksBySource[source, default: 0] < Self.maxUnknownChecksPerSource else { return .busy }
            checksUnknown += 1
            unknownChecksBySource[source, default: 0] += 1
        }
        attempting[name, default: 0] += 1
        return .admitted
    }

    /// Ends a sign-in that ``beginAttempt(_:known:)`` admitted.
    public func endAttempt(_ name: String, known: Bool, source: String = "?", succeeded: Bool) {
        if known {
            checksKnown -= 1
        } else {
            checksUnknown -= 1
            unknownChecksBySource[source, default: 1] -= 1
            if unknownChecksBySource[source] == 0 { unknownChecksBySource[source] = nil }
        }
        attempting[name, default: 1] -= 1
        if attempting[name] == 0 { attempting[name] = nil }
        if succeeded {
            failures[name] = nil
        } else {
            failures[name, default: []].append(clock.now)
        }
    }

    private func recentFailures(_ name: String) -> Int {
        let recent = (failures[name] ?? []).filter { clock.now - $0 < Self.failureWindow }
        failures[name] = recent.isEmpty ? nil : recent
        return recent.count
    }
}
