import ArgumentParser
import Foundation
import Lending
import RoomBridgeAPI
import Varlink
import VarlinkNIO

// roombridgectl book|bookings|cancel-booking: bookings (io.roombridge.Lending).

enum BookingRender {
    static var headers: [String] {
        let k = KioskTime.current
        return ["BOOKING", "DEVICE", "MODEL", "USER", "NAME", k.header("FROM"), k.header("UNTIL"), "STATE", "BOOKED BY"]
    }

    static func row(_ b: Booking) -> [String] {
        [String(b.id), b.deviceId, b.model, b.userId, b.userName, Table.time(b.startsAt), Table.time(b.endsAt), b.state.rawValue,
         b.bookedBy ?? "—"]
    }

    /// "D-001 iPhone 15 for Aiko Tanaka (U-1), 2026-12-01 14:00 – 2026-12-01 17:00 (Asia/Tokyo)"
    static func sentence(_ b: Booking) -> String {
        "\(b.deviceId) \(b.model) for \(b.userName) (\(b.userId)), \(Table.time(b.startsAt)) – \(Table.when(b.endsAt))"
    }
}

/// A time argument of a booking: a day alone is its start (`--from`) or its end (`--until`).
private func bookingTime(_ text: String, option: String, day: DayMeaning) throws -> Date {
    guard let date = try dateArgument(text, option: option, day: day) else {
        throw ValidationError("give \(option)")
    }
    return date
}

struct Book: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Book a device for a user from one time to another (book D --user U --from TIME --until TIME).",
        discussion: """
            Times: "YYYY-MM-DD HH:MM" in the kiosk's time zone (lending.time_zone), a day alone (--from: its start, \
            --until: its end), or ISO 8601. While the booking runs, or starts within lending.booking_guard minutes, \
            the device is lent only to its booker; a lend before it is due back by its start.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Device ID.") var device: String
    @Option(name: .long, help: "The user it is booked for.") var user: String
    @Option(name: .long, help: ArgumentHelp("When it starts.", valueName: "TIME")) var from: String
    @Option(name: .long, help: ArgumentHelp("When it ends.", valueName: "TIME")) var until: String

    func validate() throws {
        let start = try bookingTime(from, option: "--from", day: .startOfKioskDay)
        let end = try bookingTime(until, option: "--until", day: .endOfKioskDay)
        // Read in this machine's zone here and in the kiosk's once connected: the order is the same.
        if end <= start { throw ValidationError("--until \(until) is not after --from \(from); give the later time to --until") }
    }

    func run() async throws {
        try await withClient(options) { client in
            let p = LendingAPI.Book.Parameters(deviceId: device, userId: user,
                                               startsAt: try bookingTime(from, option: "--from", day: .startOfKioskDay),
                                               endsAt: try bookingTime(until, option: "--until", day: .endOfKioskDay))
            let reply = try await call(client, LendingAPI.Book.self, p)
            if options.json { emit(reply.sole.serialized()); return }
            let b = reply.value.booking
            emit("booked \(BookingRender.sentence(b)); booking \(b.id)")
        }
    }
}

struct Bookings: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List bookings that have not ended (or those overlapping --from/--until), by start time.",
        discussion: "--from/--until: a day (its start), \"YYYY-MM-DD HH:MM\" in the kiosk's time zone, or ISO 8601. Default: from now on.")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: "Only this device.") var device: String?
    @Option(name: .long, help: "Only this user.") var user: String?
    @Option(name: .long, help: ArgumentHelp("Bookings that end after this time (default now).", valueName: "TIME")) var from: String?
    @Option(name: .long, help: ArgumentHelp("Bookings that start before this time.", valueName: "TIME")) var until: String?
    @Flag(name: .long, help: "Also cancelled bookings.") var all = false

    func validate() throws {
        let start = try dateArgument(from, option: "--from")
        let end = try dateArgument(until, option: "--until")
        if let start, let end, end <= start { throw ValidationError("--until \(until ?? "") is not after --from \(from ?? "")") }
    }

    func run() async throws {
        try await withClient(options) { client in
            let p = LendingAPI.ListBookings.Parameters(deviceId: device, userId: user,
                                                       from: try dateArgument(from, option: "--from") ?? Date(),
                                                       until: try dateArgument(until, option: "--until"),
                                                       includeCancelled: all ? true : nil)
            let items = try await allPages(client, LendingAPI.ListBookings.self, p, \.bookings)
            printList(items, json: options.json, empty: "no bookings", headers: BookingRender.headers, row: BookingRender.row)
        }
    }
}

struct CancelBooking: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel-booking",
        abstract: "Cancel a booking by its number (see roombridgectl bookings).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Booking number.") var id: Int64

    func run() async throws {
        try await withClient(options) { client in
            let reply = try await call(client, LendingAPI.CancelBooking.self, .init(id: id))
            if options.json { emit(reply.sole.serialized()); return }
            emit("cancelled booking \(id): \(BookingRender.sentence(reply.value.booking))")
        }
    }
}
