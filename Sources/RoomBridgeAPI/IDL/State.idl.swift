extension InterfaceIDL {
    /// The Varlink IDL of `io.roombridge.State`, as returned by `GetInterfaceDescription`.
    public static let state = """
        # The state of a RoomBridge daemon (NFC readers, taps, the curtain, lending, presence)
        # and a stream of its changes. Times are ISO 8601 UTC strings.
        interface io.roombridge.State

        # An NFC reader.
        type Reader (
          name: string,
          connstring: ?string,
          state: (connected, disconnected),
          lastError: ?string,
          since: string
        )

        \(TagTypesIDL.text)
        # A tag leaving a reader's field.
        type TagRemoval (reader: string, uid: string, presentMillis: float, at: string)

        # A device tag write request and its outcome.
        type TagWrite (
          deviceId: string,
          phase: (armed, done, failed, cancelled),
          lock: bool,
          uid: ?string,
          message: ?string,
          at: string
        )

        \(CurtainTypesIDL.text)
        \(LendingArmTypeIDL.text)

        # What a tap or a lending request did. refusal: why a refused one changed nothing (set with
        # kind refused, and only then); reason: why a failed one failed, and for a refused one the
        # refusal's name again (for clients older than refusal, until the next release). During a
        # stocktake a device tap is counted (reason again when it was counted before) and a tag that is
        # not in the inventory is unexpected (uid); a badge is refused with refusal stocktake.
        type LendingOutcome (
          kind: (armed, disarmed, lent, returned, badgeRequired, refused, unknownTag, unknownDevice, failed, counted, unexpected),
          refusal: ?(deviceBroken, deviceDisposed, alreadyLent, alreadyReturned, limitReached, unregisteredTag, booked, stocktake),
          deviceId: ?string,
          # The device's model, and for lent its rental's due date (absent: open-ended), as the store has them.
          model: ?string,
          dueAt: ?string,
          userId: ?string,
          userName: ?string,
          # For lent: the due date was clipped to a booking that starts then. For refused booked: when the
          # booking starts, and bookedFor the booker's name (userId the booker's ID).
          bookedFrom: ?string,
          bookedFor: ?string,
          uid: ?string,
          reader: ?string,
          reason: ?string,
          message: string,
          at: string,
          # Another kiosk on the same database did it: its lending location ("another kiosk" without one).
          origin: ?string
        )

        # The open stocktake: the kiosk is counting (taps record devices as found and lend nothing).
        # scope: all, group or location, scopeValue the group's ID or the location's name.
        type StocktakeStatus (
          id: int,
          scope: string,
          scopeValue: ?string,
          startedAt: string,
          counted: int,
          unexpected: int
        )

        # overdue: how many active rentals are past their due date (absent until known); stocktake: the
        # open stocktake, while one is.
        type Lending (armed: ?LendingArm, remainingSeconds: ?float, lastOutcome: ?LendingOutcome, overdue: ?int,
                      stocktake: ?StocktakeStatus)

        # A rental that passed its due time, announced once per rental and due date (kept across
        # restarts; a renewal sets a new due date).
        # An outbox target has been failing for longer than outbox.failing_alert (failing: true,
        # since when, the last error), or accepts deliveries again after that (failing: false).
        type OutboxNotice (target: string, failing: bool, since: string, lastError: ?string, message: string)

        # A stocktake started or was closed (status as it was then).
        type StocktakeNotice (change: (started, closed), status: StocktakeStatus, message: string)

        # A booking was made or cancelled; by: who did it (a user ID, unix:NAME, or web:NAME via unix:USER).
        type BookingNotice (
          change: (booked, cancelled),
          bookingId: int,
          deviceId: string,
          model: string,
          userId: string,
          userName: string,
          startsAt: string,
          endsAt: string,
          by: ?string,
          message: string
        )

        type Overdue (
          rentalId: int,
          deviceId: string,
          model: string,
          userId: string,
          userName: string,
          dueAt: string,
          message: string
        )

        type Counters (
          events: int,
          taps: int,
          removals: int,
          lent: int,
          returned: int,
          refused: int,
          curtainRequests: int,
          subscribers: int,
          subscribersDropped: int
        )

        \(PresenceTypesIDL.text)
        # The lending database: its backend, and since when it does not answer (offlineSince
        # set: taps and changes are refused and nothing is recorded until it answers again).
        type Database (
          backend: (sqlite, postgresql),
          offlineSince: ?string,
          offlineReason: ?string
        )

        # Everything the daemon knows; seq is the number of the last event included.
        # timeZone: the kiosk's time zone (lending.time_zone, else the system's), a tz database
        # name such as Asia/Tokyo; clients show times and read days in it, while every time on
        # the wire stays UTC.
        # curtains: every configured curtain, sorted by id; curtain: the only one, or with several
        # the first (connection disabled when none is configured).
        type State (
          seq: int,
          startedAt: string,
          timeZone: string,
          readers: []Reader,
          lastTap: ?Tap,
          tagWrite: ?TagWrite,
          curtain: Curtain,
          curtains: []Curtain,
          lending: Lending,
          counters: Counters,
          presence: Presence,
          database: Database
        )

        # A curtain's battery fell to threshold (20, 10 or 5 percent): once per crossing; it starts
        # over once the battery is back above 25 percent.
        type BatteryNotice (curtain: string, battery: int, threshold: int)

        # One change, numbered from 1 without gaps; the field named by kind is set.
        # A curtain event carries the whole curtain named by its id; a curtain removed from the
        # configuration by a reload comes once with connection disabled.
        type Event (
          seq: int,
          at: string,
          kind: (reader, tagArrived, tagRemoved, tagWrite, curtain, lending, presence, overdue, outbox, booking, stocktake, battery),
          reader: ?Reader,
          tap: ?Tap,
          removal: ?TagRemoval,
          tagWrite: ?TagWrite,
          curtain: ?Curtain,
          lending: ?LendingOutcome,
          presence: ?PresenceChange,
          overdue: ?Overdue,
          outbox: ?OutboxNotice,
          booking: ?BookingNotice,
          stocktake: ?StocktakeNotice,
          battery: ?BatteryNotice
        )

        # What the daemon was started with: the configuration file it read (null: none),
        # its database, its socket path, and the readers and curtain it was told to use.
        type Configuration (
          configPath: ?string,
          databasePath: string,
          socketPath: string,
          nfcEnabled: bool,
          nfcReaders: []string,
          curtainEnabled: bool,
          curtainAddress: ?string
        )

        # A curtain's position (percent open) from at on; absent while it was unknown.
        type TimelinePoint (at: string, position: ?int)

        # One curtain's positions as they changed, oldest first.
        type CurtainTrack (id: string, points: []TimelinePoint)

        # A stay in a presence region: from an entry until the exit (absent: still there).
        type Stay (from: string, until: ?string)

        # One region's stays, oldest first; label: whom or what it stands for, as a person reads it.
        type PresenceTrack (region: string, label: string, stays: []Stay)

        # Today in the room on one time axis: every configured curtain's position and every presence
        # region that was entered today, from the kiosk's midnight in timeZone (or the daemon's start,
        # when that was later: the daemon keeps this in memory only) until now.
        type Timeline (
          from: string,
          until: string,
          timeZone: string,
          curtains: []CurtainTrack,
          presence: []PresenceTrack
        )

        # The whole state now.
        method GetState() -> (state: State)

        # Today's curtain positions and presence stays (the dashboard's time axis).
        method GetTimeline() -> (timeline: Timeline)

        # The daemon's configuration file, database and devices (read-only; roombridgectl doctor).
        method GetConfiguration() -> (configuration: Configuration)

        # Call with "more": the first reply carries the whole state, every later reply one
        # event, until the client hangs up. A client that reconnects passes the seq of the
        # last event it saw as since: if the daemon still keeps every later event (the latest
        # state.replay_buffer events, 1024 by default), the first reply is resumedAfter = since
        # and the missed events follow; otherwise (since is older than that, or newer than the
        # latest event, as after a restart) the first reply is the whole state, as without
        # since, and the client must take it in place of what it knew.
        method Watch(since: ?int) -> (state: ?State, event: ?Event, resumedAfter: ?int)

        # Changes the daemon's log level until it restarts. Needs the authorised group.
        method SetLogLevel(level: (trace, debug, info, notice, warning, error, critical)) -> ()

        # The caller may not use this method: join the group, then log in again.
        error PermissionDenied (group: string, hint: string)

        # The Watch client fell more than bufferLimit events behind and was dropped.
        error SubscriberTooSlow (bufferLimit: int)

        # The daemon is shutting down.
        error ShuttingDown ()
        """
}
