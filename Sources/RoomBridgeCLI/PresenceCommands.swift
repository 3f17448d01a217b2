import ArgumentParser
import Foundation
import RoomBridgeAPI
import RoomBridgeCore
import Varlink
import VarlinkNIO

extension RoomBridgeCtl {
    /// `roombridgectl presence`: who or what is in the room, through `io.roombridge.Presence`.
    struct Presence: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "presence",
            abstract: "Show who or what is in the room (iBeacon regions), with proximity and when last seen.",
            discussion: """
                Regions are configured in presence.regions; without any, presence is off. Times are shown in \
                the kiosk's time zone as roombridged reports it (lending.time_zone, else the zone of the machine \
                roombridged runs on), not this terminal's; the wire carries UTC.
                """)
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await withClient(options) { client in
                let reply = try await call(client, PresenceAPI.GetPresence.self)
                if options.json { emit(reply.sole.serialized()); return }
                emit(Render.presence(reply.value.presence))
            }
        }
    }
}

extension Render {
    /// The time of day in the kiosk's time zone (the daemon's, see ``KioskTime``).
    static func localTime(_ date: Date) -> String {
        KioskTime.current.clock(date)
    }

    /// Who is here, one line (for `status`).
    static func presenceSummary(_ p: PresenceState) -> String {
        switch p.status {
        case .disabled: return "off (no regions configured)"
        case .starting: return "starting"
        case .unavailable:
            return (p.defaultPlace.map { "assuming \($0) — " } ?? "") + "not scanning: " + (p.reason ?? "unknown reason")
        case .scanning:
            let here = p.regions.filter { !$0.beacons.isEmpty }
            guard !here.isEmpty else { return "nobody here" }
            return here.map { r in
                let who = r.label
                let closest = r.beacons.map(\.proximity).min { rank($0) < rank($1) } ?? "unknown"
                return "\(who) (\(closest))"
            }.joined(separator: ", ")
        }
    }

    private static func rank(_ proximity: String) -> Int {
        ["immediate", "near", "far", "unknown"].firstIndex(of: proximity) ?? 4
    }

    static func presence(_ p: PresenceState) -> String {
        var lines = ["Presence:  " + presenceSummary(p)]
        guard p.status != .disabled else { return lines[0] }
        for r in p.regions {
            var id = r.region.uuid.uuidString
            if let major = r.region.major { id += "/\(major)" }
            if let minor = r.region.minor { id += "/\(minor)" }
            let stands = r.userId.map { " user \($0)" + (r.userName.map { " (\($0))" } ?? "") }
                ?? r.deviceId.map { " device \($0)" + (r.deviceModel.map { " (\($0))" } ?? "") } ?? ""
            lines.append("  \(r.name)\(stands)  [\(id)]")
            if r.beacons.isEmpty { lines.append("    nobody") }
            for b in r.beacons {
                var line = "    \(b.major)/\(b.minor)  \(DisplayWidth.pad(b.proximity, to: 9))"
                if let d = b.distance { line += String(format: " %.1f m", d) }
                if let rssi = b.rssi { line += String(format: "  %.0f dBm", rssi) }
                line += "  last seen \(localTime(b.lastSeen))"
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    static func presenceEvent(_ e: PresenceChangeEvent) -> String {
        // The person or device by name, with the region it was seen in: "Aiko Tanaka (desk)".
        let name = e.userName ?? e.deviceModel ?? e.userId ?? e.deviceId
        let who = name.map { n in e.region.map { "\(n) (\($0))" } ?? n } ?? e.region ?? "?"
        let beacon = e.beacon.map { " \($0.major)/\($0.minor) \($0.proximity)" } ?? ""
        switch e.kind {
        case .entered: return "presence: entered \(who)\(beacon)"
        case .exited: return "presence: exited \(who)\(beacon)"
        case .proximityChanged: return "presence: \(who) \(e.from ?? "?") →\(beacon)"
        case .status: return "presence: \(e.status?.rawValue ?? "?")" + (e.reason.map { " (\($0))" } ?? "")
        }
    }
}
