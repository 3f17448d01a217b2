#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A booking's store-assigned number (increasing).
public typealias BookingID = Int64

/// A reservation of one device for one user, from `startsAt` to `endsAt` (glossary "booking").
/// Bookings of one device never overlap (cancelled ones aside). Like a rental, a booking keeps
/// the device's model and the user's name by value, so it reads the same after either is deleted.
public struct Booking: Sendable, Hashable, Codable {
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// Waiting for its start, or running and not yet taken up.
        case booked
        /// The booker borrowed the device under it (``rentalId``).
        case fulfilled
        /// Cancelled before it was taken up; it no longer holds its time.
        case cancelled
    }

    public var id: BookingID
    public var deviceId: DeviceID
    public var model: String
    public var userId: UserID
    public var userName: String
    public var startsAt: Date
    public var endsAt: Date
    public var state: State
    /// When it was made, and by whom (``ChangeActor/text``).
    public var bookedAt: Date
    public var bookedBy: String?
    /// When it was cancelled, and by whom.
    public var cancelledAt: Date?
    public var cancelledBy: String?
    /// The rental that fulfilled it.
    public var rentalId: Int64?

    public init(id: BookingID, deviceId: DeviceID, model: String, userId: UserID, userName: String, startsAt: Date,
                endsAt: Date, state: State = .booked, bookedAt: Date, bookedBy: String? = nil, cancelledAt: Date? = nil,
                cancelledBy: String? = nil, rentalId: Int64? = nil) {
        self.id = id
        self.deviceId = deviceId
        self.model = model
        self.userId = userId
        self.userName = userName
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.state = state
        self.bookedAt = bookedAt
        self.bookedBy = bookedBy
        self.cancelledAt = cancelledAt
        self.cancelledBy = cancelledBy
        self.rentalId = rentalId
    }
}

/// A booking to make.
public struct BookingRequest: Sendable, Hashable {
    public var deviceId: DeviceID
    public var userId: UserID
    public var startsAt: Date
    public var endsAt: Date
    /// When it is asked for (``BookingRules/validate(_:)`` refuses a booking that has already ended).
    public var at: Date
    public var by: ChangeActor?

    public init(deviceId: DeviceID, userId: UserID, startsAt: Date, endsAt: Date, at: Date, by: ChangeActor? = nil) {
        self.deviceId = deviceId
        self.userId = userId
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.at = at
        self.by = by
    }
}

/// Which bookings a listing returns: those of the device and/or user that overlap `[from, until)`,
/// by start time. Nil fields do not filter.
public struct BookingQuery: Sendable, Hashable {
    public var deviceId: DeviceID?
    public var userId: UserID?
    public var from: Date?
    public var until: Date?
    /// Also cancelled ones.
    public var includeCancelled: Bool

    public init(deviceId: DeviceID? = nil, userId: UserID? = nil, from: Date? = nil, until: Date? = nil,
                includeCancelled: Bool = false) {
        self.deviceId = deviceId
        self.userId = userId
        self.from = from
        self.until = until
        self.includeCancelled = includeCancelled
    }
}

/// What a lend becomes once the device's bookings are seen (``BookingRules/admit(_:next:)``).
public struct BookingAdmission: Sendable, Hashable {
    /// The lend's due date: the requested one, the booking's end when the lend fulfils it, or
    /// clipped to the next booking's start.
    public var dueAt: Date?
    /// The booking the lend fulfils.
    public var fulfils: BookingID?
    /// The start of the booking the due date was clipped to.
    public var bookedFrom: Date?
}

/// The booking rules, as pure functions both stores apply inside their write transactions.
public enum BookingRules {
    /// The default of `lending.booking_guard`: how long before a booking's start the device is
    /// kept for its booker.
    public static let defaultGuard: TimeInterval = 3600

    /// The longest booking (a year): a typo in a year is caught.
    public static let maximumLength: TimeInterval = 366 * 86400

    /// Refuses a booking whose end is not after its start, that has already ended, or that is longer than a year.
    public static func validate(_ request: BookingRequest) throws(LendingError) {
        guard request.endsAt > request.startsAt else {
            throw .invalidField("endsAt", reason: "\(LendingFormat.iso8601(request.endsAt)) is not after the start "
                                + "\(LendingFormat.iso8601(request.startsAt)); give an end after the start")
        }
        guard request.endsAt > request.at else {
            throw .invalidField("endsAt", reason: "\(LendingFormat.iso8601(request.endsAt)) has already passed; book a time to come")
        }
        guard request.endsAt.timeIntervalSince(request.startsAt) <= maximumLength else {
            throw .invalidField("endsAt", reason: "a booking may last at most a year; book a shorter time")
        }
    }

    /// A device may be booked while it is lent only from the rental's due date on (an open-ended
    /// rental has none, so it cannot be booked until it is back).
    public static func checkRental(_ rental: Rental?, for request: BookingRequest) throws(LendingError) {
        guard let rental, rental.returnedAt == nil else { return }
        guard let due = rental.dueAt, ms(request.startsAt) >= ms(due) else {
            throw .bookedWhileLent(request.deviceId, userName: rental.userName, dueAt: rental.dueAt)
        }
    }

    /// The lend in the light of the device's next booking (the first not cancelled or fulfilled
    /// that has not ended at the lend's time):
    /// - it is running, or starts within `request.bookingGuard`: the booker's lend fulfils it
    ///   (due at its end); anyone else's is refused with ``LendingError/booked(_:userId:userName:startsAt:)``;
    /// - it starts later: the lend goes through, due no later than its start.
    public static func admit(_ request: LendRequest, next: Booking?) throws(LendingError) -> BookingAdmission {
        guard let next, next.state == .booked, next.endsAt > request.at else {
            return BookingAdmission(dueAt: request.dueAt)
        }
        if next.startsAt <= request.at.addingTimeInterval(request.bookingGuard) {
            guard next.userId == request.userId else {
                throw .booked(request.deviceId, userId: next.userId, userName: next.userName, startsAt: next.startsAt)
            }
            return BookingAdmission(dueAt: next.endsAt, fulfils: next.id)
        }
        if let due = request.dueAt, ms(due) <= ms(next.startsAt) { return BookingAdmission(dueAt: due) }
        return BookingAdmission(dueAt: next.startsAt, bookedFrom: next.startsAt)
    }

    /// Times as the stores keep them (whole milliseconds): a time read from the wire and the same
    /// time read back from a store may differ in the last bit of a `Double`, so rules that compare
    /// a request's time with a stored one compare these.
    static func ms(_ date: Date) -> Int64 { StoreConventions.millis(date) }

    /// A renewal may not run into another person's booking.
    public static func checkRenewal(deviceId: DeviceID, dueAt: Date, borrower: UserID, next: Booking?) throws(LendingError) {
        guard let next, next.state == .booked, next.userId != borrower, ms(next.startsAt) < ms(dueAt) else { return }
        throw .booked(deviceId, userId: next.userId, userName: next.userName, startsAt: next.startsAt)
    }
}
