extension InterfaceIDL {
    /// The Varlink IDL of `io.roombridge.Inventory`, as returned by `GetInterfaceDescription`.
    public static let inventory = """
        # The lending inventory: device groups, devices and their change log, users, badges
        # and device tag bindings. Lists are paged: pass limit (1...1000, default 100) and
        # the nextCursor of the previous page. Times are ISO 8601 UTC strings; inputs also
        # accept YYYY-MM-DD. Methods that change things need the authorised group; others get
        # io.roombridge.State.PermissionDenied.
        interface io.roombridge.Inventory

        # A kind of device.
        type Group (id: string, name: string, sortOrder: int)

        \(RentalTypeIDL.text)

        # A device; rental is its active rental (absent when it is available).
        type Device (
          id: string,
          groupId: string,
          model: string,
          serialNumber: string,
          osVersion: string,
          status: (normal, broken, disposed),
          connectorType: string,
          registeredAt: string,
          note: ?string,
          isNfcRegistered: bool,
          rental: ?Rental
        )

        # The fields of a new device, or the fields to change (absent fields: unchanged or
        # default). An empty note clears it.
        type DeviceFields (
          groupId: ?string,
          model: ?string,
          serialNumber: ?string,
          osVersion: ?string,
          status: ?(normal, broken, disposed),
          connectorType: ?string,
          registeredAt: ?string,
          note: ?string
        )

        # One changed field of a device; actor: who changed it (a user ID, unix:NAME, or
        # web:NAME via unix:USER), absent for changes recorded before actors were.
        type LogEntry (
          id: int,
          deviceId: string,
          operation: (add, update, delete),
          field: string,
          oldValue: ?string,
          newValue: ?string,
          at: string,
          actor: ?string
        )

        type User (id: string, name: string, registeredAt: string)

        # A user's card; identifier is upper-case hex (ISO 14443-A UID or FeliCa IDm).
        type Badge (
          identifier: string,
          kind: (iso14443a, felica),
          userId: string,
          registeredAt: string,
          label: ?string
        )

        # A device tag's UID bound to a device.
        type TagBinding (uid: string, deviceId: string, boundAt: string)

        method ListGroups() -> (groups: []Group)
        method AddGroup(group: Group) -> ()
        method UpdateGroup(group: Group) -> ()
        method DeleteGroup(id: string) -> ()

        # Adds a device; groupId and model are required. The log records the caller's Unix user
        # as actor; a trusted front end (root, auth.actor_users) may pass actor, the name of the
        # person signed in to it, recorded as "web:NAME via unix:USER".
        method AddDevice(id: string, fields: DeviceFields, actor: ?string) -> (device: Device)

        # Changes the given fields; changes lists the log rows written (empty: nothing changed).
        # actor as in AddDevice.
        method UpdateDevice(id: string, fields: DeviceFields, actor: ?string) -> (device: Device, changes: []LogEntry)

        # Deletes a device that is not lent; its history and log stay. actor as in AddDevice.
        method DeleteDevice(id: string, actor: ?string) -> ()

        method GetDevice(id: string) -> (device: Device, tags: []TagBinding)

        # A line of an import file that cannot be imported (line 1 is the header).
        type ImportProblem (line: int, reason: string)

        # Imports a CSV file (UTF-8, a header row, a BOM accepted) of users (id, name), badges
        # (identifier, user_id[, kind, label]) or devices (id, group_id, model[, serial_number,
        # os_version, status, connector_type, note]), in one transaction, idempotent by ID: new
        # records are added, differing ones updated, equal ones unchanged. Every bad line is a
        # problem; nothing is written (written: false) when there is one, unless partial, nor in
        # a dryRun, which reports what would change. actor as in AddDevice.
        method Import(kind: (users, badges, devices), csv: string, dryRun: ?bool, partial: ?bool, actor: ?string)
          -> (added: []string, updated: []string, unchanged: []string, problems: []ImportProblem, written: bool)

        # text: case-insensitive substring of ID, model or serial number.
        method ListDevices(
          groupId: ?string,
          status: ?(normal, broken, disposed),
          isLent: ?bool,
          isNfcRegistered: ?bool,
          text: ?string,
          limit: ?int,
          cursor: ?string
        ) -> (devices: []Device, nextCursor: ?string)

        # A device's change log, newest first (also for deleted devices).
        method DeviceLog(id: string, limit: ?int, cursor: ?string) -> (entries: []LogEntry, nextCursor: ?string)

        method AddUser(id: string, name: string) -> (user: User)
        method UpdateUser(id: string, name: string) -> (user: User)

        # Deletes a user without devices, and their badges; their history stays. Their bookings
        # still to come are cancelled, by `actor`.
        method DeleteUser(id: string, actor: ?string) -> ()

        method GetUser(id: string) -> (user: User, badges: []Badge)
        method ListUsers(nameContains: ?string, limit: ?int, cursor: ?string) -> (users: []User, nextCursor: ?string)

        # Binds a card to a user. identifier: hex, separators allowed (04:A1:B2:C3);
        # kind defaults to iso14443a.
        method AddBadge(identifier: string, kind: ?(iso14443a, felica), userId: string, label: ?string) -> (badge: Badge)
        method DeleteBadge(identifier: string) -> ()
        # A user's badges; without userId every badge, paged by identifier.
        method ListBadges(userId: ?string, limit: ?int, cursor: ?string) -> (badges: []Badge, nextCursor: ?string)

        # Whose card is this: the badge with this identifier (any hex spelling) and its user.
        method GetBadge(identifier: string) -> (badge: Badge, user: User)

        # Binds a tag UID to a device (a tag without the device record, device-tag.md); the device
        # becomes NFC-registered. The device's log records who (the caller, or actor as in AddDevice).
        method BindTag(uid: string, deviceId: string, actor: ?string) -> (binding: TagBinding)
        method UnbindTag(uid: string, actor: ?string) -> ()
        method ListTagBindings(deviceId: string) -> (bindings: []TagBinding)

        """ + LendingErrorsIDL.text
}
