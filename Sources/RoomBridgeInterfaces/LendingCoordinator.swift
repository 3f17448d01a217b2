import Foundation
import Lending
import RoomBridgeCore

/// The one path every lending action takes — a tap at a reader or a client's request — so that
/// the store, the arm session and `SystemState` (and so every `Watch` client) agree.
///
/// It owns the ``LendingDesk`` (rules + store operation), publishes each outcome as a
/// `lending` event, mirrors the arm session into `SystemState`, and ends the session with a
/// `disarmed` event when it times out.
public actor LendingCoordinator {
    public let store: any InventoryStore
    private let desk: LendingDesk
    private let state: SystemState
    private var policy: LendingPolicy
    private var location: String?
    private let now: @Sendable () -> Date
    private var expiry: Task<Void, Never>?

    public init(store: any InventoryStore, state: SystemState, policy: LendingPolicy, location: String?,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.state = state
        self.policy = policy
        self.location = location
        self.now = now
        self.desk = LendingDesk(store: store, policy: policy, location: location, now: now)
    }

    /// New lending settings (a configuration reload), used from the next action on.
    public func reconfigure(policy: LendingPolicy, location: String?) async {
        self.policy = policy
        self.location = location
        await desk.reconfigure(policy: policy, location: location)
    }

    /// A tap at a reader: identifies it (device record, UID binding, badge), applies the rules,
    /// records the lend or return, and publishes the outcome.
    @discardableResult
    public func handleTap(uid: String, deviceIdOnTag: String?, reader: String) async -> TapOutcome {
        let outcome = await desk.handle(TagTap(uid: uid, deviceIdOnTag: deviceIdOnTag))
        await publish(outcome, uid: uid, reader: reader)
        return outcome
    }

    /// Arms lending for a user from a client (as a badge tap would).
    /// - Throws: `LendingError.noSuchUser`.
    @discardableResult
    public func arm(userId: UserID) async throws -> ArmSession {
        let previous = await desk.currentSession()
        let session = try await desk.arm(userId: userId)
        await publish(.armed(session, replacing: previous?.user.id), uid: nil, reader: nil)
        return session
    }

    /// Ends the lend session.
    @discardableResult
    public func disarm() async -> TapOutcome {
        let outcome = await desk.disarm()
        await publish(outcome, uid: nil, reader: nil)
        return outcome
    }

    /// The armed session, if any.
    public func session() async -> ArmSession? { await desk.currentSession() }

    /// Lends a device by ID (devices without a tag), with the default loan period unless `dueAt` is given.
    public func lend(deviceId: DeviceID, userId: UserID, dueAt: Date? = nil) async throws -> Rental {
        let t = now()
        let rental = try await store.lend(LendRequest(deviceId: deviceId, userId: userId, at: t,
                                                      dueAt: dueAt ?? policy.dueDate(for: t), location: location))
        await publish(.lent(deviceId: rental.deviceId, model: rental.model, userId: rental.userId,
                            userName: rental.userName, dueAt: rental.dueAt), uid: nil, reader: nil)
        return rental
    }

    /// Returns a device by ID.
    public func returnDevice(deviceId: DeviceID, returnedBy: UserID? = nil) async throws -> Rental {
        let rental = try await store.returnDevice(ReturnRequest(deviceId: deviceId, at: now(), returnedBy: returnedBy,
                                                                location: location))
        await publish(.returned(deviceId: rental.deviceId, model: rental.model, borrowerId: rental.userId,
                                borrowerName: rental.userName, returnedBy: returnedBy), uid: nil, reader: nil)
        return rental
    }

    // MARK: Publishing

    private func publish(_ outcome: TapOutcome, uid: String?, reader: String?) async {
        await state.recordLending(Self.coreOutcome(outcome, uid: uid, reader: reader, at: now()))
        await mirrorSession()
    }

    /// Copies the desk's session into `SystemState` and schedules its expiry.
    private func mirrorSession() async {
        let session = await desk.currentSession()
        await state.setArm(session.map {
            LendingArm(userId: $0.user.id, userName: $0.user.name, reader: nil, armedAt: $0.armedAt, expiresAt: $0.expiresAt)
        })
        expiry?.cancel()
        expiry = nil
        guard let session else { return }
        let seconds = max(0, session.expiresAt.timeIntervalSince(now()))
        expiry = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000) + 5))
            guard !Task.isCancelled else { return }
            await self?.expire(session)
        }
    }

    private func expire(_ session: ArmSession) async {
        guard await desk.currentSession() == nil else { return }  // renewed or replaced meanwhile
        await state.setArm(nil)
        await state.recordLending(LendingOutcome(kind: .disarmed, userId: session.user.id, userName: session.user.name,
                                                 message: "The lending session of \(session.user.name) timed out; tap a badge to lend again.",
                                                 at: now()))
        expiry = nil
    }

    /// The outcome as `SystemState` and clients see it.
    static func coreOutcome(_ outcome: TapOutcome, uid: String?, reader: String?, at: Date) -> LendingOutcome {
        var o = LendingOutcome(kind: .failed, uid: uid, reader: reader, message: outcome.message, at: at)
        switch outcome {
        case .armed(let session, _):
            o.kind = .armed; o.userId = session.user.id; o.userName = session.user.name
        case .disarmed(let user):
            o.kind = .disarmed; o.userId = user
        case .lent(let deviceId, _, let userId, let userName, _):
            o.kind = .lent; o.deviceId = deviceId; o.userId = userId; o.userName = userName
        case .returned(let deviceId, _, let borrowerId, let borrowerName, _):
            o.kind = .returned; o.deviceId = deviceId; o.userId = borrowerId; o.userName = borrowerName
        case .badgeRequired(let deviceId, _):
            o.kind = .badgeRequired; o.deviceId = deviceId
        case .refused(let deviceId, _, let status):
            o.kind = .refused; o.deviceId = deviceId
            o.reason = status == .broken ? "deviceBroken" : "deviceDisposed"
        case .unknownDevice(let deviceId, let tagUID):
            o.kind = .unknownDevice; o.deviceId = deviceId; o.uid = tagUID
        case .unknownTag(let tagUID):
            o.kind = .unknownTag; o.uid = tagUID
        case .failed(let reason):
            o.kind = .failed; o.reason = reason
        }
        return o
    }
}
