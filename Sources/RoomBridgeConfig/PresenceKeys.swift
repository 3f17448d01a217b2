import Presence

private func nonNegativeSeconds(_ d: Double) -> String? {
    !(d >= 0) || !d.isFinite ? "must be 0 or more seconds" : nil
}

// The `presence.*` keys: iBeacon regions, when a beacon has left, the distance model, the default place and
// whether presence history is kept.

extension ConfigKey<[String]> {
    public static var presenceRegions: Self {
        Self("presence.regions", [],
             "iBeacon regions, each \"NAME=UUID[/MAJOR[/MINOR]] [user=ID] [device=ID]\"; none keeps presence off.") { entries in
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
        }
    }
}

extension ConfigKey<Double> {
    public static var presenceExitAfter: Self {
        Self("presence.exit_after", 30, "Seconds a beacon must go unheard before it has left its region.") { d in
            !(d > 0) || !d.isFinite ? "must be a positive number of seconds" : nil
        }
    }
    public static var presenceRSSIWindow: Self {
        Self("presence.rssi_window", 20, "Seconds of RSSI readings averaged (trimmed mean) for the distance.",
             validate: nonNegativeSeconds)
    }
    public static var presenceDistanceA: Self {
        Self("presence.distance_a", 0.42093,
             "Distance model: metres = a · (rssi/txPower)^b + c (AltBeacon's curve fit; tune for the adapter).")
    }
    public static var presenceDistanceB: Self {
        Self("presence.distance_b", 6.9476, "Distance model exponent b (see presence.distance_a).")
    }
    public static var presenceDistanceC: Self {
        Self("presence.distance_c", 0.54992, "Distance model offset c, metres (see presence.distance_a).")
    }
}

extension ConfigKey<String> {
    public static var presenceDefaultPlace: Self {
        Self("presence.default_place", "",
             "The place reported while scanning is off or Bluetooth is unavailable (e.g. \"front desk\").")
    }
    public static var presenceAdapter: Self {
        Self("presence.adapter", "",
             "Bluetooth adapter to scan with (e.g. hci0); empty uses curtain.adapter, else the first one.")
    }
}

extension ConfigKey<Bool> {
    public static var presenceHistory: Self {
        Self("presence.history", false,
             "Keep a history of entries and exits (off: only who is here now is known, nothing is stored).")
    }
}

let presenceConfigKeys: [AnyConfigKey] = [
    AnyConfigKey(.presenceRegions), AnyConfigKey(.presenceExitAfter), AnyConfigKey(.presenceRSSIWindow),
    AnyConfigKey(.presenceDistanceA), AnyConfigKey(.presenceDistanceB), AnyConfigKey(.presenceDistanceC),
    AnyConfigKey(.presenceDefaultPlace), AnyConfigKey(.presenceHistory), AnyConfigKey(.presenceAdapter),
]
