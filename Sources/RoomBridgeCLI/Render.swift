import Foundation
import RoomBridgeCore
import CurtainProtocol

/// Human-readable renderings of state and events.
enum Render {
    /// `18:40:02` in the kiosk's time zone, which the status block names.
    static func time(_ date: Date) -> String { KioskTime.current.clock(date) }

    /// `2026-11-24 18:40 (Asia/Tokyo)`.
    static func dateTime(_ date: Date) -> String { KioskTime.current.labelled(date) }

    static func status(_ s: StateSnapshot) -> String {
        var lines: [String] = []
        lines.append("roombridged up since \(dateTime(s.startedAt)), \(s.counters.events) events")
        lines.append("Time zone: \(s.timeZone) (times shown here; lending.time_zone)")
        if s.readers.isEmpty {
            lines.append("Readers:   none configured")
        } else {
            lines.append("Readers:")
            for r in s.readers {
                var line = "  \(pad(r.name, 12)) \(pad(r.state.rawValue, 13))"
                if let c = r.connstring { line += " \(c)" }
                if r.state == .disconnected, let e = r.lastError { line += "  (\(e))" }
                lines.append(line)
            }
        }
        if let tap = s.lastTap {
            lines.append("Last tap:  " + describe(tap))
        }
        if let w = s.tagWrite {
            lines.append("Tag write: \(w.deviceId) \(w.phase.rawValue)" + (w.message.map { " — \($0)" } ?? ""))
        }
        if s.curtains.count > 1 {
            lines.append("Curtains:")
            lines.append(curtainTable(s.curtains).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        } else {
            var curtain = "Curtain:   " + s.curtain.summary
            if let name = s.curtain.name ?? s.curtain.address { curtain += "  [\(name)]" }
            lines.append(curtain)
            if let profile = s.curtain.profile, profile != "roombridge" || s.curtain.battery != nil {
                var line = "  \(profile)"
                if let b = s.curtain.battery { line += "  battery \(b)%" }
                if let l = s.curtain.light { line += "  light \(l)%" }
                lines.append(line)
            }
            if s.curtain.openSchedule != nil || s.curtain.closeSchedule != nil {
                let source = s.curtain.scheduleSource == "daemon" ? " (kept by the daemon)" : ""
                lines.append("  schedule  open \(entry(s.curtain.openSchedule))  close \(entry(s.curtain.closeSchedule))"
                             + source)
            }
            if let e = s.curtain.lastError, s.curtain.connection.acceptsCommands {
                lines.append("  last error: \(e)")
            }
        }
        if let arm = s.lending.armed {
            let left = Int((s.lending.remainingSeconds ?? 0).rounded(.up))
            lines.append("Lending:   armed for \(arm.userName) (\(arm.userId)), \(left) s left")
        } else {
            lines.append("Lending:   not armed — tap a badge to lend")
        }
        if let o = s.lending.lastOutcome {
            lines.append("  last: \(o.message)")
        }
        if let n = s.lending.overdue {
            lines.append("  overdue: \(n == 0 ? "none" : "\(n) rental\(n == 1 ? "" : "s") — see roombridgectl rentals --overdue")")
        }
        if s.presence.status != .disabled { lines.append("Presence:  " + presenceSummary(s.presence)) }
        if let since = s.database.offlineSince {
            lines.append("Database:  offline since \(dateTime(since)) — taps and changes are refused, nothing is recorded; reconnecting"
                         + (s.database.offlineReason.map { " (\($0))" } ?? ""))
        } else if s.database.backend == .postgresql {
            lines.append("Database:  PostgreSQL, online")
        }
        let c = s.counters
        lines.append("Counters:  taps \(c.taps), lent \(c.lent), returned \(c.returned), refused \(c.refused), curtain requests \(c.curtainRequests), watching \(c.subscribers)")
        return lines.joined(separator: "\n")
    }

    static func entry(_ e: CurtainSchedule.Entry?) -> String {
        guard let e else { return "--:--" }
        return "\(e.time) (\(e.enabled ? "on" : "off"))"
    }

    static func describe(_ tap: Tap) -> String {
        var s = "\(tap.uid) \(tap.tagType) on \(tap.reader) at \(time(tap.at))"
        if let d = tap.device {
            s += " — device \(d.deviceId)"
            if let m = d.model { s += " (\(m))" }
        } else if let e = tap.readError {
            s += " — unreadable: \(e)"
        } else if !tap.records.isEmpty {
            s += " — \(tap.records.count) NDEF record(s)"
        }
        return s
    }

    /// One event as a line; `previousCurtain` (the curtain before this event) lets a curtain event
    /// say what changed when its summary did not (a schedule, the device, an error).
    static func event(_ e: Event, previousCurtain: CurtainState? = nil) -> String {
        let head = "\(time(e.at)) #\(e.seq) "
        switch e.payload {
        case .reader(let r):
            return head + "reader \(r.name) \(r.state.rawValue)" + (r.connstring.map { " \($0)" } ?? "")
                + (r.lastError.map { " (\($0))" } ?? "")
        case .tagArrived(let tap):
            return head + "tap " + describe(tap)
        case .tagRemoved(let r):
            return head + "removed \(r.uid) from \(r.reader) after \(Int(r.presentMillis)) ms"
        case .tagWrite(let w):
            return head + "tag write \(w.deviceId) \(w.phase.rawValue)" + (w.message.map { ": \($0)" } ?? "")
        case .curtain(let c):
            // Named unless it is the single curtain of the [curtain] keys.
            let name = c.id.map { $0 == "curtain" ? "" : "\($0) " } ?? ""
            return head + "curtain " + name + curtainChange(from: previousCurtain, to: c)
        case .lending(let o):
            return head + "lending \(o.kind.rawValue)" + (o.refusal.map { " (\($0.rawValue))" } ?? "") + ": \(o.message)"
        case .presence(let p):
            return head + presenceEvent(p)
        case .overdue(let o):
            return head + "overdue: \(o.message)"
        case .outbox(let o):
            return head + "outbox: \(o.message)"
        case .booking(let b):
            return head + "booking \(b.change.rawValue) #\(b.bookingId): \(b.model) (\(b.deviceId)) for \(b.userName), "
                + "\(dateTime(b.startsAt)) – \(dateTime(b.endsAt))" + (b.by.map { " by \($0)" } ?? "")
        case .stocktake(let s):
            return head + "stocktake \(s.change.rawValue): \(s.message)"
        case .battery(let b):
            return head + "battery low: \(b.sentence) (at or below \(b.threshold) %)"
        }
    }

    /// The new summary when it changed, then anything else that changed; the summary alone if nothing visible did.
    static func curtainChange(from old: CurtainState?, to c: CurtainState) -> String {
        guard let old else { return c.summary }
        var changes: [String] = []
        if c.summary != old.summary { changes.append(c.summary) }
        if c.openSchedule != old.openSchedule {
            changes.append("open schedule \(entry(old.openSchedule)) → \(entry(c.openSchedule))")
        }
        if c.closeSchedule != old.closeSchedule {
            changes.append("close schedule \(entry(old.closeSchedule)) → \(entry(c.closeSchedule))")
        }
        if c.target != old.target, let t = c.target, c.motion != .idle { changes.append("moving to \(t)% open") }
        if c.lastError != old.lastError, let e = c.lastError, c.connection == .connected { changes.append("last error: \(e)") }
        if let n = c.name ?? c.address, n != (old.name ?? old.address) { changes.append("device \(n)") }
        if let r = c.lastRequest, r != old.lastRequest {
            // "close asked by unix:aiko", then (if so) "close asked by unix:aiko refused: the wall switch …"
            var said = request(r) + (r.by.map { " asked by \($0)" } ?? "")
            if let why = r.refused { said += " refused: " + why }
            changes.append("request: " + said)
        }
        return changes.isEmpty ? c.summary : changes.joined(separator: "; ")
    }

    static func request(_ r: CurtainRequest) -> String {
        switch r.kind {
        case .search: "search for the curtain"
        case .open: "open"
        case .close: "close"
        case .stop: "stop"
        case .moveTo: "move to \(r.position.map { "\($0)%" } ?? "?")"
        case .setSchedule: "set the schedule"
        case .sync: "read the curtain's state"
        case .reconnect: "reconnect"
        }
    }

    private static func pad(_ s: String, _ n: Int) -> String {
        DisplayWidth.pad(s, to: n)
    }
}
