extension InterfaceIDL {
    /// The Varlink IDL of `io.roombridge.Presence`.
    public static let presence = """
        # Who or what is in the room: the iBeacon regions configured in presence.regions, the beacons
        # in each, how close they are. Times are ISO 8601 UTC strings.
        interface io.roombridge.Presence

        \(PresenceTypesIDL.text)
        # Every configured region and who or what is in it now; while not scanning, the reason and
        # the configured default place.
        method GetPresence() -> (presence: Presence)
        """
}

/// The presence types, shared by `io.roombridge.Presence` and `io.roombridge.State`.
enum PresenceTypesIDL {
    static let text = """
        # A beacon in a region. proximity: immediate (< 0.5 m), near (< 3 m), far, or unknown;
        # distance: estimated metres; rssi: smoothed, dBm; lastSeen: the last advertisement heard.
        type PresentBeacon (
          uuid: string,
          major: int,
          minor: int,
          proximity: (immediate, near, far, unknown),
          distance: ?float,
          rssi: ?float,
          lastSeen: string
        )

        # A configured region (a proximity UUID, optionally a major and a minor) and the beacons in it.
        # userId / deviceId: the person or lendable device it stands for, if configured;
        # userName / deviceModel: that person's name or that device's model, as the inventory has it
        # (absent when it does not know the ID).
        type PresenceRegion (
          name: string,
          uuid: string,
          major: ?int,
          minor: ?int,
          userId: ?string,
          deviceId: ?string,
          userName: ?string,
          deviceModel: ?string,
          beacons: []PresentBeacon
        )

        # Presence: disabled (no regions configured), starting, scanning, or unavailable (reason
        # says why and what to do; defaultPlace is the configured place to assume meanwhile).
        type Presence (
          status: (disabled, starting, scanning, unavailable),
          reason: ?string,
          defaultPlace: ?string,
          regions: []PresenceRegion
        )

        # A presence change: a beacon entered or exited a region, its proximity changed (from: the
        # proximity before), or scanning started or stopped (status, reason).
        type PresenceChange (
          kind: (entered, exited, proximityChanged, status),
          region: ?string,
          userId: ?string,
          deviceId: ?string,
          userName: ?string,
          deviceModel: ?string,
          beacon: ?PresentBeacon,
          from: ?string,
          status: ?string,
          reason: ?string
        )

        """
}
