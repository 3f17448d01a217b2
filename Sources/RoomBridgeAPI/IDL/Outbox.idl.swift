extension InterfaceIDL {
    public static let outbox = """
        # The outbox: every lend, return, renewal and overdue event, written in the same
        # transaction as the change, waits here for each configured target until it is delivered
        # (HTTP POST, retried with backoff). Retry and Drop need the authorised group; others get
        # io.roombridge.State.PermissionDenied. Times are ISO 8601 UTC strings.
        interface io.roombridge.Outbox

        # How many entries of a target are in each state; failing: pending entries whose last
        # attempt failed. configured: false for a target no longer in the configuration.
        type TargetCounts (
          target: string,
          configured: bool,
          pending: int,
          failing: int,
          delivered: int,
          dropped: int
        )

        # One event for one target. eventId is the Idempotency-Key receivers deduplicate by.
        # due, digest and booking are reminders; battery says a curtain's battery is low. A digest's
        # and a battery notice's deviceId is empty.
        type Entry (
          seq: int,
          eventId: string,
          target: string,
          kind: (lend, return, renew, overdue, due, digest, booking, battery),
          deviceId: string,
          state: (pending, delivered, dropped),
          attempts: int,
          createdAt: string,
          nextAttemptAt: string,
          lastError: ?string,
          deliveredAt: ?string
        )

        # Counts per target, by name.
        method Status() -> (targets: []TargetCounts)

        # Entries, newest first; state filters. Paged like io.roombridge.Lending's lists.
        method List(state: ?string, limit: ?int, cursor: ?string) -> (entries: []Entry, nextCursor: ?string)

        # Sends a pending or dropped entry again now (the device's later entries wait for it).
        method Retry(seq: int) -> ()

        # Drops a pending entry: it is never sent, and the device's later entries go on.
        method Drop(seq: int) -> ()

        """ + LendingErrorsIDL.text
}
