import Foundation
import Synchronization
import Testing
import TestSupport
import CurtainProtocol
@testable import RoomBridgeCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func tap(_ uid: TagUID, at: Date = t0) -> Tap {
    Tap(reader: "front", uid: uid, tagType: "NTAG213", at: at)
}

@Suite struct SystemStateTests {
    /// `latestSnapshot()` (read without the actor) always equals `snapshot()` once a change is
    /// made, and its revision moves with every change, the ones without an event included.
    @Test func latestSnapshotFollowsEveryChange() async throws {
        let clock = Mutex(t0)
        let state = SystemState(now: { clock.withLock { $0 } })
        var revisions: [UInt64] = [state.latestSnapshot().revision]
        func check(_ what: String) async {
            let latest = state.latestSnapshot()
            #expect(latest.snapshot == (await state.snapshot()), "after \(what)")
            #expect(latest.revision > revisions.last!, "after \(what)")
            revisions.append(latest.revision)
        }
        await state.declareReaders(["front"])
        await check("declareReaders")
        await state.recordTap(tap("04A1"))
        await check("recordTap")
        let sub = await state.subscribe()
        await check("subscribe (subscriber count)")
        await state.recordCurtainRequest(CurtainRequest(kind: .open, at: t0))
        await check("recordCurtainRequest")
        await state.setArm(LendingArm(userId: "U-1", userName: "Aiko", armedAt: t0, expiresAt: t0.addingTimeInterval(30)))
        await check("setArm")
        #expect(state.latestSnapshot().timeDependent)
        clock.withLock { $0 = t0.addingTimeInterval(10) }
        #expect(state.latestSnapshot().snapshot.lending.remainingSeconds == 20)
        await state.setArm(nil)
        await check("setArm(nil)")
        #expect(!state.latestSnapshot().timeDependent)
        _ = sub
        await state.shutdown()
        await check("shutdown")
    }

    @Test func eventsAreNumberedWithoutGapsFromOne() async throws {
        let state = SystemState(now: { t0 })
        let sub = await state.subscribe()
        #expect(sub.snapshot.seq == 0)
        await state.recordTap(tap("04A1"))
        await state.updateReader(ReaderStatus(name: "front", state: .connected, since: t0))
        await state.updateCurtain { $0.connection = .connected }
        var seqs: [UInt64] = []
        for try await e in sub.events {
            seqs.append(e.seq)
            if seqs.count == 3 { break }
        }
        #expect(seqs == [1, 2, 3])
        #expect(await state.snapshot().seq == 3)
    }

    /// The replay ring wraps around: with room for 3 events after 7, a subscriber resumes after
    /// seq 4 (events 5...7 kept) but not after 3 (event 4 is gone) nor after 8 (not emitted in
    /// this run); resuming, it gets the kept events and then the live ones.
    @Test func resumingReplaysFromTheRingAfterItWrapped() async throws {
        let state = SystemState(replayLimit: 3, now: { t0 })
        for i in 1...7 { await state.recordTap(tap(TagUID(bytes: [UInt8(i)])!)) }
        for since: UInt64 in [0, 3, 8] {
            let sub = await state.subscribe(since: since)
            #expect(sub.resumedAfter == nil, "since \(since)")
            #expect(sub.snapshot.seq == 7)
        }
        var subs: [(UInt64, Subscription)] = []
        for since: UInt64 in [4, 6, 7] { subs.append((since, await state.subscribe(since: since))) }
        await state.recordTap(tap("FF"))
        for (since, sub) in subs {
            #expect(sub.resumedAfter == since)
            var seqs: [UInt64] = []
            for try await e in sub.events {
                seqs.append(e.seq)
                if e.seq == 8 { break }
            }
            #expect(seqs == Array((since + 1)...8), "since \(since)")
        }
    }

    @Test func snapshotAndStreamHaveNoGap() async throws {
        let state = SystemState(now: { t0 })
        await state.recordTap(tap("01"))
        await state.recordTap(tap("02"))
        let sub = await state.subscribe()
        #expect(sub.snapshot.seq == 2)
        #expect(sub.snapshot.lastTap?.uid == "02")
        await state.recordTap(tap("03"))
        var it = sub.events.makeAsyncIterator()
        let first = try await it.next()
        #expect(first?.seq == 3)
        #expect(first?.payload == .tagArrived(tap("03")))
    }

    @Test func unchangedUpdatesEmitNothing() async {
        let state = SystemState(now: { t0 })
        let status = ReaderStatus(name: "front", state: .connected, since: t0)
        await state.updateReader(status)
        await state.updateReader(ReaderStatus(name: "front", state: .connected, since: t0.addingTimeInterval(5)))
        await state.updateCurtain { $0.position = 10 }
        await state.updateCurtain { $0.position = 10 }
        #expect(await state.snapshot().seq == 2)
    }

    @Test func slowSubscriberIsDroppedOthersKeepReceiving() async throws {
        let state = SystemState(bufferLimit: 4, now: { t0 })
        let slow = await state.subscribe()
        let fast = await state.subscribe(bufferLimit: 100)
        for i in 0..<10 { await state.recordTap(tap(TagUID(bytes: [UInt8(i)])!)) }
        // The slow one gets what fit in its buffer, then the explicit error.
        var got = 0
        do {
            for try await _ in slow.events { got += 1 }
            Issue.record("slow subscriber was not dropped")
        } catch let error as SubscriptionError {
            #expect(error == .tooSlow(bufferLimit: 4))
        }
        #expect(got == 4)
        var fastSeqs: [UInt64] = []
        for try await e in fast.events {
            fastSeqs.append(e.seq)
            if fastSeqs.count == 10 { break }
        }
        #expect(fastSeqs == Array(1...10))
        let counters = await state.snapshot().counters
        #expect(counters.subscribersDropped == 1)
    }

    /// A receiver subscription, as `Watch` uses over the socket: replayed events reach the
    /// receiver before `subscribe` returns, then each event in order on the actor, each batch
    /// followed by a flush; `.tooSlow`
    /// drops it with the error, `.gone` forgets it silently, shutdown ends it.
    @Test func receiverSubscribersGetEveryEventAndAreDroppedOrForgotten() async throws {
        final class Log: Sendable {
            let seqs = Mutex<[UInt64]>([])
            let ends = Mutex<[SubscriptionError]>([])
            /// The seqs received when each flush came.
            let flushes = Mutex<[[UInt64]]>([])
            let answer: Mutex<EventReceiver.Delivery>
            init(_ answer: EventReceiver.Delivery = .accepted) { self.answer = Mutex(answer) }
            var receiver: EventReceiver {
                EventReceiver(receive: { event in
                    self.seqs.withLock { $0.append(event.seq) }
                    return self.answer.withLock { $0 }
                }, flush: {
                    let seen = self.seqs.withLock { $0 }
                    self.flushes.withLock { $0.append(seen) }
                }, end: { error in self.ends.withLock { $0.append(error) } })
            }
        }
        let state = SystemState(bufferLimit: 8, replayLimit: 16, now: { t0 })
        for i in 0..<3 { await state.recordTap(tap(TagUID(bytes: [UInt8(i)])!)) }
        let resumed = Log(), slow = Log(), leaving = Log()
        let r = await state.subscribe(since: 1, receiver: resumed.receiver)
        #expect(r.resumedAfter == 1)
        #expect(r.bufferLimit == 8 + 2)
        #expect(resumed.seqs.withLock { $0 } == [2, 3])
        let s = await state.subscribe(receiver: slow.receiver)
        #expect(s.bufferLimit == 8 && s.snapshot.seq == 3)
        _ = await state.subscribe(receiver: leaving.receiver)
        #expect(await state.snapshot().counters.subscribers == 3)

        slow.answer.withLock { $0 = .tooSlow }
        leaving.answer.withLock { $0 = .gone }
        await state.recordTap(tap("04"))
        await state.recordTap(tap("05"))
        #expect(resumed.seqs.withLock { $0 } == [2, 3, 4, 5])
        // Flushed after the replay, and after each event once every receiver has it.
        #expect(resumed.flushes.withLock { $0 } == [[2, 3], [2, 3, 4], [2, 3, 4, 5]])
        #expect(slow.seqs.withLock { $0 } == [4])
        #expect(slow.ends.withLock { $0 } == [.tooSlow(bufferLimit: 8)])
        #expect(leaving.seqs.withLock { $0 } == [4])
        #expect(leaving.ends.withLock { $0 }.isEmpty)
        let counters = await state.snapshot().counters
        #expect(counters.subscribers == 1 && counters.subscribersDropped == 1)

        await state.shutdown()
        #expect(resumed.ends.withLock { $0 } == [.shuttingDown])
        let late = Log()
        _ = await state.subscribe(receiver: late.receiver)
        #expect(late.ends.withLock { $0 } == [.shuttingDown])
        await state.unsubscribe(r.id)
    }

    @Test func cancelledSubscriberIsForgotten() async throws {
        let state = SystemState(now: { t0 })
        let task = Task {
            let sub = await state.subscribe()
            for try await _ in sub.events {}
        }
        try await eventually("the subscriber is registered") { await state.snapshot().counters.subscribers == 1 }
        task.cancel()
        _ = await task.result
        // onTermination removes it asynchronously; the next emit also prunes terminated ones.
        try await eventually("the cancelled subscriber is forgotten") {
            await state.recordTap(tap("EE"))
            return await state.snapshot().counters.subscribers == 0
        }
    }

    @Test func shutdownEndsSubscriptions() async throws {
        let state = SystemState(now: { t0 })
        let sub = await state.subscribe()
        await state.shutdown()
        await #expect(throws: SubscriptionError.shuttingDown) {
            for try await _ in sub.events {}
        }
        let late = await state.subscribe()
        await #expect(throws: SubscriptionError.shuttingDown) {
            for try await _ in late.events {}
        }
    }

    @Test func armExpiresInSnapshots() async {
        let clock = TestClock(t0)
        let state = SystemState(now: { clock.now })
        await state.setArm(LendingArm(userId: "U-1", userName: "Aiko", armedAt: t0, expiresAt: t0.addingTimeInterval(30)))
        clock.now = t0.addingTimeInterval(10)
        let s1 = await state.snapshot()
        #expect(s1.lending.armed?.userId == "U-1")
        #expect(s1.lending.remainingSeconds == 20)
        clock.now = t0.addingTimeInterval(31)
        #expect(await state.snapshot().lending.armed == nil)
        #expect(await state.currentArm() == nil)
    }

    @Test func lendingCountersFollowOutcomes() async {
        let state = SystemState(now: { t0 })
        for kind in [LendingOutcome.Kind.lent, .lent, .returned, .refused, .badgeRequired, .armed] {
            await state.recordLending(LendingOutcome(kind: kind, message: "m", at: t0))
        }
        let c = await state.snapshot().counters
        #expect(c.lent == 2)
        #expect(c.returned == 1)
        #expect(c.refused == 2)
        #expect(c.events == 6)
    }

    @Test func curtainRequestIsRecordedAndCounted() async {
        let state = SystemState(now: { t0 })
        await state.recordCurtainRequest(CurtainRequest(kind: .moveTo, position: 40, at: t0))
        let s = await state.snapshot()
        #expect(s.curtain.lastRequest?.position == 40)
        #expect(s.counters.curtainRequests == 1)
    }

    /// A command's request is in the state at once, and its event comes when the command announces it, or
    /// before the next event if that comes first: never after what the curtain does next.
    @Test func aCurtainRequestIsAnnouncedBeforeAnythingAfterIt() async throws {
        let state = SystemState(now: { t0 })
        let sub = await state.subscribe()
        let asked = CurtainRequest(kind: .moveTo, position: 40, at: t0, by: "unix:aiko")
        await state.recordCurtainRequest(asked)
        #expect(state.latestSnapshot().snapshot.curtain.lastRequest == asked)
        #expect(await state.snapshot().counters.events == 0, "no event before the command announces it")
        // The curtain starts moving before the command announced its request: that event shows it.
        await state.updateCurtain { $0.motion = .opening }
        await state.announceCurtainRequests()  // already announced: nothing more
        await state.recordCurtainRequest(CurtainRequest(kind: .stop, at: t0))
        await state.announceCurtainRequests()
        await state.updateCurtain("curtain") { $0.motion = .idle }
        var seen: [(CurtainRequestKind?, CurtainMotion)] = []
        for try await e in sub.events {
            guard case .curtain(let c) = e.payload else { continue }
            seen.append((c.lastRequest?.kind, c.motion))
            if seen.count == 3 { break }
        }
        // The motion's event carries the move (no event of its own); the stop's is announced before the next one.
        #expect(seen.map(\.0) == [.moveTo, .stop, .stop])
        #expect(seen.map(\.1) == [.opening, .opening, .idle])
        #expect(await state.snapshot().counters.events == 3)
    }

    @Test func readersKeepDeclaredOrder() async {
        let state = SystemState(now: { t0 })
        await state.declareReaders(["b", "a"])
        await state.updateReader(ReaderStatus(name: "a", state: .connected, since: t0))
        let names = await state.snapshot().readers.map(\.name)
        #expect(names == ["b", "a"])
    }
}

@Suite struct ValueTests {
    @Test func curtainTimeParsesAndRejects() throws {
        #expect(try CurtainTime(parsing: "07:30").description == "07:30")
        #expect(try CurtainTime(parsing: "7:05").description == "07:05")
        for bad in ["24:00", "12:60", "12:5", "ab:cd", "1230", "", "12:30:00", "-1:30"] {
            #expect((try? CurtainTime(parsing: bad)) == nil, "\(bad) should be rejected")
            #expect((try? JSONDecoder().decode(CurtainTime.self, from: Data("\"\(bad)\"".utf8))) == nil)
        }
    }

    @Test func motionIsAWordInJSON() throws {
        let data = try JSONEncoder().encode([CurtainMotion.idle, .opening, .closing])
        #expect(String(decoding: data, as: UTF8.self) == #"["idle","opening","closing"]"#)
        #expect(try JSONDecoder().decode([CurtainMotion].self, from: data) == [.idle, .opening, .closing])
        #expect((try? JSONDecoder().decode(CurtainMotion.self, from: Data(#""1""#.utf8))) == nil)
    }

    @Test func manualOperationActiveOnlyWhileMoving() {
        var c = CurtainState(connection: .connected, motion: .opening, manual: true)
        #expect(c.manualOperationActive)
        c.motion = .idle
        #expect(!c.manualOperationActive)
        c.motion = .closing
        c.manual = false
        #expect(!c.manualOperationActive)
    }

    @Test func eventRoundTripsThroughJSON() throws {
        let e = Event(seq: 7, at: t0, payload: .curtain(CurtainState(
            connection: .connected, motion: .opening, position: 40, target: 100,
            openSchedule: CurtainSchedule.Entry(time: try CurtainTime(hour: 7, minute: 30), enabled: true))))
        let data = try JSONEncoder().encode(e)
        let json = try #require(String(data: data, encoding: .utf8))
        #expect(json.contains("\"kind\":\"curtain\""))
        #expect(json.contains("\"07:30\""))
        #expect(try JSONDecoder().decode(Event.self, from: data) == e)
    }

    @Test func statusLineSumsUp() {
        var s = StateSnapshot(seq: 0, startedAt: t0, timeZone: "UTC", readers: [
            ReaderStatus(name: "front", state: .disconnected, lastError: "Input / Output Error", since: t0)],
            lastTap: nil, tagWrite: nil,
            curtain: CurtainState(connection: .connected, motion: .idle, position: 40),
            lending: .init(), counters: .init())
        #expect(s.statusLine == "reader front: disconnected (Input / Output Error); curtain: connected, idle at 40% open")
        s.readers = []
        s.curtain = CurtainState(connection: .disabled)
        s.counters.subscribers = 2
        #expect(s.statusLine == "no reader configured; curtain: not configured; 2 watching")
    }
}

/// A settable wall clock for tests.
final class TestClock: Sendable {
    private let value: Mutex<Date>
    init(_ start: Date) { value = Mutex(start) }
    var now: Date {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
