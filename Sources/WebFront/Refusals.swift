import enum Lending.Validation
import Varlink

/// The daemon's typed refusals as sentences for the page, in the reader's language: never a wire
/// name, a UTC time or advice meant for the command line (that is the daemon's `message`, kept
/// for roombridgectl). Each `io.roombridge.Inventory`/`.Lending` error has a catalogue entry
/// `refusal.NAME` whose placeholders are the error's parameters; an invalid field has one per
/// validation rule or field; an error the catalogue does not know gets a general sentence.
enum Refusals {
    /// The parameters that are times on the wire (UTC), shown in the kiosk's time zone.
    static let times: Set<String> = ["since", "startsAt", "endsAt", "dueAt"]

    static func sentence(_ error: VarlinkError, _ l: Localizer) -> String {
        let name = error.name.split(separator: ".").last.map(String.init) ?? error.name
        let p = error.parameters
        var args: [String: String] = [:]
        for (key, value) in p {
            switch value {
            case .string(let s): args[key] = Self.times.contains(key) ? l.dateTime(s) : s
            case .int(let i): args[key] = l.number(Int(i))
            case .array(let items): args[key] = items.compactMap(\.stringValue).joined(separator: l.t("kiosk.presenceSeparator"))
            default: break
            }
        }
        if name == "NotLendable", let status = p["status"]?.stringValue { args["status"] = l.t("status.\(status)") }
        if name == "InvalidField" {
            if let rule = p["rule"]?.stringValue, l.has("refusal.rule.\(rule)") {
                let example = Validation.example(for: p["field"]?.stringValue ?? "")
                return l.t("refusal.rule.\(rule)", args.merging(["example": example]) { a, _ in a })
            }
            if let field = p["field"]?.stringValue, l.has("refusal.field.\(field)") {
                return l.t("refusal.field.\(field)", args)
            }
            return l.t("refusal.InvalidField", ["field": args["field"] ?? "?"])
        }
        // A lent device with no due date has no "until" to name.
        if name == "BookedWhileLent", p["dueAt"]?.stringValue == nil { return l.t("refusal.BookedWhileLent.open", args) }
        if name == "BookingNotCancellable", let state = p["state"]?.stringValue, l.has("refusal.BookingNotCancellable.\(state)") {
            return l.t("refusal.BookingNotCancellable.\(state)", args)
        }
        if name == "AlreadyExists", let kind = p["kind"]?.stringValue, l.has("refusal.AlreadyExists.\(kind)") {
            return l.t("refusal.AlreadyExists.\(kind)", args)
        }
        if l.has("refusal.\(name)") { return l.t("refusal.\(name)", args) }
        return l.t("refusal.other")
    }
}
