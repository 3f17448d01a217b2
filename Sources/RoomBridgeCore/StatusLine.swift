extension StateSnapshot {
    /// One line that sums up the readers and the curtain (each by name when there are several), for systemd's `STATUS=` and `roombridgectl status`.
    ///
    /// Example: `reader front: connected; curtain: connected, idle at 40% open; 2 watching`.
    public var statusLine: String {
        var parts: [String] = []
        if readers.isEmpty {
            parts.append("no reader configured")
        } else {
            for r in readers {
                var s = "reader \(r.name): \(r.state.rawValue)"
                if r.state == .disconnected, let e = r.lastError { s += " (\(e))" }
                parts.append(s)
            }
        }
        if curtains.count > 1 {
            for c in curtains { parts.append("curtain \(c.id ?? "?"): " + c.summary) }
        } else {
            parts.append("curtain: " + curtain.summary)
        }
        if let offline = database.offlineSummary {
            parts.append("database: " + offline)
        }
        if let arm = lending.armed {
            parts.append("armed for \(arm.userName)")
        }
        if counters.subscribers > 0 {
            parts.append("\(counters.subscribers) watching")
        }
        return parts.joined(separator: "; ")
    }
}

extension CurtainState {
    /// A few words: connection, then motion and position when connected.
    public var summary: String {
        switch connection {
        case .disabled:
            return "not configured"
        case .searching, .connecting, .disconnected:
            var s = connection.rawValue
            if let e = lastError { s += " (\(e))" }
            return s
        case .connected, .standby:
            var s = connection.rawValue + ", "
            switch motion {
            case .idle: s += "idle"
            case .opening: s += "opening"
            case .closing: s += "closing"
            }
            if let p = position { s += " at \(p)% open" }
            if manualOperationActive { s += ", wall switch in use" }
            return s
        }
    }
}
