import RoomBridgeCore

extension LendingCoordinator {
    /// Reports a lend, return or renewal made by another kiosk sharing the database to Watch clients
    /// (``LendingOutcome/origin`` names that kiosk), and updates the overdue count it may have changed.
    public func announceRemote(_ change: RentalChange) async {
        let rental = change.rental
        let origin: String
        let kind: LendingOutcome.Kind
        let message: String
        switch change.kind {
        case .lent:
            origin = rental.location ?? "another kiosk"
            kind = .lent
            message = "\(rental.model) (\(rental.deviceId)) lent to \(rental.userName) at \(origin)."
        case .returned:
            origin = rental.returnLocation ?? "another kiosk"
            kind = .returned
            message = "\(rental.model) (\(rental.deviceId)) returned at \(origin) (lent to \(rental.userName))."
        case .changed:
            // A renewal or a note: no lending event of its own; the overdue count may have moved.
            await refreshOverdue()
            return
        }
        await state.recordRemoteLending(LendingOutcome(
            kind: kind, deviceId: rental.deviceId, model: rental.model, dueAt: kind == .lent ? rental.dueAt : nil,
            userId: rental.userId, userName: rental.userName, message: message,
            at: rental.returnedAt ?? rental.rentedAt, origin: origin))
        await refreshOverdue()
    }
}
