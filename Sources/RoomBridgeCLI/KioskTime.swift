import Foundation
import Lending
import RoomBridgeAPI
import RoomBridgeCore
import Varlink
import VarlinkNIO

/// The kiosk's time zone (the daemon's `State.timeZone`, from `lending.time_zone`): the CLI shows
/// every time in it, labelled, and reads a bare day (`--due 2026-12-01`) in it.
struct KioskTime: Sendable {
    /// The zone's name as the daemon reports it (`Asia/Tokyo`), the label people read.
    let name: String
    let zone: TimeZone

    /// Set by ``withClient(_:_:)`` from the daemon; the CLI's own zone until then.
    @TaskLocal static var current = KioskTime(name: TimeZone.current.identifier, zone: .current)

    /// The daemon's zone; the CLI's own when the daemon does not say (or names one this host lacks).
    static func of(_ client: VarlinkClient) async -> KioskTime {
        from(try? await client.call(StateAPI.GetState.self, .init()).state)
    }

    /// ``of(_:)`` through the shared client of long-lived commands.
    static func of(_ link: ReconnectingVarlinkClient) async -> KioskTime {
        from(try? await link.call(StateAPI.GetState.self, .init(), retry: .idempotent).state)
    }

    private static func from(_ state: StateSnapshot?) -> KioskTime {
        guard let name = state?.timeZone, let zone = TimeZone(identifier: name)
        else { return KioskTime(name: TimeZone.current.identifier, zone: .current) }
        return KioskTime(name: name, zone: zone)
    }

    /// `2026-11-24 18:40` in the zone, for table cells (the header carries the label).
    func minutes(_ date: Date) -> String { String(LendingFormat.spreadsheet(date, timeZone: zone).dropLast(3)) }

    /// `18:40:02` in the zone (watch lines; the status block names the zone).
    func clock(_ date: Date) -> String { String(LendingFormat.spreadsheet(date, timeZone: zone).suffix(8)) }

    /// `2026-11-24 18:40 (Asia/Tokyo)`, for sentences.
    func labelled(_ date: Date) -> String { "\(minutes(date)) (\(name))" }

    /// A column header with the zone: `DUE (Asia/Tokyo)`.
    func header(_ title: String) -> String { "\(title) (\(name))" }

    /// The first instant of a calendar day in the zone (`--since 2026-11-01`); nil if there is no such day.
    func startOfDay(year: Int, month: Int, day: Int) -> Date? {
        KioskDay(year: year, month: month, day: day).start(in: zone)
    }

    /// A wall-clock time in the zone (`--from "2026-12-01 14:00"`); nil if the zone has no such
    /// time (a day that does not exist, or an hour skipped by a clock change).
    func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute)
        guard let date = calendar.date(from: components),
              calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date) == components else { return nil }
        return date
    }

    /// The last second of a calendar day in the zone (`--due 2026-12-01`: due back that day).
    func endOfDay(year: Int, month: Int, day: Int) -> Date? {
        KioskDay(year: year, month: month, day: day).end(in: zone)
    }
}
