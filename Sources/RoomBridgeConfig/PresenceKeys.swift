import Presence

private func nonNegativeSeconds(_ v: ConfigValue) -> String? {
    if case .double(let d) = v, !(d >= 0) || !d.isFinite { return "must be 0 or more seconds" }
    return nil
}

/// The `presence.*` keys: iBeacon regions, when a beacon has left, the distance model, the default place and
/// whether presence history is kept.
let presenceConfigKeys: [ConfigKey] = [
    ConfigKey("presence.regions", .strings([]),
              "iBeacon regions, each \"NAME=UUID[/MAJOR[/MINOR]] [user=ID] [device=ID]\"; none keeps presence off.") { v in
        guard case .strings(let entries) = v else { return nil }
        var names: Set<String> = []
        for entry in entries {
            do throws(RegionSyntaxError) {
                let region = try Region(parsing: entry)
                guard names.insert(region.name).inserted else { return "names region \(region.name) twice" }
            } catch {
                return "has a bad entry: \(error)"
            }
        }
        return nil
    },
    ConfigKey("presence.exit_after", .double(30),
              "Seconds a beacon must go unheard before it has left its region.") { v in
        if case .double(let d) = v, !(d > 0) || !d.isFinite { return "must be a positive number of seconds" }
        return nil
    },
    ConfigKey("presence.rssi_window", .double(20),
              "Seconds of RSSI readings averaged (trimmed mean) for the distance.", validate: nonNegativeSeconds),
    ConfigKey("presence.distance_a", .double(0.42093),
              "Distance model: metres = a · (rssi/txPower)^b + c (AltBeacon's curve fit; tune for the adapter)."),
    ConfigKey("presence.distance_b", .double(6.9476), "Distance model exponent b (see presence.distance_a)."),
    ConfigKey("presence.distance_c", .double(0.54992), "Distance model offset c, metres (see presence.distance_a)."),
    ConfigKey("presence.default_place", .string(""),
              "The place reported while scanning is off or Bluetooth is unavailable (e.g. \"front desk\")."),
    ConfigKey("presence.history", .bool(false),
              "Keep a history of entries and exits (off: only who is here now is known, nothing is stored)."),
    ConfigKey("presence.adapter", .string(""),
              "Bluetooth adapter to scan with (e.g. hci0); empty uses curtain.adapter, else the first one."),
]
