import Foundation

/// Signed-in admins and the login rate limit, in memory (a restart signs everyone out).
public actor Sessions {
    public struct Session: Sendable {
        public let user: String
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

    private var sessions: [String: Session] = [:]
    private var failures: [String: [ContinuousClock.Instant]] = [:]
    private let clock = ContinuousClock()

    public init() {}

    /// A new random token (32 bytes from the system's CSPRNG, base64url).
    static func token() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    public func start(user: String) -> (id: String, session: Session) {
        let id = Self.token()
        let session = Session(user: user, csrf: Self.token(), lastSeen: clock.now)
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
        if let id { sessions[id] = nil }
    }

    /// Whether `name` may try to sign in now.
    public func mayTry(_ name: String) -> Bool {
        recentFailures(name) < Self.maxFailures
    }

    public func failed(_ name: String) {
        failures[name, default: []].append(clock.now)
    }

    public func succeeded(_ name: String) {
        failures[name] = nil
    }

    private func recentFailures(_ name: String) -> Int {
        let recent = (failures[name] ?? []).filter { clock.now - $0 < Self.failureWindow }
        failures[name] = recent.isEmpty ? nil : recent
        return recent.count
    }
}
