extension InterfaceIDL {
    /// The Varlink IDL of `io.roombridge.Lending`, as returned by `GetInterfaceDescription`.
    public static let lending = """
        # Lending by device ID (as a tap at the reader would), rentals and history. Every
        # outcome is also published as a lending event of io.roombridge.State.Watch. Lists are
        # paged: pass limit (1...1000, default 100) and the nextCursor of the previous page.
        # Times are ISO 8601 UTC strings; inputs also accept YYYY-MM-DD. Arm, Disarm, Lend,
        # Return, Renew, Book, CancelBooking, StartStocktake and CloseStocktake need the authorised group; others get io.roombridge.State.PermissionDenied.
        interface io.roombridge.Lending

        \(RentalTypeIDL.text)

        \(LendingArmTypeIDL.text)

        \(LendingArmTypeIDL.formerSession)

        # Arms the reader for a user, as their badge would.
        method Arm(userId: string) -> (session: LendingArm)

        # Ends the armed session.
        method Disarm() -> ()

        # The armed session, if any.
        method GetSession() -> (session: ?LendingArm)

        # Lends a device; dueAt defaults to the configured loan period (none: open-ended).
        # lentBy records the caller's Unix user; a trusted front end (root, auth.actor_users)
        # may pass actor, the person signed in to it ("web:NAME via unix:USER").
        method Lend(deviceId: string, userId: string, dueAt: ?string, actor: ?string) -> (rental: Rental)

        # Returns a lent device. returnedBy: the user who brought it back; without it the
        # caller's Unix user (or actor, as in Lend) is recorded. note: the device's condition
        # ("cracked screen"), kept in the history; broken: also set the device's status to broken
        # (a normal device), in the same transaction.
        method Return(deviceId: string, returnedBy: ?string, actor: ?string, note: ?string, broken: ?bool) -> (rental: Rental)

        # Renews the device's active rental until dueAt (in the future): the rental goes on —
        # nothing is returned or lent again — and the device log records the new due date and
        # who renewed it (actor as in Lend). NotLent when the device is not lent.
        method Renew(deviceId: string, dueAt: string, actor: ?string) -> (rental: Rental)

        # A reservation of one device for one user from startsAt to endsAt; bookings of one device
        # never overlap. state: booked (waiting, or running and not taken up), fulfilled (the booker
        # borrowed the device under it: rentalId), cancelled. model and userName are copies kept after
        # deletion, as a rental's are; bookedBy and cancelledBy name who did it, as lentBy does.
        type Booking (
          id: int,
          deviceId: string,
          model: string,
          userId: string,
          userName: string,
          startsAt: string,
          endsAt: string,
          state: (booked, fulfilled, cancelled),
          bookedAt: string,
          bookedBy: ?string,
          cancelledAt: ?string,
          cancelledBy: ?string,
          rentalId: ?int
        )

        # Books a device for a user (an admin may book on anyone's behalf; actor as in Lend).
        # BookingOverlaps when another booking holds part of the time, BookedWhileLent when the
        # device is lent past startsAt. While a booking runs, or starts within lending.booking_guard,
        # a lend to anyone else is refused (Booked) and the booker's lend fulfils it; an earlier lend
        # is due by its start. Published as a booking event of io.roombridge.State.Watch.
        method Book(deviceId: string, userId: string, startsAt: string, endsAt: string, actor: ?string) -> (booking: Booking)

        # Cancels a booking that is still booked (BookingNotCancellable otherwise).
        method CancelBooking(id: int, actor: ?string) -> (booking: Booking)

        # Bookings that overlap [from, until), by start time; cancelled ones only with includeCancelled.
        method ListBookings(
          deviceId: ?string,
          userId: ?string,
          from: ?string,
          until: ?string,
          includeCancelled: ?bool,
          limit: ?int,
          cursor: ?string
        ) -> (bookings: []Booking, nextCursor: ?string)

        # A count of the shelf by tapping. scope: all, group (scopeValue: the group's ID) or location
        # (scopeValue: a lending.location; the devices whose last rental came back there). counted:
        # devices of the inventory tapped so far; unexpected: tags tapped that are not in it.
        type Stocktake (
          id: int,
          scope: (all, group, location),
          scopeValue: ?string,
          startedAt: string,
          startedBy: ?string,
          closedAt: ?string,
          closedBy: ?string,
          counted: int,
          unexpected: int
        )

        # One line of a stocktake's report, kept by value. list: found (in scope and tapped), missing
        # (in scope, not lent, not tapped), lent (in scope, lent, not tapped: userId/userName has it),
        # unexpected (a tag not in the inventory, uid; or a device outside the scope).
        type StocktakeEntry (
          list: (found, missing, lent, unexpected),
          deviceId: ?string,
          model: ?string,
          serialNumber: ?string,
          userId: ?string,
          userName: ?string,
          uid: ?string,
          tappedAt: ?string,
          location: ?string
        )

        # A stocktake and its entries (none while it is open), found, missing, lent, unexpected, each by device ID.
        type StocktakeReport (stocktake: Stocktake, entries: []StocktakeEntry)

        # Starts a stocktake: until it is closed, a device tap at any kiosk on the database counts the
        # device (a lending event of kind counted) and lends nothing; a tag not in the inventory is noted
        # as unexpected. One at a time (StocktakeOpen). Published as a stocktake event of Watch.
        method StartStocktake(scope: (all, group, location), scopeValue: ?string, actor: ?string) -> (stocktake: Stocktake)

        # Closes the open stocktake (or id) and stores its four lists by value.
        method CloseStocktake(id: ?int, actor: ?string) -> (report: StocktakeReport)

        # A stocktake with its report; without id the open one (NoSuchStocktake when none is).
        method GetStocktake(id: ?int) -> (report: StocktakeReport)

        # Stocktakes, newest first.
        method ListStocktakes(limit: ?int, cursor: ?string) -> (stocktakes: []Stocktake, nextCursor: ?string)

        # A stocktake's report as text: csv (as ExportHistory: RFC 4180, CRLF, dates in timeZone,
        # byteOrderMark for Excel) or json (an array of entries).
        method ExportStocktake(
          id: int,
          format: (csv, json),
          timeZone: ?string,
          byteOrderMark: ?bool
        ) -> (text: string, count: int)

        # How often a device was lent in the month.
        type DeviceCount (deviceId: string, model: string, lends: int)

        # One rental of a borrower's that was out in the month.
        type Holding (deviceId: string, model: string, rentedAt: string, dueAt: ?string, returnedAt: ?string)

        # A borrower and what they had in the month, by lend time.
        type Borrower (userId: string, userName: string, rentals: []Holding)

        # A calendar month of lending in timeZone (from: its first instant, until: the next month's):
        # lends and returns in it, rentals whose due date fell in it (up to now) and were not back by
        # then, the ten most lent devices, and everyone who had a device in it, by name.
        type MonthlyReport (
          month: string,
          timeZone: string,
          from: string,
          until: string,
          lends: int,
          returns: int,
          overdue: int,
          topDevices: []DeviceCount,
          borrowers: []Borrower
        )

        # The lending report of month (YYYY-MM) in timeZone (default the kiosk's, State.timeZone).
        method GetMonthlyReport(month: string, timeZone: ?string) -> (report: MonthlyReport)

        # One group's devices now (disposed ones left out unless lent): lent, of those overdue,
        # available (not lent, normal) and broken (not lent).
        type GroupLoad (groupId: string, name: string, devices: int, lent: int, overdue: int, available: int, broken: int)

        # One day of timeZone: devices lent that day, and rentals that fell overdue that day
        # (due in it, before now, and not back by their due time).
        type DayLoad (day: string, lends: int, overdue: int)

        # A device with no rental at all.
        type IdleDevice (deviceId: string, model: string, registeredAt: string)

        # Lending at a glance: now, by group; the days that end with today (from: the first day's
        # first instant, until: now), one DayLoad each, oldest first; the median length of the
        # rentals returned in them (seconds); the ten most lent devices in them; and the devices
        # never lent (how many, and the first twenty by ID).
        type Dashboard (
          timeZone: string,
          from: string,
          until: string,
          groups: []GroupLoad,
          days: []DayLoad,
          medianRentalSeconds: ?int,
          topDevices: []DeviceCount,
          neverLentCount: int,
          neverLent: []IdleDevice
        )

        # The dashboard of the last days days (default 30, at most 366) of timeZone (default the kiosk's).
        method GetDashboard(days: ?int, timeZone: ?string) -> (dashboard: Dashboard)

        # Active rentals, oldest first.
        method ListActive(userId: ?string, limit: ?int, cursor: ?string) -> (rentals: []Rental, nextCursor: ?string)

        # Active rentals past their due date, most overdue first.
        method ListOverdue(limit: ?int, cursor: ?string) -> (rentals: []Rental, nextCursor: ?string)

        # Rentals that started in [since, until), newest first; returnedOnly leaves out active ones.
        method History(
          deviceId: ?string,
          userId: ?string,
          since: ?string,
          until: ?string,
          returnedOnly: ?bool,
          limit: ?int,
          cursor: ?string
        ) -> (rentals: []Rental, nextCursor: ?string)

        # The matching history as text, newest first: csv (RFC 4180, CRLF, spreadsheet dates in
        # timeZone, default the kiosk's, State.timeZone; byteOrderMark for Excel) or json (an array). Without limit the
        # whole history in one reply; with limit one page: a CSV page after the first has no
        # header line (and no byte order mark), so the pages concatenate into one file.
        method ExportHistory(
          deviceId: ?string,
          userId: ?string,
          since: ?string,
          until: ?string,
          returnedOnly: ?bool,
          format: (csv, json),
          timeZone: ?string,
          byteOrderMark: ?bool,
          limit: ?int,
          cursor: ?string
        ) -> (text: string, count: int, nextCursor: ?string)

        """ + LendingErrorsIDL.text
}
