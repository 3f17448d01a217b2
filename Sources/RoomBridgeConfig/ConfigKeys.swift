import Lending
import Foundation

/// One configuration key: its name in the TOML file (`section.key`), its type, default and meaning.
///
/// The table of keys drives the file parser, the command-line flags (`section.key` is also
/// `--section-key`), `--print-config` and `--help`, so adding a key needs no other code.
public struct ConfigKey: Sendable {
    public enum Kind: String, Sendable {
        case string, int, double, bool, strings
    }
    public let name: String
    public let kind: Kind
    public let defaultValue: ConfigValue
    public let help: String
    /// Returns a sentence saying what is wrong with a value, or nil when it is fine.
    public let validate: @Sendable (ConfigValue) -> String?

    public init(_ name: String, _ defaultValue: ConfigValue, _ help: String,
                validate: @escaping @Sendable (ConfigValue) -> String? = { _ in nil }) {
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
        self.validate = validate
        switch defaultValue {
        case .string: kind = .string
        case .int: kind = .int
        case .double: kind = .double
        case .bool: kind = .bool
        case .strings: kind = .strings
        }
    }

    /// The command-line flag for this key: `socket.max_connections` → `--socket-max-connections`.
    public var flag: String {
        "--" + name.replacingOccurrences(of: ".", with: "-").replacingOccurrences(of: "_", with: "-")
    }

    var section: String { String(name.split(separator: ".", maxSplits: 1)[0]) }
    var leaf: String { String(name.split(separator: ".", maxSplits: 1)[1]) }
}

private func positiveInt(_ v: ConfigValue) -> String? {
    if case .int(let i) = v, i <= 0 { return "must be a positive whole number" }
    return nil
}

private func positiveDouble(_ v: ConfigValue) -> String? {
    if case .double(let d) = v, !(d > 0) { return "must be a positive number of seconds" }
    return nil
}

private func nonNegativeInt(_ v: ConfigValue) -> String? {
    if case .int(let i) = v, i < 0 { return "must be 0 or more" }
    return nil
}

private func timeOfDayOrEmpty(_ v: ConfigValue) -> String? {
    if case .string(let s) = v, !s.isEmpty, ReminderSchedule.secondsOfDay(s) == nil {
        return "must be a time of day such as \"09:00\" (24-hour, the kiosk's time zone), or empty for none"
    }
    return nil
}

private func timeZoneOrEmpty(_ v: ConfigValue) -> String? {
    if case .string(let s) = v, !s.isEmpty, TimeZone(identifier: s) == nil {
        return "must be a time zone name such as \"Asia/Tokyo\" or \"Europe/Berlin\" (see timedatectl list-timezones), or empty for the system's"
    }
    return nil
}

private func absolutePathOrEmpty(_ v: ConfigValue) -> String? {
    if case .string(let s) = v, !s.isEmpty, !s.hasPrefix("/") { return "must be an absolute path" }
    return nil
}

/// Every key roombridged understands.
public let configKeys: [ConfigKey] = [
    ConfigKey("socket.path", .string("/run/roombridge/roombridge.sock"),
              "Path of the Varlink socket (ignored when systemd passes a socket).") { v in
        if case .string(let s) = v, !s.hasPrefix("/") { return "must be an absolute path" }
        return nil
    },
    ConfigKey("socket.mode", .string("0660"), "Permissions of the socket file, octal.") { v in
        if case .string(let s) = v, mode_t(s, radix: 8) == nil || s.count > 4 {
            return "must be an octal mode such as \"0660\""
        }
        return nil
    },
    ConfigKey("socket.group", .string("roombridge"),
              "Group that owns the socket file; empty leaves the daemon's own group."),
    ConfigKey("socket.max_connections", .int(64), "Clients connected at once; more are refused.",
              validate: positiveInt),
    ConfigKey("socket.max_connections_per_user", .int(16),
              "Connections one user may hold at once (root and auth.group members are not counted).", validate: positiveInt),
    ConfigKey("socket.reserved_connections", .int(8),
              "Connections kept free for root and auth.group members, so they can always connect.",
              validate: nonNegativeInt),
    ConfigKey("socket.idle_timeout", .double(60),
              "Seconds a connection with no call in progress (a Watch is one) may stay silent.",
              validate: positiveDouble),
    ConfigKey("socket.max_message_size", .int(65536), "Largest message a client may send, in bytes.",
              validate: positiveInt),
    ConfigKey("socket.stall_timeout", .double(10),
              "Seconds a client may take to finish a message it started.", validate: positiveDouble),
    ConfigKey("auth.group", .string("roombridge"),
              "Group whose members (and root) may call methods that change things."),
    ConfigKey("auth.actor_users", .strings(["roombridge-web"]),
              "Unix users (besides root) that may name the signed-in person they act for, recorded as who made a change."),
    ConfigKey("log.level", .string("info"),
              "trace, debug, info, notice, warning, error or critical.") { v in
        if case .string(let s) = v, LogLevelName(rawValue: s) == nil {
            return "must be one of trace, debug, info, notice, warning, error, critical"
        }
        return nil
    },
    ConfigKey("state.subscriber_buffer", .int(1024),
              "Events a Watch client may fall behind before it is dropped.", validate: positiveInt),
    ConfigKey("state.replay_buffer", .int(1024),
              "Latest events kept for a Watch client that resumes after the last event it saw (Watch since).",
              validate: positiveInt),
    ConfigKey("database.path", .string("/var/lib/roombridge/roombridge.sqlite"),
              "SQLite database file (created on first start).") { v in
        if case .string(let s) = v, s.isEmpty { return "must not be empty" }
        return nil
    },
    ConfigKey("database.integrity_check_hours", .double(24),
              "Hours between full database integrity checks (one also runs at every start).",
              validate: positiveDouble),
    ConfigKey("database.url", .string(""),
              "PostgreSQL instead of the SQLite file, for several kiosks on one inventory: postgresql://USER@HOST:PORT/DATABASE?sslmode=disable|prefer|require (no password here: see database.password_file).") { v in
        guard case .string(let s) = v, !s.isEmpty else { return nil }
        guard s.hasPrefix("postgresql://") || s.hasPrefix("postgres://") else {
            return "must start with postgresql:// (or be empty for the SQLite file in database.path)"
        }
        let authority = s.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" }
        let hasPassword = authority.lastIndex(of: "@").map { authority[..<$0].contains(":") } ?? false
        if hasPassword || s.contains("password=") {
            return "must not contain a password; put it in database.password_file (or the systemd credential database.password)"
        }
        return nil
    },
    ConfigKey("database.password_file", .string(""),
              "File holding the PostgreSQL password (mode 0600 or 0400); else the systemd credential database.password (LoadCredential=)."),
    ConfigKey("nfc.enabled", .bool(true), "Poll NFC readers."),
    ConfigKey("nfc.readers", .strings([]),
              "Readers as \"name=connstring\" (e.g. \"front=pn532_uart:/dev/nfc/pn532\"); empty uses libnfc's own configuration and scan."),
    ConfigKey("nfc.modulations", .strings(["iso14443a", "felica212"]),
              "Modulations polled: iso14443a (NTAG, Ultralight, ISO-A badges), felica212, felica424.") { v in
        if case .strings(let a) = v {
            if a.isEmpty { return "must name at least one modulation" }
            if let bad = a.first(where: { !["iso14443a", "felica212", "felica424"].contains($0) }) {
                return "has unknown modulation \"\(bad)\"; use iso14443a, felica212 or felica424"
            }
        }
        return nil
    },
    ConfigKey("curtain.enabled", .bool(true), "Drive a BLE curtain controller through BlueZ."),
    ConfigKey("curtain.address", .string(""),
              "Bluetooth address of the curtain controller; empty picks the first one advertising the curtain service."),
    ConfigKey("curtain.adapter", .string(""), "Bluetooth adapter (e.g. hci0); empty picks the first powered one."),
    ConfigKey("curtain.notify", .string("start-notify"),
              "How to subscribe to the curtain's notifications: start-notify (PropertiesChanged signals) or "
              + "acquire-notify (a socket from BlueZ's AcquireNotify, where offered).") { v in
        if case .string(let s) = v, !["start-notify", "acquire-notify"].contains(s) {
            return "must be start-notify or acquire-notify"
        }
        return nil
    },
    ConfigKey("curtain.profile", .string("roombridge"),
              "What kind of curtain: roombridge (our controller), switchbot (SwitchBot Curtain 1/2/3) or am43 "
              + "(A-OK AM43 blinds motor).") { v in
        if case .string(let s) = v, !["roombridge", "switchbot", "am43"].contains(s) {
            return "must be roombridge, switchbot or am43"
        }
        return nil
    },
    ConfigKey("curtain.pin", .int(8888),
              "AM43: the PIN set in the Blind Engine app (default 8888; better kept in curtain.pin_file).") { v in
        if case .int(let n) = v, !(0...65535).contains(n) { return "must be 0 to 65535" }
        return nil
    },
    ConfigKey("curtain.pin_file", .string(""),
              "AM43: a file (mode 0600) holding the PIN; wins over curtain.pin and the systemd credential curtain.pin.",
              validate: absolutePathOrEmpty),
    ConfigKey("curtain.password", .string(""),
              "SwitchBot: the password set in the SwitchBot app, if any (better kept in curtain.password_file)."),
    ConfigKey("curtain.password_file", .string(""),
              "SwitchBot: a file (mode 0600) holding the password; wins over curtain.password and the systemd "
              + "credential curtain.password.", validate: absolutePathOrEmpty),
    ConfigKey("lending.arm_seconds", .int(30), "How long a badge tap arms a lend session.",
              validate: positiveInt),
    ConfigKey("lending.loan_days", .int(0), "Default loan period in days; 0 means no due date.",
              validate: nonNegativeInt),
    ConfigKey("lending.repeat_window", .double(5),
              "Seconds after a lend or return in which a tap of the same device is a repeat and changes nothing; 0 turns it off.") { v in
        if case .double(let d) = v, !(d >= 0) { return "must be 0 or more seconds" }
        return nil
    },
    ConfigKey("lending.max_active_per_user", .int(0),
              "The most devices one user may have lent at a time; 0 means no limit.", validate: nonNegativeInt),
    ConfigKey("lending.location", .string(""),
              "Name of this kiosk, stored with each rental; empty uses the host name."),
    ConfigKey("lending.time_zone", .string(""),
              "The kiosk's time zone, in which people read times and days (\"Asia/Tokyo\"); empty: the system's (TZ, /etc/localtime).",
              validate: timeZoneOrEmpty),
    ConfigKey("outbox.retry_base", .double(2),
              "Seconds before the first retry of a failed delivery; each further failure doubles the wait.",
              validate: positiveDouble),
    ConfigKey("outbox.retry_max", .double(600), "The longest wait between two delivery attempts, in seconds.",
              validate: positiveDouble),
    ConfigKey("outbox.poll_interval", .double(1), "Seconds between two looks for new outbox entries.",
              validate: positiveDouble),
    ConfigKey("outbox.retention_days", .int(7), "Days delivered and dropped outbox entries are kept.",
              validate: positiveInt),
    ConfigKey("outbox.failing_alert", .double(600),
              "Seconds a target may fail before watch reports it (outboxFailing).", validate: positiveDouble),
    ConfigKey("reminders.digest_at", .string(""),
              "Time of the daily digest sent to the outbox targets (\"09:00\", the kiosk's time zone); empty: none.",
              validate: timeOfDayOrEmpty),
    ConfigKey("reminders.due_notice_at", .string(""),
              "Time of the notices of rentals due back that day, one per rental; empty: none.",
              validate: timeOfDayOrEmpty),
] + presenceConfigKeys

/// The log levels accepted in `log.level`.
public enum LogLevelName: String, Sendable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
}

extension ConfigKey.Kind {
    var article: String {
        switch self {
        case .string: "a string"
        case .int: "a whole number"
        case .double: "a number"
        case .bool: "true or false"
        case .strings: "a list of strings"
        }
    }
}
