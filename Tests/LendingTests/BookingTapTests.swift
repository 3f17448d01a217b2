import Foundation
import Lending
import LendingStore
import RoomBridgeCore
import Testing

/// A booking at the tap: the coordinator, the SQLite store and SystemState together.
@Suite("Bookings at the tap (coordinator, SQLite store, SystemState)")
struct BookingTapTests {
    let clock = ManualClock(t0)
    let state = SystemState()

    func coordinator(_ f: StoreFixture, loan: TimeInterval? = nil) -> LendingCoordinator {
        let clock = self.clock
        return LendingCoordinator(store: f.store, state: state, policy: LendingPolicy(armDuration: 30, defaultLoanPeriod: loan),
                                  location: "room-1", now: { clock.now })
    }

    /// The booking events so far, from the replay of every event.
    func bookingNotices() async throws -> [BookingNotice] {
        let subscription = await state.subscribe(since: 0, counted: false)
        var notices: [BookingNotice] = []
        var seen: UInt64 = 0
        for try await event in subscription.events {
            if case .booking(let notice) = event.payload { notices.append(notice) }
            seen = event.seq
            if seen >= subscription.snapshot.seq { break }
        }
        return notices
    }

    @Test func anotherPersonsTapIsRefusedWithTheBookersNameAndTheBookerFulfilsIt() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        let booking = try await lending.book(deviceId: "D-1", userId: "U-2", startsAt: t0.addingTimeInterval(1800),
                                             endsAt: t0.addingTimeInterval(7200), by: .unixUser("admin"))
        let notice = try #require(await bookingNotices().last)
        #expect(notice.change == .booked && notice.bookingId == booking.id && notice.userName == "Bob" && notice.by == "unix:admin")
        // Alice (U-1) taps her badge, then D-1: it is kept for Bob from 30 minutes from now.
        _ = await lending.handle(tap("04A1B2C3"))
        let refused = await lending.handle(tap("04112233445501"))
        #expect(refused == .booked(deviceId: "D-1", model: "iPhone 15", bookerId: "U-2", bookerName: "Bob",
                                   startsAt: t0.addingTimeInterval(1800)))
        let published = try #require(await state.snapshot().lending.lastOutcome)
        #expect(published.kind == .refused && published.refusal == .booked && published.bookedFor == "Bob"
                && published.bookedFrom == t0.addingTimeInterval(1800))
        #expect(refused.message.contains("booked for Bob"))
        #expect(try await f.rentals().isEmpty)
        // Bob's badge, then D-1: lent to him until the booking's end, the booking fulfilled.
        clock.advance(10)
        _ = await lending.handle(tap("0123456789ABCDEF"))
        let lent = await lending.handle(tap("04112233445501"))
        #expect(lent == .lent(deviceId: "D-1", model: "iPhone 15", userId: "U-2", userName: "Bob",
                              dueAt: t0.addingTimeInterval(7200), bookedFrom: nil))
        #expect(try await f.store.booking(id: booking.id)?.state == .fulfilled)
    }

    @Test func aLendBeforeABookingIsDueByItsStartAndSaysSo() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f, loan: 7 * 86400)
        let start = t0.addingTimeInterval(86400)
        _ = try await lending.book(deviceId: "D-1", userId: "U-2", startsAt: start, endsAt: start.addingTimeInterval(3600), by: nil)
        _ = await lending.handle(tap("04A1B2C3"))
        let lent = await lending.handle(tap("04112233445501"))
        #expect(lent == .lent(deviceId: "D-1", model: "iPhone 15", userId: "U-1", userName: "Alice", dueAt: start, bookedFrom: start))
        #expect(await state.snapshot().lending.lastOutcome?.bookedFrom == start)
        // Another device, with no booking, keeps the loan period and says nothing of bookings.
        clock.advance(10)
        let other = await lending.handle(tap("04112233445502"))
        #expect(other == .lent(deviceId: "D-2", model: "iPhone 15", userId: "U-1", userName: "Alice",
                               dueAt: StoreConventions.stored(clock.now.addingTimeInterval(7 * 86400)), bookedFrom: nil))
    }

    @Test func cancellingAnnouncesItAndFreesTheDevice() async throws {
        let f = try await StoreFixture()
        defer { f.cleanup() }
        let lending = coordinator(f)
        let booking = try await lending.book(deviceId: "D-1", userId: "U-2", startsAt: t0, endsAt: t0.addingTimeInterval(3600), by: nil)
        _ = try await lending.cancelBooking(id: booking.id, by: .user("U-2"))
        let notice = try #require(await bookingNotices().last)
        #expect(notice.change == .cancelled && notice.by == "U-2")
        let rental = try await lending.lend(deviceId: "D-1", userId: "U-1")
        #expect(rental.userId == "U-1" && rental.dueAt == nil)
    }
}
