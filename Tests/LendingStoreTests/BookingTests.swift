import Foundation
import Lending
import LendingStore
import Testing

/// Bookings on both stores: no overlap, the lent device's due date, and what a lend does with them.
@Suite("Bookings (SQLite and PostgreSQL)")
struct BookingTests {
    static let hour: TimeInterval = 3600

    func book(_ store: any InventoryStore, _ device: String = "D-001", _ user: String = "U-1",
              from start: TimeInterval, to end: TimeInterval, now: TimeInterval = 0) async throws -> Booking {
        try await store.book(BookingRequest(deviceId: device, userId: user, startsAt: at(start), endsAt: at(end), at: at(now),
                                            by: .unixUser("admin")))
    }

    @Test(arguments: Backend.all) func bookingsOfOneDeviceNeverOverlap(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        let first = try await book(store, from: 10 * Self.hour, to: 12 * Self.hour)
        #expect(first.state == .booked && first.userName == "User 1" && first.model == "Model D-001" && first.bookedBy == "unix:admin")
        await #expect(throws: LendingError.bookingOverlaps("D-001", existing: first.id, userName: "User 1",
                                                           startsAt: at(10 * Self.hour), endsAt: at(12 * Self.hour))) {
            try await book(store, "D-001", "U-2", from: 11 * Self.hour, to: 13 * Self.hour)
        }
        await #expect(throws: LendingError.self) { try await book(store, "D-001", "U-2", from: 9 * Self.hour, to: 14 * Self.hour) }
        // Touching ends do not overlap; another device is free.
        let after = try await book(store, "D-001", "U-2", from: 12 * Self.hour, to: 13 * Self.hour)
        _ = try await book(store, "D-002", "U-2", from: 10 * Self.hour, to: 12 * Self.hour)
        // A cancelled booking frees its time.
        let cancelled = try await store.cancelBooking(id: first.id, at: at(60), by: .user("U-1"))
        #expect(cancelled.state == .cancelled && cancelled.cancelledBy == "U-1" && cancelled.cancelledAt == at(60))
        await #expect(throws: LendingError.bookingNotCancellable(first.id, state: .cancelled)) {
            try await store.cancelBooking(id: first.id, at: at(61), by: nil)
        }
        let again = try await book(store, "D-001", "U-2", from: 11 * Self.hour, to: 12 * Self.hour)
        // Range queries: what overlaps [10:30, 12:30) on D-001, by start; cancelled ones only when asked.
        let window = BookingQuery(deviceId: "D-001", from: at(10.5 * Self.hour), until: at(12.5 * Self.hour))
        #expect(try await store.bookings(window, page: .first).items.map(\.id) == [again.id, after.id])
        var all = window
        all.includeCancelled = true
        #expect(try await store.bookings(all, page: .first).items.map(\.id) == [first.id, again.id, after.id])
        #expect(try await store.bookings(BookingQuery(userId: "U-1"), page: .first).items.map(\.id).isEmpty)
        // Paging by start time.
        let page1 = try await store.bookings(BookingQuery(), page: PageRequest(limit: 2))
        let page2 = try await store.bookings(BookingQuery(), page: PageRequest(limit: 2, cursor: page1.nextCursor))
        #expect(page1.items.count == 2 && page2.items.count == 1 && page2.nextCursor == nil)
        await #expect(throws: LendingError.noSuchBooking(9999)) { try await store.cancelBooking(id: 9999, at: at(0), by: nil) }
    }

    @Test(arguments: Backend.all) func aBookingIsCheckedForTimesAndRecords(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 1)
        defer { fixture.close() }
        let store = fixture.store
        await #expect(throws: LendingError.self) { try await book(store, from: 2 * Self.hour, to: Self.hour) }
        await #expect(throws: LendingError.self) { try await book(store, from: 0, to: Self.hour, now: 2 * Self.hour) }
        await #expect(throws: LendingError.noSuchDevice("D-404")) { try await book(store, "D-404", from: 0, to: Self.hour) }
        await #expect(throws: LendingError.noSuchUser("U-404")) { try await book(store, "D-001", "U-404", from: 0, to: Self.hour) }
        #expect(try await store.bookings(BookingQuery(includeCancelled: true), page: .first).items.isEmpty)
    }

    @Test(arguments: Backend.all) func aLentDeviceIsBookedOnlyFromItsDueDate(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        _ = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(5 * Self.hour)))
        await #expect(throws: LendingError.bookedWhileLent("D-001", userName: "User 1", dueAt: at(5 * Self.hour))) {
            try await book(store, "D-001", "U-2", from: 4 * Self.hour, to: 6 * Self.hour)
        }
        _ = try await book(store, "D-001", "U-2", from: 5 * Self.hour, to: 6 * Self.hour)
        // An open-ended rental has no due date to book from.
        _ = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(0)))
        await #expect(throws: LendingError.bookedWhileLent("D-002", userName: "User 1", dueAt: nil)) {
            try await book(store, "D-002", "U-2", from: 100 * Self.hour, to: 101 * Self.hour)
        }
        // …and the borrower cannot renew into the booking.
        await #expect(throws: LendingError.booked("D-001", userId: "U-2", userName: "User 2", startsAt: at(5 * Self.hour))) {
            try await store.renew(deviceId: "D-001", dueAt: at(7 * Self.hour), at: at(60), by: nil)
        }
        #expect(try await store.device(id: "D-001")?.activeRental?.dueAt == at(5 * Self.hour))
        _ = try await store.renew(deviceId: "D-001", dueAt: at(4 * Self.hour), at: at(60), by: nil)
    }

    @Test(arguments: Backend.all) func aLendMeetsTheNextBooking(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 3, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        // D-001 booked by U-2 from 00:30 (within the default guard of an hour): U-1 is refused.
        let booking = try await book(store, "D-001", "U-2", from: 0.5 * Self.hour, to: 3 * Self.hour)
        await #expect(throws: LendingError.booked("D-001", userId: "U-2", userName: "User 2", startsAt: at(0.5 * Self.hour))) {
            try await store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), dueAt: at(Self.hour)))
        }
        #expect(try await store.device(id: "D-001")?.activeRental == nil)
        // The booker's lend fulfils it, due at its end.
        let rental = try await store.lend(LendRequest(deviceId: "D-001", userId: "U-2", at: at(60)))
        #expect(rental.dueAt == at(3 * Self.hour))
        let fulfilled = try #require(try await store.booking(id: booking.id))
        #expect(fulfilled.state == .fulfilled && fulfilled.rentalId == rental.id)
        await #expect(throws: LendingError.bookingNotCancellable(booking.id, state: .fulfilled)) {
            try await store.cancelBooking(id: booking.id, at: at(120), by: nil)
        }
        // D-002 booked from 05:00: a lend now goes through, due no later than the booking's start;
        // an earlier due date stays.
        _ = try await book(store, "D-002", "U-2", from: 5 * Self.hour, to: 6 * Self.hour)
        let clipped = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(0), dueAt: at(24 * Self.hour)))
        #expect(clipped.dueAt == at(5 * Self.hour))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-002", at: at(10)))
        let openEnded = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(20)))
        #expect(openEnded.dueAt == at(5 * Self.hour))
        _ = try await store.returnDevice(ReturnRequest(deviceId: "D-002", at: at(30)))
        let early = try await store.lend(LendRequest(deviceId: "D-002", userId: "U-1", at: at(40), dueAt: at(Self.hour)))
        #expect(early.dueAt == at(Self.hour))
        // A booking that has ended, or was cancelled, no longer holds the device.
        let past = try await book(store, "D-003", "U-2", from: 0, to: Self.hour)
        _ = try await store.cancelBooking(id: past.id, at: at(1), by: nil)
        _ = try await store.lend(LendRequest(deviceId: "D-003", userId: "U-1", at: at(2)))
    }

    @Test(arguments: Backend.all) func aShorterGuardLetsALendBeforeTheBookingThrough(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 2)
        defer { fixture.close() }
        _ = try await book(fixture.store, "D-001", "U-2", from: 0.5 * Self.hour, to: Self.hour)
        let rental = try await fixture.store.lend(LendRequest(deviceId: "D-001", userId: "U-1", at: at(0), bookingGuard: 600))
        #expect(rental.dueAt == at(0.5 * Self.hour))
    }

    /// As rentals do, bookings keep the device's model and the user's name after both are deleted.
    /// Deleting either cancels its bookings still to come, by whoever deleted it; a booking
    /// already over stays as it was.
    @Test(arguments: Backend.all) func bookingsOutliveTheDeviceAndTheUser(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 2, users: 2)
        defer { fixture.close() }
        let store = fixture.store
        let over = try await book(store, from: Self.hour, to: 2 * Self.hour)
        let toCome = try await book(store, from: 10 * Self.hour, to: 11 * Self.hour)
        let otherUser = try await book(store, "D-001", "U-2", from: 20 * Self.hour, to: 21 * Self.hour)
        let otherDevice = try await book(store, "D-002", "U-1", from: 20 * Self.hour, to: 21 * Self.hour)
        try await store.deleteDevice(id: "D-001", at: at(3 * Self.hour), by: .unixUser("ops"))
        for (booking, state) in [(over, Booking.State.booked), (toCome, .cancelled), (otherUser, .cancelled), (otherDevice, .booked)] {
            let kept = try #require(try await store.booking(id: booking.id))
            #expect(kept.state == state, "booking \(booking.id)")
            #expect(kept.model == "Model \(kept.deviceId)")
        }
        let cancelled = try #require(try await store.booking(id: toCome.id))
        #expect(cancelled.cancelledAt == at(3 * Self.hour) && cancelled.cancelledBy == ChangeActor.unixUser("ops").text)
        // The user's booking of another device goes with the user.
        try await store.deleteUser(id: "U-1", at: at(4 * Self.hour), by: .unixUser("ops"))
        let kept = try #require(try await store.booking(id: otherDevice.id))
        #expect(kept.state == .cancelled && kept.userName == "User 1" && kept.deviceId == "D-002")
        #expect(try await store.booking(id: over.id)?.state == .booked)
    }

    /// Two stores on one database (two kiosks) book the same slot 32 times at once: one wins.
    @Test(arguments: Backend.all) func concurrentBookingsOfOneSlotHaveOneWinner(_ backend: Backend) async throws {
        let fixture = try await StoreFixture(backend, devices: 1, users: 4)
        let a = fixture.store
        let b = try await fixture.openAgain()
        defer { fixture.close(b) }
        for round in 0..<3 {
            let start = TimeInterval(round * 10) * Self.hour
            let won = await withTaskGroup(of: Bool.self) { group in
                for i in 0..<32 {
                    let store = i % 2 == 0 ? a : b
                    group.addTask {
                        let request = BookingRequest(deviceId: "D-001", userId: "U-\(i % 4 + 1)", startsAt: at(start + Double(i) * 60),
                                                     endsAt: at(start + 2 * Self.hour + Double(i) * 60), at: at(0))
                        do {
                            _ = try await store.book(request)
                            return true
                        } catch LendingError.bookingOverlaps {
                            return false
                        } catch {
                            Issue.record("a booking failed otherwise: \(error)")
                            return false
                        }
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(won == 1, "round \(round)")
        }
        #expect(try await a.bookings(BookingQuery(), page: .first).items.count == 3)
    }
}
