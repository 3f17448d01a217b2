import Lending
import Foundation

// Every key roombridged understands, each declared once with its type, default, check and meaning, and
// read as `config[.socketGroup]`. A new key is declared here (or in PresenceKeys.swift) and listed in
// `configKeys` below, which drives the file parser, the flags, `--print-config` and `--help`;
// ConfigDocsTests checks that every declaration is listed, and that the example configuration
// (systemd/roombridged.toml.example) and docs/operations.md's key table name every key with its default.

private func positive(_ i: Int) -> String? { i <= 0 ? "must be a positive whole number" : nil }
private func nonNegative(_ i: Int) -> String? { i < 0 ? "must be 0 or more" : nil }
private func positiveSeconds(_ d: Double) -> String? { !(d > 0) ? "must be a positive number of seconds" : nil }
private func absolutePathOrEmpty(_ s: String) -> String? { !s.isEmpty && !s.hasPrefix("/") ? "must be an absolute path" : nil }

private func timeOfDayOrEmpty(_ s: String) -> String? {
    guard !s.isEmpty, ReminderSchedule.secondsOfDay(s) == nil else { return nil }
    return "must be a time of day such as \"09:00\" (24-hour, the kiosk's time zone), or empty for none"
}

private func loopbackAddressOrEmpty(_ s: String) -> String? {
    guard !s.isEmpty, MetricsAddress(s) == nil else { return nil }
    return "must be a loopback address and port such as \"127.0.0.1:9466\" or \"[::1]:9466\" (the metrics are for this "
        + "machine's Prometheus; scrape others through a proxy), or empty for none"
}

/// `metrics.listen`: a loopback host and a port (0: any free one, which the log names).
public struct MetricsAddress: Sendable, Equatable {
    public var host: String
    public var port: Int

    public init?(_ text: String) {
        let host: Substring, port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            guard text[close...].hasPrefix("]:") else { return nil }
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard let number = Int(port), (0...65535).contains(number) else { return nil }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        let loopbackV4 = octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
        guard loopbackV4 || host == "::1" || host == "localhost" else { return nil }
        self.host = host == "localhost" ? "127.0.0.1" : String(host)
        self.port = number
    }
}

private func timeZoneOrEmpty(_ s: String) -> String? {
    guard !s.isEmpty, TimeZone(identifier: s) == nil else { return nil }
    return "must be a time zone name such as \"Asia/Tokyo\" or \"Europe/Berlin\" (see timedatectl list-timezones), or empty for the system's"
}

// MARK: [socket]

extension ConfigKey<String> {
    public static var socketPath: Self {
        Self("socket.path", "/run/roombridge/roombridge.sock",
             "Path of the Varlink socket (ignored when systemd passes a socket).") { s in
            s.hasPrefix("/") ? nil : "must be an absolute path"
        }
    }
    public static var socketMode: Self {
        Self("socket.mode", "0660", "Permissions of the socket file, octal.") { s in
            mode_t(s, radix: 8) == nil || s.count > 4 ? "must be an octal mode such as \"0660\"" : nil
        }
    }
    public static var socketGroup: Self {
        Self("socket.group", "roombridge", "Group that owns the socket file; empty leaves the daemon's own group.")
    }
}

extension ConfigKey<Int> {
    public static var socketMaxConnections: Self {
        Self("socket.max_connections", 64, "Clients connected at once; more are refused.", validate: positive)
    }
    public static var socketMaxConnectionsPerUser: Self {
        Self("socket.max_connections_per_user", 16,
             "Connections one user may hold at once (root and auth.group members are not counted).", validate: positive)
    }
    public static var socketReservedConnections: Self {
        Self("socket.reserved_connections", 8,
             "Connections kept free for root and auth.group members, so they can always connect.", validate: nonNegative)
    }
    public static var socketMaxMessageSize: Self {
        Self("socket.max_message_size", 65536, "Largest message a client may send, in bytes.", validate: positive)
    }
}

extension ConfigKey<Double> {
    public static var socketIdleTimeout: Self {
        Self("socket.idle_timeout", 60,
             "Seconds a connection with no call in progress (a Watch is one) may stay silent.", validate: positiveSeconds)
    }
    public static var socketStallTimeout: Self {
        Self("socket.stall_timeout", 10, "Seconds a client may take to finish a message it started.",
             validate: positiveSeconds)
    }
}

// MARK: [auth], [log], [state]

extension ConfigKey<String> {
    public static var authGroup: Self {
        Self("auth.group", "roombridge", "Group whose members (and root) may call methods that change things.")
    }
    public static var logLevel: Self {
        Self("log.level", "info", "trace, debug, info, notice, warning, error or critical.") { s in
            LogLevelName(rawValue: s) == nil ? "must be one of trace, debug, info, notice, warning, error, critical" : nil
        }
    }
}

extension ConfigKey<[String]> {
    public static var authActorUsers: Self {
        Self("auth.actor_users", ["roombridge-web"],
             "Unix users (besides root) that may name the signed-in person they act for, recorded as who made a change.")
    }
}

extension ConfigKey<Int> {
    public static var stateSubscriberBuffer: Self {
        Self("state.subscriber_buffer", 1024, "Events a Watch client may fall behind before it is dropped.",
             validate: positive)
    }
    public static var stateReplayBuffer: Self {
        Self("state.replay_buffer", 1024,
             "Latest events kept for a Watch client that resumes after the last event it saw (Watch since).",
             validate: positive)
    }
}

// MARK: [database]

extension ConfigKey<String> {
    public static var databasePath: Self {
        Self("database.path", "/var/lib/roombridge/roombridge.sqlite", "SQLite database file (created on first start).") { s in
            s.isEmpty ? "must not be empty" : nil
        }
    }
    public static var databaseURL: Self {
        Self("database.url", "",
             "PostgreSQL instead of the SQLite file, for several kiosks on one inventory: postgresql://USER@HOST:PORT/DATABASE?sslmode=disable|prefer|require, or a Unix socket: postgresql://USER@/DATABASE?host=/run/postgresql (no password here: see database.password_file; none is needed with trust or peer authentication).") { s in
            guard !s.isEmpty else { return nil }
            guard s.hasPrefix("postgresql://") || s.hasPrefix("postgres://") else {
                return "must start with postgresql:// (or be empty for the SQLite file in database.path)"
            }
            let authority = s.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" }
            let hasPassword = authority.lastIndex(of: "@").map { authority[..<$0].contains(":") } ?? false
            if hasPassword || s.contains("password=") {
                return "must not contain a password; put it in database.password_file (or the systemd credential database.password)"
            }
            return nil
        }
    }
    public static var databasePasswordFile: Self {
        Self("database.password_file", "",
             "File holding the PostgreSQL password (mode 0600 or 0400); else the systemd credential database.password (LoadCredential=); neither: no password (trust or peer authentication).")
    }
}

extension ConfigKey<Double> {
    public static var databaseIntegrityCheckHours: Self {
        Self("database.integrity_check_hours", 24,
             "Hours between full database integrity checks (one also runs at every start).", validate: positiveSeconds)
    }
}

// MARK: [nfc]

extension ConfigKey<Bool> {
    public static var nfcEnabled: Self { Self("nfc.enabled", true, "Poll NFC readers.") }
}

extension ConfigKey<[String]> {
    public static var nfcReaders: Self {
        Self("nfc.readers", [],
             "Readers as \"name=connstring\" (e.g. \"front=pn532_uart:/dev/nfc/pn532\"); empty uses libnfc's own configuration and scan.")
    }
    public static var nfcModulations: Self {
        Self("nfc.modulations", ["iso14443a", "felica212"],
             "Modulations polled: iso14443a (NTAG, Ultralight, ISO-A badges), felica212, felica424.") { a in
            if a.isEmpty { return "must name at least one modulation" }
            if let bad = a.first(where: { !["iso14443a", "felica212", "felica424"].contains($0) }) {
                return "has unknown modulation \"\(bad)\"; use iso14443a, felica212 or felica424"
            }
            return nil
        }
    }
}

// MARK: [curtain]

extension ConfigKey<Bool> {
    public static var curtainEnabled: Self { Self("curtain.enabled", true, "Drive a BLE curtain controller through BlueZ.") }
}

extension ConfigKey<String> {
    public static var curtainAddress: Self {
        Self("curtain.address", "",
             "Bluetooth address of the curtain controller; empty picks the first one advertising the curtain service.")
    }
    public static var curtainAdapter: Self {
        Self("curtain.adapter", "", "Bluetooth adapter (e.g. hci0); empty picks the first powered one.")
    }
    public static var curtainNotify: Self {
        Self("curtain.notify", "start-notify",
             "How to subscribe to the curtain's notifications: start-notify (PropertiesChanged signals) or "
             + "acquire-notify (a socket from BlueZ's AcquireNotify, where offered).") { s in
            ["start-notify", "acquire-notify"].contains(s) ? nil : "must be start-notify or acquire-notify"
        }
    }
    public static var curtainProfile: Self {
        Self("curtain.profile", "roombridge",
             "What kind of curtain: roombridge (our controller), switchbot (SwitchBot Curtain 1/2/3) or am43 "
             + "(A-OK AM43 blinds motor).") { s in
            ["roombridge", "switchbot", "am43"].contains(s) ? nil : "must be roombridge, switchbot or am43"
        }
    }
    public static var curtainPinFile: Self {
        Self("curtain.pin_file", "",
             "AM43: a file (mode 0600) holding the PIN; wins over curtain.pin and the systemd credential curtain.pin.",
             validate: absolutePathOrEmpty)
    }
    public static var curtainPassword: Self {
        Self("curtain.password", "",
             "SwitchBot: the password set in the SwitchBot app, if any (better kept in curtain.password_file).")
    }
    public static var curtainPasswordFile: Self {
        Self("curtain.password_file", "",
             "SwitchBot: a file (mode 0600) holding the password; wins over curtain.password and the systemd "
             + "credential curtain.password.", validate: absolutePathOrEmpty)
    }
}

extension ConfigKey<Int> {
    public static var curtainConnections: Self {
        Self("curtain.connections", 3,
             "How many curtains may hold a Bluetooth link at once on the adapter; commands beyond it wait in line. "
             + "3 as ESPHome's Bluetooth proxy; a USB dongle may take more (docs/hardware.md).") { n in
            (1...20).contains(n) ? nil : "must be 1 to 20 links"
        }
    }
    public static var curtainPin: Self {
        Self("curtain.pin", 8888,
             "AM43: the PIN set in the Blind Engine app (default 8888; better kept in curtain.pin_file).") { n in
            (0...65535).contains(n) ? nil : "must be 0 to 65535"
        }
    }
}

// MARK: [lending]

extension ConfigKey<Int> {
    public static var lendingArmSeconds: Self {
        Self("lending.arm_seconds", 30, "How long a badge tap arms a lend session.", validate: positive)
    }
    public static var lendingLoanDays: Self {
        Self("lending.loan_days", 0, "Default loan period in days; 0 means no due date.", validate: nonNegative)
    }
    public static var lendingBookingGuard: Self {
        Self("lending.booking_guard", 60,
             "Minutes before a booking's start from which the device is kept for its booker: a lend to anyone else is refused.",
             validate: nonNegative)
    }
    public static var lendingMaxActivePerUser: Self {
        Self("lending.max_active_per_user", 0, "The most devices one user may have lent at a time; 0 means no limit.",
             validate: nonNegative)
    }
}

extension ConfigKey<Double> {
    public static var curtainHold: Self {
        Self("curtain.hold", 8.5,
             "On-demand curtains (SwitchBot): seconds the link is kept after the last command before it is released, "
             + "as pySwitchbot's DISCONNECT_DELAY; between commands their state comes from advertisements.",
             validate: positiveSeconds)
    }

    public static var lendingRepeatWindow: Self {
        Self("lending.repeat_window", 5,
             "Seconds after a lend or return in which a tap of the same device is a repeat and changes nothing; 0 turns it off.") { d in
            d >= 0 ? nil : "must be 0 or more seconds"
        }
    }
}

extension ConfigKey<String> {
    public static var lendingLocation: Self {
        Self("lending.location", "", "Name of this kiosk, stored with each rental; empty uses the host name.")
    }
    public static var lendingTimeZone: Self {
        Self("lending.time_zone", "",
             "The kiosk's time zone, in which people read times and days (\"Asia/Tokyo\"); empty: the system's (TZ, /etc/localtime).",
             validate: timeZoneOrEmpty)
    }
}

// MARK: [outbox], [reminders]

extension ConfigKey<Double> {
    public static var outboxRetryBase: Self {
        Self("outbox.retry_base", 2,
             "Seconds before the first retry of a failed delivery; each further failure doubles the wait.",
             validate: positiveSeconds)
    }
    public static var outboxRetryMax: Self {
        Self("outbox.retry_max", 600, "The longest wait between two delivery attempts, in seconds.",
             validate: positiveSeconds)
    }
    public static var outboxPollInterval: Self {
        Self("outbox.poll_interval", 1, "Seconds between two looks for new outbox entries.", validate: positiveSeconds)
    }
    public static var outboxFailingAlert: Self {
        Self("outbox.failing_alert", 600, "Seconds a target may fail before watch reports it (outboxFailing).",
             validate: positiveSeconds)
    }
}

extension ConfigKey<Int> {
    public static var outboxRetentionDays: Self {
        Self("outbox.retention_days", 7, "Days delivered and dropped outbox entries are kept.", validate: positive)
    }
}

extension ConfigKey<String> {
    public static var remindersDigestAt: Self {
        Self("reminders.digest_at", "",
             "Time of the daily digest sent to the outbox targets (\"09:00\", the kiosk's time zone); empty: none.",
             validate: timeOfDayOrEmpty)
    }
    public static var remindersDueNoticeAt: Self {
        Self("reminders.due_notice_at", "",
             "Time of the notices of rentals due back that day, one per rental; empty: none.", validate: timeOfDayOrEmpty)
    }
}

// MARK: [metrics]

extension ConfigKey<String> {
    public static var metricsListen: Self {
        Self("metrics.listen", "",
             "Where roombridged serves Prometheus metrics (GET /metrics): a loopback address and port such as "
             + "\"127.0.0.1:9466\"; empty: off.", validate: loopbackAddressOrEmpty)
    }
}

/// Every key roombridged understands, in the order `--help`, `--print-config` and the example configuration
/// show them. Each entry names a declaration above (or in PresenceKeys.swift); ConfigDocsTests checks that
/// none is left out.
public let configKeys: [AnyConfigKey] = [
    AnyConfigKey(.socketPath), AnyConfigKey(.socketMode), AnyConfigKey(.socketGroup),
    AnyConfigKey(.socketMaxConnections), AnyConfigKey(.socketMaxConnectionsPerUser),
    AnyConfigKey(.socketReservedConnections), AnyConfigKey(.socketIdleTimeout), AnyConfigKey(.socketMaxMessageSize),
    AnyConfigKey(.socketStallTimeout),
    AnyConfigKey(.authGroup), AnyConfigKey(.authActorUsers),
    AnyConfigKey(.logLevel),
    AnyConfigKey(.stateSubscriberBuffer), AnyConfigKey(.stateReplayBuffer),
    AnyConfigKey(.databasePath), AnyConfigKey(.databaseIntegrityCheckHours), AnyConfigKey(.databaseURL),
    AnyConfigKey(.databasePasswordFile),
    AnyConfigKey(.nfcEnabled), AnyConfigKey(.nfcReaders), AnyConfigKey(.nfcModulations),
    AnyConfigKey(.curtainEnabled), AnyConfigKey(.curtainAddress), AnyConfigKey(.curtainAdapter),
    AnyConfigKey(.curtainNotify), AnyConfigKey(.curtainProfile), AnyConfigKey(.curtainPin),
    AnyConfigKey(.curtainPinFile), AnyConfigKey(.curtainPassword), AnyConfigKey(.curtainPasswordFile),
    AnyConfigKey(.curtainHold), AnyConfigKey(.curtainConnections),
    AnyConfigKey(.lendingArmSeconds), AnyConfigKey(.lendingLoanDays), AnyConfigKey(.lendingRepeatWindow),
    AnyConfigKey(.lendingMaxActivePerUser), AnyConfigKey(.lendingBookingGuard), AnyConfigKey(.lendingLocation), AnyConfigKey(.lendingTimeZone),
    AnyConfigKey(.outboxRetryBase), AnyConfigKey(.outboxRetryMax), AnyConfigKey(.outboxPollInterval),
    AnyConfigKey(.outboxRetentionDays), AnyConfigKey(.outboxFailingAlert),
    AnyConfigKey(.remindersDigestAt), AnyConfigKey(.remindersDueNoticeAt),
    AnyConfigKey(.metricsListen),
] + presenceConfigKeys

/// The log levels accepted in `log.level`.
public enum LogLevelName: String, Sendable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical
}
