#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One reader's lending desk: holds the arm session, applies ``LendingRules`` to taps and
/// performs the resulting store operation. Create one per reader (its `location`).
public actor LendingDesk {
    private let store: any InventoryStore
    /// The rules' tunables.
    public private(set) var policy: LendingPolicy
    /// The reader/kiosk name recorded on rentals.
    public private(set) var location: String?
    private let now: @Sendable () -> Date
    private var session: ArmSession?

    /// - Parameter now: the clock (injected for tests).
    public init(
        store: any InventoryStore, policy: LendingPolicy = LendingPolicy(), location: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.policy = policy
        self.location = location
        self.now = now
    }

    /// New tunables (a configuration reload); the armed session keeps its expiry.
    public func reconfigure(policy: LendingPolicy, location: String?) {
        self.policy = policy
        self.location = location
    }

    /// The active session, if any (expired sessions are dropped).
    public func currentSession() -> ArmSession? {
        let t = now()
        if let s = session, !s.isActive(at: t) { session = nil }
        return session
    }

    /// Arms the reader for a user from a client (`Arm(userId)`), replacing any session.
    /// - Throws: ``LendingError/noSuchUser(_:)``.
    @discardableResult
    public func arm(userId: UserID) async throws -> ArmSession {
        guard let user = try await store.user(id: userId) else { throw LendingError.noSuchUser(userId) }
        let new = LendingRules.arm(user, badgeIdentifier: nil, now: now(), policy: policy)
        session = new
        return new
    }

    /// Clears the session; returns the outcome for the person at the reader.
    @discardableResult
    public func disarm() -> TapOutcome {
        let previous = currentSession()
        session = nil
        return .disarmed(previous?.user.id)
    }

    /// Identifies a tap (device-tag.md order), decides with ``LendingRules`` and performs the
    /// store operation. Store failures become ``TapOutcome/failed(reason:)``.
    public func handle(_ tap: TagTap) async -> TapOutcome {
        let identity: TapIdentity
        do {
            identity = try await identify(tap)
        } catch {
            return .failed(reason: "\(error)")
        }
        let decision = LendingRules.decide(identity, session: session, now: now(), policy: policy, location: location)
        do {
            switch decision.operation {
            case .lend(let request):
                _ = try await store.lend(request)
            case .returnDevice(let request):
                _ = try await store.returnDevice(request)
            case nil:
                break
            }
        } catch {
            return .failed(reason: "\(error)")
        }
        // Only a badge changes the session; otherwise keep whatever is current now (a client
        // may have armed or disarmed while the store was working).
        if case .armed = decision.outcome { session = decision.session }
        return decision.outcome
    }

    private func identify(_ tap: TagTap) async throws -> TapIdentity {
        if let id = tap.deviceIdOnTag, let record = try await store.device(id: id) {
            return TapIdentification.identify(tap, deviceOnTag: record, uidBinding: nil)
        }
        let binding = try await store.resolve(uid: tap.uid)
        return TapIdentification.identify(tap, deviceOnTag: nil, uidBinding: binding)
    }
}
