/// The typed errors of `io.roombridge.Inventory` and `io.roombridge.Lending` (mapped from `LendingError` by
/// RoomBridgeInterfaces' `LendingWireErrors`).
enum LendingErrorsIDL {
    /// Error declarations shared by both interfaces' IDL. Every error carries `message`, the
    /// text that says what to do.
    static let text = """
        # No device has this ID.
        error NoSuchDevice (deviceId: string, message: string)

        # No user has this ID.
        error NoSuchUser (userId: string, message: string)

        # No device group has this ID.
        error NoSuchGroup (groupId: string, message: string)

        # No badge has this identifier.
        error NoSuchBadge (identifier: string, message: string)

        # The tag UID is not bound to a device.
        error NoSuchTagBinding (uid: string, message: string)

        # No outbox entry has this sequence number (it may have been pruned).
        error NoSuchOutboxEntry (seq: int, message: string)

        # A device, user or group with this ID exists already.
        error AlreadyExists (kind: (device, user, group), id: string, message: string)

        # The group still has devices.
        error GroupInUse (groupId: string, deviceCount: int, message: string)

        # The device is lent; return it first.
        error DeviceIsLent (deviceId: string, userId: string, message: string)

        # The user still has devices; return them first.
        error UserHasDevices (userId: string, deviceIds: []string, message: string)

        # The UID is already bound to a device tag or a badge.
        error UidAlreadyBound (uid: string, boundTo: string, message: string)

        # A field value is not acceptable; rule names the validation rule it breaks, if one
        # does: blankName, idCharacters, idCaseCollision, nameTooLong, idTooLong, unknownStatus,
        # noteTooLong.
        error InvalidField (field: string, reason: string, message: string, rule: ?string)

        # A page cursor this daemon did not issue; start again without one.
        error InvalidCursor (cursor: string, message: string)

        # The device has an active rental.
        error AlreadyLent (deviceId: string, userId: string, userName: string, since: string, message: string)

        # The device is not lent.
        error NotLent (deviceId: string, message: string)

        # The device's status does not allow lending.
        error NotLendable (deviceId: string, status: (normal, broken, disposed), message: string)

        # The user already has as many devices as lending.max_active_per_user (limit) allows;
        # deviceIds: theirs, oldest first. Return one first.
        error LimitReached (userId: string, userName: string, limit: int, deviceIds: []string, message: string)

        # The device is booked for userName (userId) from startsAt, which has come or is within
        # lending.booking_guard: it is kept for them. Lend another device.
        error Booked (deviceId: string, userId: string, userName: string, startsAt: string, message: string)

        # The device is lent to userName until dueAt (absent: open-ended); book it from then on.
        error BookedWhileLent (deviceId: string, userName: string, dueAt: ?string, message: string)

        # Booking bookingId of the device (userName's, startsAt to endsAt) holds part of the time.
        error BookingOverlaps (deviceId: string, bookingId: int, userName: string, startsAt: string, endsAt: string, message: string)

        # No booking has this number.
        error NoSuchBooking (bookingId: int, message: string)

        # The booking was fulfilled or cancelled already.
        error BookingNotCancellable (bookingId: int, state: (booked, fulfilled, cancelled), message: string)

        # A stocktake is open already; close it before starting another.
        error StocktakeOpen (stocktakeId: int, message: string)

        # No stocktake has this number.
        error NoSuchStocktake (stocktakeId: int, message: string)

        # The stocktake was closed already.
        error StocktakeClosed (stocktakeId: int, message: string)

        # No user is armed at the reader.
        error NotArmed (message: string)

        # The disk holding the database is full; nothing was recorded. Free space and retry.
        error StorageFull (directory: string, message: string)

        # The database server cannot be reached since `since`; nothing was recorded. Try again:
        # the daemon reconnects by itself.
        error StorageOffline (since: string, message: string)

        # The connection to the database server was lost while the change was being committed:
        # it may or may not have been recorded. Look before trying again.
        error StorageOutcomeUnknown (detail: string, message: string)

        # The database failed an integrity check; changes are refused (reads still work) until
        # it is restored from a backup or reindexed. Nothing was recorded.
        error StorageCorrupt (path: string, detail: string, message: string)
        """
}
