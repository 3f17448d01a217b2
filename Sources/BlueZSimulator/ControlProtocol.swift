import CurtainProtocol

/// The text protocol of the simulator's control socket: one command per line, one answer line
/// (`ok <status>` or `error <message>`).
///
/// ```
/// press open|close|stop          wall switch
/// drop-link                      the radio link drops (supervision timeout)
/// end-notify                     bluetoothd ends the notify session; the link stays up
/// vanish | reappear              the curtain goes out of range / comes back
/// restart-bluetoothd [ms]        bluetoothd exits and comes back after ms (default 200)
/// power on|off                   adapter power
/// fail-writes N [NAME [TEXT]]    the next N writes fail with this D-Bus error
/// fail-connects N [NAME [TEXT]]  the next N Connect calls fail with this D-Bus error
/// schedule OPEN CLOSE            schedule changed on the device: HH:MM (enabled), HH:MM/off or off
/// advance SECONDS                fast-forward the simulated clock
/// advertise-while-connected on|off  the curtain keeps advertising while connected, or stops
/// battery PERCENT                the curtain's battery (SwitchBot, AM43), heard in its advertisements
/// status                         print the simulated hardware state
/// beacon …                       simulated iBeacons (BeaconControlProtocol.swift)
/// device ADDRESS COMMAND…        COMMAND for the curtain at ADDRESS (see --curtain; default: the first)
/// ```
public enum ControlProtocol {
    /// A line that is not a valid control command.
    public struct ParseError: Error, CustomStringConvertible, Sendable, Equatable {
        public var description: String
    }

    /// Parses one command line.
    public static func parse(_ line: String) throws(ParseError) -> BlueZSimulator.Control {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else { throw ParseError(description: "empty command") }
        let args = Array(words.dropFirst())
        func int(_ i: Int) throws(ParseError) -> Int {
            guard i < args.count, let v = Int(args[i]), v >= 0 else {
                throw ParseError(description: "\(verb): argument \(i + 1) must be a non-negative integer")
            }
            return v
        }
        switch verb {
        case "press":
            guard args.count == 1, let b = CurtainMotorModel.SwitchPress(rawValue: args[0]) else {
                throw ParseError(description: "usage: press open|close|stop")
            }
            return .press(b)
        case "drop-link": return .dropLink
        case "end-notify": return .endNotify
        case "vanish": return .vanish
        case "reappear": return .reappear
        case "restart-bluetoothd":
            return .restartBluetoothd(downtime: .milliseconds(args.isEmpty ? 200 : try int(0)))
        case "power":
            guard args.count == 1, ["on", "off"].contains(args[0]) else { throw ParseError(description: "usage: power on|off") }
            return .power(args[0] == "on")
        case "fail-writes", "fail-connects":
            let n = try int(0)
            let name = args.count > 1 ? args[1] : "org.bluez.Error.Failed"
            let defaultText = verb == "fail-writes" ? "Operation failed with ATT error: 0x0e" : "le-connection-abort-by-local"
            let text = args.count > 2 ? args[2...].joined(separator: " ") : defaultText
            return verb == "fail-writes" ? .failWrites(count: n, name: name, message: text)
                                         : .failConnects(count: n, name: name, message: text)
        case "schedule":
            guard args.count == 2 else { throw ParseError(description: "usage: schedule OPEN CLOSE (HH:MM, HH:MM/off or off)") }
            let (ot, oe) = try scheduleTime(args[0])
            let (ct, ce) = try scheduleTime(args[1])
            return .setSchedule(CurtainSchedule(openTime: ot, openEnabled: oe, closeTime: ct, closeEnabled: ce))
        case "advance":
            guard args.count == 1, let s = Double(args[0]), s >= 0, s.isFinite else {
                throw ParseError(description: "usage: advance SECONDS")
            }
            return .advance(seconds: s)
        case "advertise-while-connected":
            guard args.count == 1, ["on", "off"].contains(args[0]) else {
                throw ParseError(description: "usage: advertise-while-connected on|off")
            }
            return .advertiseWhileConnected(args[0] == "on")
        case "battery":
            guard args.count == 1, let n = Int(args[0]), (0...100).contains(n) else {
                throw ParseError(description: "usage: battery PERCENT (0 to 100)")
            }
            return .battery(n)
        case "status": return .status
        case "timing": return .timing
        case "beacon": return .beacon(try parseBeacon(args))
        default:
            throw ParseError(description: "unknown command \"\(verb)\" (press, drop-link, end-notify, vanish, reappear, "
                             + "restart-bluetoothd, power, fail-writes, fail-connects, schedule, advance, advertise-while-connected, battery, "
                             + "status, timing, beacon)")
        }
    }

    static func scheduleTime(_ s: String) throws(ParseError) -> (CurtainTime, Bool) {
        if s == "off" { return (.midnight, false) }
        var text = s
        var enabled = true
        if text.hasSuffix("/off") {
            text.removeLast(4)
            enabled = false
        }
        do throws(CurtainCommandError) {
            return (try CurtainTime(parsing: text), enabled)
        } catch {
            throw ParseError(description: "schedule: \(error)")
        }
    }
}
