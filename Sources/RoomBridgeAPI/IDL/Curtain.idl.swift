extension InterfaceIDL {
    public static let curtain = """
        # The BLE curtains: their state, motions and the controllers' own schedules.
        # The controller is the source of truth: state comes from what it notifies.
        # Commands return once the controller accepted the write; follow the motion with
        # io.roombridge.State.Watch (curtain events). Commands need the authorised group.
        #
        # Every method takes name: the curtain's name in the configuration (Curtain.id).
        # It may be left out while one curtain is configured; with several it is required
        # (InvalidParameter names the configured ones and the groups). A group's name (the
        # configuration's [curtain.groups]), "all" or "*" acts on its curtains at once, in
        # parallel: such a call replies with outcomes, one per curtain in the group's order,
        # each saying whether that curtain took the command or why not (a curtain's refusal is
        # its outcome, not an error of the call). A call naming one curtain replies without
        # outcomes and fails with that curtain's error. Curtains beyond the adapter's
        # connection budget (curtain.connections) wait in line; the reply comes once each took
        # the command or refused it.
        interface io.roombridge.Curtain
        # Every method that acts takes actor: a trusted front end (root, auth.actor_users) names the
        # person signed in to it, as in io.roombridge.Lending.Lend; the request records who asked
        # (lastRequest.by) and, when the curtain refuses it, why (lastRequest.refused).

        \(CurtainTypesIDL.text)
        # What a group command did on one curtain: moving (an open, close or move was taken),
        # done (a command that is no motion was taken), manual (refused: someone moves it by
        # hand), unreachable (refused: no link could be made), failed (refused otherwise; error
        # names the error and message says why). battery: percent, where the curtain reports it;
        # lowBattery: at or below 20 %.
        type CurtainOutcome (
          curtain: string,
          outcome: (moving, done, manual, unreachable, failed),
          error: ?string,
          message: ?string,
          battery: ?int,
          lowBattery: bool
        )

        # A group of curtains of the configuration ([curtain.groups]): its name and its curtains.
        type CurtainGroup (name: string, curtains: []string)

        # The curtain named name (without name: the only one, or the first by name; a group: its
        # first curtain), every configured curtain, sorted by name, and the groups, sorted by name.
        method GetState(name: ?string) -> (curtain: Curtain, curtains: []Curtain, groups: []CurtainGroup)

        # Opens fully.
        method Open(name: ?string, actor: ?string) -> (outcomes: ?[]CurtainOutcome)

        # Closes fully.
        method Close(name: ?string, actor: ?string) -> (outcomes: ?[]CurtainOutcome)

        # Stops a motion.
        method Stop(name: ?string, actor: ?string) -> (outcomes: ?[]CurtainOutcome)

        # Moves to position percent open (0 closed, 100 open).
        method MoveTo(position: int, name: ?string, actor: ?string) -> (outcomes: ?[]CurtainOutcome)

        # Writes the controller's schedule: times HH:MM (24-hour, the controller's clock) and
        # whether each is enabled. Allowed during a wall-switch motion.
        method SetSchedule(open: string, close: string, openEnabled: bool, closeEnabled: bool, name: ?string, actor: ?string) -> (outcomes: ?[]CurtainOutcome)

        # Asks the controller for its state and schedule again.
        method Sync(name: ?string, actor: ?string) -> (outcomes: ?[]CurtainOutcome)

        # Drops the link (if any) and searches for the curtain again.
        method Reconnect(name: ?string, actor: ?string) -> (outcomes: ?[]CurtainOutcome)

        # The wall switch is moving the curtain: the person at the switch wins. Nothing was
        # written; try again when the motion has stopped.
        error ManualOperationActive (message: string)

        # There is no link to the curtain now (commands are not queued). message says why.
        error NotConnected (message: string)

        # A parameter was refused before anything was written.
        error InvalidParameter (parameter: string, message: string)

        # The controller refused the command (an ATT error).
        error RejectedByDevice (message: string)

        # curtain.enabled is false in the configuration.
        error Disabled (message: string)

        # Bluetooth failed otherwise (BlueZ busy, no answer in time, bluetoothd not running).
        error BluetoothFailed (message: string)

        # The curtain keeps no schedule, so the daemon keeps it in its database, and the database
        # did not take the new one. The old schedule stays in effect; message says why. Check the
        # database (roombridgectl doctor) and try again.
        error ScheduleNotStored (message: string)
        """
}

/// The IDL types of the curtain, shared by `io.roombridge.State` and `io.roombridge.Curtain`
/// (Varlink interfaces cannot refer to each other's types, so each declares them; the text is one).
enum CurtainTypesIDL {
    static let text = """
        # An open or close time (HH:MM, 24-hour, the controller's clock) and whether it is enabled.
        type ScheduleEntry (time: string, enabled: bool)

        # The last request made of the curtain. by: who asked ("unix:aiko", "web:Aiko via
        # unix:roombridge-web"; absent when the daemon itself asked). refused: why the curtain
        # refused it (absent while it is carried out or once it was accepted).
        type CurtainRequest (
          kind: (search, open, close, stop, moveTo, setSchedule, sync, reconnect),
          position: ?int,
          at: string,
          by: ?string,
          refused: ?string
        )

        # A curtain. id: its name in the configuration (what name parameters take); name: what the
        # device advertises. position and target are percent open (0 closed, 100 open).
        # manual: the latest motion was started by the wall switch (or, for curtains without such a flag, was a
        # motion the daemon did not command: SwitchBot touch-and-go, the AM43's remote).
        # finishesAt: while it moves, when the motion should end, from its measured speed.
        # profile: roombridge, switchbot or am43. scheduleSource: device when the curtain keeps its schedule,
        # daemon when it keeps none. battery and light: percent, where the curtain reports them.
        # connection standby: an on-demand curtain (switchbot) between commands; the link is released, its state
        # comes from its advertisements, and the next command connects (commands are taken as when connected).
        type Curtain (
          id: ?string,
          connection: (disabled, searching, connecting, connected, disconnected, standby),
          address: ?string,
          name: ?string,
          lastRequest: ?CurtainRequest,
          motion: (idle, opening, closing),
          position: ?int,
          target: ?int,
          openSchedule: ?ScheduleEntry,
          closeSchedule: ?ScheduleEntry,
          manual: bool,
          scheduled: bool,
          lastError: ?string,
          profile: ?string,
          scheduleSource: ?(device, daemon),
          battery: ?int,
          light: ?int,
          finishesAt: ?string
        )

        """
}
