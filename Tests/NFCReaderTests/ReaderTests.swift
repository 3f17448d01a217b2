import Foundation
import NDEF
@testable import NFCReader
import PN532Simulator
import Testing
import TestSupport

/// The reader loop (real libnfc, pn532_uart driver) against the simulator on a pty.
extension NFCHardwareTests {
    @Suite("NFC reader loop", .serialized)
    struct ReaderTests {
        /// Starts a loop on the harness and waits for `connected`.
        func startLoop(_ h: SimHarness, modulations: [PollModulation] = [.iso14443a, .felica212]) async throws -> (NFCReaderLoop, EventLog) {
            let loop = NFCReaderLoop(configuration: ReaderConfiguration(connstring: h.connstring, modulations: modulations),
                                     logger: quietLogger)
            let log = EventLog(loop.events)
            loop.start()
            let c = try await log.wait { $0.isConnected }
            try #require(c.count == 1, "reader did not connect: \(log.all)")
            return (loop, log)
        }

        @Test("tap: one arrival with UID and NDEF bytes; hold: no repeat; lift: removal; tap again: new arrival")
        func tapHoldLift() async throws {
            let h = try SimHarness()
            let (loop, log) = try await startLoop(h)
            let msg = try deviceMessage()
            let tag = try card(TagSpec(type: "ntag215", uid: "04a1b2c3d4e5f6", ndef: hex(msg)))
            h.sim.place(tag)
            let arrivals = try await log.wait { $0.isArrival }
            let a = try #require(arrivals.first?.arrival)
            #expect(a.uid == [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6])
            #expect(a.kind == .ntag215)
            #expect(a.technology == .iso14443a(atqa: [0x00, 0x44], sak: 0x00))
            #expect(a.capabilityContainer?.dataAreaSize == 496)
            guard case .message(let bytes, let decoded) = a.ndef else { Issue.record("no message: \(a.ndef)"); return }
            #expect(bytes == msg)
            let record = try #require(decoded?.records.first)
            #expect(record.typeString == DeviceTagRecord.mimeType)

            // Held on the reader: it checks the tag's presence again and again, and reports
            // neither a second arrival nor a removal.
            let seen = h.host.count
            try await eventually("the reader checked the held tag 10 times") { h.host.count >= seen + 10 }
            #expect(log.all.filter(\.isRemoval).isEmpty)

            h.sim.remove()
            let removals = try await log.wait { $0.isRemoval }
            #expect(removals.count == 1)
            if case .tagRemoved(_, let uid) = removals.first { #expect(uid == a.uid) }
            // Events are delivered in order: a repeat while held would be logged by now.
            #expect(log.all.filter(\.isArrival).count == 1)

            h.sim.place(tag)
            let again = try await log.wait(for: 2) { $0.isArrival }
            #expect(again.count == 2)
            await loop.stop()
        }

        @Test("reading uses FAST_READ only for the pages the TLV needs (NTAG), READ otherwise")
        func readStrategy() throws {
            final class Recorder: Type2Transport {
                var tag: Type2Tag
                var log: [[UInt8]] = []
                init(_ t: Type2Tag) { tag = t }
                func send(_ f: [UInt8]) throws(Type2IOError) -> [UInt8] {
                    log.append(f)
                    switch tag.handle(f) {
                    case .data(let d): return d
                    case .ack: return []
                    case .nak: throw .refused
                    case .silent: throw .silent
                    }
                }
                func read(page: Int) throws(Type2IOError) -> [UInt8] { try send([0x30, UInt8(page)]) }
                func fastRead(from: Int, to: Int) throws(Type2IOError) -> [UInt8] { try send([0x3A, UInt8(from), UInt8(to)]) }
                func write(page: Int, _ data: [UInt8]) throws(Type2IOError) { _ = try send([0xA2, UInt8(page)] + data) }
            }
            let msg = try deviceMessage()                       // ~100 bytes: TLV ends in page 4 + 26
            guard case .type2(let t) = try card(TagSpec(type: "ntag216", ndef: hex(msg))) else {
                Issue.record("the ntag216 spec made no Type 2 card"); return
            }
            let r = Recorder(t)
            let (_, content, _) = try Type2ContentReader.read(r, kind: .ntag216)
            #expect(content == .message(bytes: msg, decoded: try NDEFMessage(bytes: msg)))
            let lastPage = 4 + (msg.count + 2 - 1) / 4
            #expect(r.log == [[0x30, 0x03], [0x3A, 0x07, UInt8(lastPage)]])

            guard case .type2(let u) = try card(TagSpec(type: "ultralight", ndef: "d1010755046162632e6465")) else {
                Issue.record("the ultralight spec made no Type 2 card"); return
            }
            let ru = Recorder(u)
            _ = try Type2ContentReader.read(ru, kind: .ultralight)
            // 13-byte TLV: the first READ brings 12 data-area bytes, one more READ (4 pages) is needed.
            #expect(ru.log == [[0x30, 0x03], [0x30, 0x07]])
        }

        @Test("writer: a tag lifted mid-write is a typed, retryable error; a NAK is a refused write")
        func writerFailures() throws {
            final class Flaky: Type2Transport {
                var tag: Type2Tag
                var writesLeft: Int
                init(_ t: Type2Tag, writesLeft: Int) { tag = t; self.writesLeft = writesLeft }
                func send(_ f: [UInt8]) throws(Type2IOError) -> [UInt8] {
                    if f[0] == 0xA2 { if writesLeft == 0 { throw .silent }; writesLeft -= 1 }
                    switch tag.handle(f) {
                    case .data(let d): return d
                    case .ack: return []
                    case .nak: throw .refused
                    case .silent: throw .silent
                    }
                }
                func read(page: Int) throws(Type2IOError) -> [UInt8] { try send([0x30, UInt8(page)]) }
                func fastRead(from: Int, to: Int) throws(Type2IOError) -> [UInt8] { try send([0x3A, UInt8(from), UInt8(to)]) }
                func write(page: Int, _ data: [UInt8]) throws(Type2IOError) { _ = try send([0xA2, UInt8(page)] + data) }
            }
            let msg = try deviceMessage()
            guard case .type2(let t) = try card(TagSpec(type: "ntag213")) else {
                Issue.record("the ntag213 spec made no Type 2 card"); return
            }
            #expect(throws: TagWriteError.tagLifted(page: 7)) {
                _ = try Type2Writer.write(message: msg, kind: .ntag213, uid: t.uid, transport: Flaky(t, writesLeft: 3))
            }
            let ok = Flaky(t, writesLeft: 1000)
            let r = try Type2Writer.write(message: msg, kind: .ntag213, uid: t.uid, transport: ok)
            #expect(r.bytesWritten == (msg.count + 3 + 3) / 4 * 4)
            // Dynamic lock bit for pages 16-17 set behind the reader's back: the writer refuses up front.
            _ = try ok.send([0xA2, 0x28, 0x01, 0x00, 0x00, 0x00])
            #expect(throws: TagWriteError.readOnly) {
                _ = try Type2Writer.write(message: msg, kind: .ntag213, uid: t.uid, transport: ok)
            }
            // A tag without GET_VERSION but with a 144-byte CC is a generic Type 2 tag (NTAG203-like).
            let (_, _, kind) = try Type2ContentReader.read(Flaky(t, writesLeft: 0), kind: .ultralight)
            #expect(kind == .type2)
        }

        @Test("FeliCa card: IDm and PMm, removal")
        func felica() async throws {
            let h = try SimHarness()
            let (loop, log) = try await startLoop(h)
            h.sim.place(try card(TagSpec(type: "felica", idm: "012e4c1122334455", pmm: "03014b024f4993ff")))
            let a = try #require(try await log.wait { $0.isArrival }.first?.arrival)
            #expect(a.kind == .felica)
            #expect(a.uid == [0x01, 0x2E, 0x4C, 0x11, 0x22, 0x33, 0x44, 0x55])
            if case .felica(_, let pmm, _) = a.technology { #expect(pmm == [0x03, 0x01, 0x4B, 0x02, 0x4F, 0x49, 0x93, 0xFF]) } else { Issue.record("not FeliCa") }
            h.sim.remove()
            #expect(try await log.wait { $0.isRemoval }.count == 1)
            await loop.stop()
        }

        @Test("ISO14443-A badges with 4- and 10-byte UIDs", arguments: ["a1b2c3d4", "0102030405060708090a"])
        func isoABadge(uid: String) async throws {
            let h = try SimHarness()
            let (loop, log) = try await startLoop(h, modulations: [.iso14443a])
            h.sim.place(try card(TagSpec(type: "isoA", uid: uid)))
            let a = try #require(try await log.wait { $0.isArrival }.first?.arrival)
            #expect(hexString(a.uid) == uid)
            #expect(a.kind == .iso14443a)
            #expect(a.ndef == .notApplicable)
            let seen = h.host.count
            try await eventually("the reader checked the held badge 10 times") { h.host.count >= seen + 10 }
            h.sim.remove()
            #expect(try await log.wait { $0.isRemoval }.count == 1)
            #expect(log.all.filter(\.isArrival).count == 1, "no repeat while held")
            await loop.stop()
        }

        @Test("corrupt TLV (length past the end) gives an error event and the loop keeps running")
        func corruptTLV() async throws {
            let h = try SimHarness()
            let (loop, log) = try await startLoop(h)
            // NDEF TLV claiming 0x0200 bytes in a 144-byte data area.
            h.sim.place(try card(TagSpec(type: "ntag213", uid: "04000000000001", dataArea: "03ff0200d101")))
            let failed = try await log.wait { if case .tagReadFailed = $0 { true } else { false } }
            #expect(failed.count == 1)
            let a = try #require(log.all.first { $0.isArrival }?.arrival)
            guard case .unreadable = a.ndef else { Issue.record("expected unreadable, got \(a.ndef)"); return }
            h.sim.remove()
            #expect(try await log.wait { $0.isRemoval }.count == 1)
            let msg = try deviceMessage("D-0002")
            h.sim.place(try card(TagSpec(type: "ntag213", uid: "04000000000002", ndef: hex(msg))))
            let arrivals = try await log.wait(for: 2) { $0.isArrival }
            #expect(arrivals.count == 2)
            if case .message(let bytes, _) = arrivals.last?.arrival?.ndef { #expect(bytes == msg) } else { Issue.record("second tag unread") }
            await loop.stop()
        }

        @Test("write to a factory-blank NTAG213: formatted, written, verified, read back on the next tap")
        func writeBlank() async throws {
            let h = try SimHarness()
            let (loop, log) = try await startLoop(h)
            let uid: [UInt8] = [0x04, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60]
            h.sim.place(try card(TagSpec(type: "ntag213", uid: hexString(uid), format: "blank")))
            let a = try #require(try await log.wait { $0.isArrival }.first?.arrival)
            #expect(a.ndef == .notFormatted)
            let msg = try deviceMessage("D-0042")
            let result = try await loop.write(ndefMessage: msg, expectedUID: uid)
            #expect(result.formatted)
            #expect(result.kind == .ntag213)
            let mem = try #require(h.sim.dumpMemory())
            #expect(Array(mem[12 ..< 16]) == [0xE1, 0x10, 0x12, 0x00])
            #expect(Array(mem[16 ..< 18]) == [0x03, UInt8(msg.count)])
            #expect(Array(mem[18 ..< 18 + msg.count]) == msg)
            // Still one arrival (the write did not look like a new tap); lift and tap again.
            #expect(log.all.filter(\.isArrival).count == 1)
            let written = try #require(h.sim.card)
            h.sim.remove()
            try await log.wait { $0.isRemoval }
            h.sim.place(written)
            let again = try await log.wait(for: 2) { $0.isArrival }
            guard case .message(let bytes, _) = again.last?.arrival?.ndef else { Issue.record("not read back"); return }
            #expect(bytes == msg)
            await loop.stop()
        }

        @Test("write errors are typed: read-only, too small, wrong tag, no tag")
        func writeErrors() async throws {
            let h = try SimHarness()
            let (loop, log) = try await startLoop(h)
            let msg = try deviceMessage()
            await #expect(throws: TagWriteError.noTag) {
                _ = try await loop.write(ndefMessage: msg, timeout: .milliseconds(200))
            }
            h.sim.place(try card(TagSpec(type: "ntag213", uid: "04aaaaaaaaaaaa", readOnly: true)))
            try await log.wait { $0.isArrival }
            await #expect(throws: TagWriteError.readOnly) { _ = try await loop.write(ndefMessage: msg) }
            await #expect(throws: TagWriteError.wrongTag(found: [0x04, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA])) {
                _ = try await loop.write(ndefMessage: msg, expectedUID: [1, 2, 3, 4, 5, 6, 7])
            }
            h.sim.remove()
            try await log.wait { $0.isRemoval }
            h.sim.place(try card(TagSpec(type: "ultralight", uid: "04bbbbbbbbbbbb")))
            try await log.wait(for: 2) { $0.isArrival }
            await #expect(throws: TagWriteError.tooSmall(needed: msg.count + 2, capacity: 48)) {
                _ = try await loop.write(ndefMessage: msg)
            }
            // Lock bits set by lock() make the next write fail, and the simulator enforces them.
            h.sim.remove()
            try await log.wait(for: 2) { $0.isRemoval }
            h.sim.place(try card(TagSpec(type: "ntag213", uid: "04cccccccccccc")))
            try await log.wait(for: 3) { $0.isArrival }
            _ = try await loop.write(ndefMessage: msg)
            _ = try await loop.lock()
            let mem = try #require(h.sim.dumpMemory())
            #expect(mem[15] == 0x0F)
            #expect(mem[10] == 0xFF && mem[11] == 0xFF)
            await #expect(throws: TagWriteError.readOnly) { _ = try await loop.write(ndefMessage: msg) }
            #expect(log.all.filter(\.isArrival).count == 3)   // writes did not produce extra taps
            await loop.stop()
        }

        @Test("unplug / replug: disconnected then connected again; no fd or thread leak over 100 cycles")
        func unplugReplug() async throws {
            let h = try SimHarness()
            let (loop, log) = try await startLoop(h)
            // Warm up one cycle so lazily created runtime threads/fds exist before counting.
            var fdsBefore = 0, threadsBefore = 0
            for i in 0 ..< 101 {
                if i == 1 { fdsBefore = openFDCount(); threadsBefore = threadCount() }
                h.sim.unplug()
                let d = try await log.wait(for: i + 1) { $0.isDisconnected }
                try #require(d.count == i + 1, "no disconnect in cycle \(i)")
                try h.sim.replug()
                let c = try await log.wait(for: i + 2) { $0.isConnected }
                try #require(c.count == i + 2, "no reconnect in cycle \(i)")
            }
            let fdsAfter = openFDCount(), threadsAfter = threadCount()
            // Dispatch/concurrency workers and their descriptors come and go by one or two; a leak
            // would add one per cycle (100 here).
            #expect(fdsAfter - fdsBefore < 10, "fds \(fdsBefore) → \(fdsAfter)")
            #expect(threadsAfter - threadsBefore < 10, "threads \(threadsBefore) → \(threadsAfter)")
            // The loop still reads tags afterwards.
            h.sim.place(try card(TagSpec(type: "ntag213")))
            #expect(try await log.wait { $0.isArrival }.count == 1)
            await loop.stop()
        }

        @Test("stop while polling returns and finishes the event stream")
        func stopWhilePolling() async throws {
            let h = try SimHarness()
            let loop = NFCReaderLoop(configuration: ReaderConfiguration(connstring: h.connstring, pollCount: 0xFF), logger: quietLogger)
            let log = EventLog(loop.events)
            loop.start()
            try await log.wait { $0.isConnected }
            try await eventually("the reader is inside an endless InAutoPoll") { h.host.codes.contains(0x60) }
            await loop.stop()   // returns: the endless poll is aborted (how fast: roombridge-bench)
            // The device is released: another client can open it now.
            let (status, out) = try h.runTool(["nfc-list", "-t", "1"])
            #expect(status == 0 && out.contains("NFC device:"), "\(out)")
        }

        @Test("the chip's wait for a tag's answer is set to 12.8 ms (libnfc leaves 51.2 ms): a lifted tag's presence check fails sooner")
        func shortTagResponseTimeout() async throws {
            let h = try SimHarness()
            let (loop, _) = try await startLoop(h)
            // RFConfiguration (0x32) item 0x02: RFU, ATR_RES timeout 0x0B (libnfc's 102.4 ms),
            // fRetryTimeout 0x08 (100 µs × 2^7).
            try await eventually("the reader configured the RF timeouts") {
                h.host.commands.contains([0x32, 0x02, 0x00, 0x0B, 0x08])
            }
            await loop.stop()
        }

        @Test("realistic timing (UART byte times, RF time): a tap is read whole and its removal seen")
        func realisticTiming() async throws {
            let h = try SimHarness(realisticTiming: true)
            let (loop, log) = try await startLoop(h)
            let msg = try deviceMessage()
            h.sim.place(try card(TagSpec(type: "ntag215", ndef: hex(msg))))
            let a = try #require(try await log.wait { $0.isArrival }.first?.arrival)
            #expect(a.kind == .ntag215)
            guard case .message(let bytes, _) = a.ndef else { Issue.record("no message: \(a.ndef)"); return }
            #expect(bytes == msg)
            h.sim.remove()
            #expect(try await log.wait { $0.isRemoval }.count == 1)
            await loop.stop()
        }

        @Test("no connstring: libnfc's own device selection (LIBNFC_DEVICE) and discovery")
        func libnfcDefaultDevice() async throws {
            let h = try SimHarness()
            setenv("LIBNFC_DEVICE", h.connstring, 1)
            setenv("LIBNFC_AUTO_SCAN", "false", 1)
            defer { unsetenv("LIBNFC_DEVICE"); unsetenv("LIBNFC_AUTO_SCAN") }
            #expect(NFCReaderService.discoverDevices() == [h.connstring])
            let svc = NFCReaderService(readers: [], logger: quietLogger)
            let log = EventLog(svc.events)
            svc.start()
            #expect(try await log.wait { $0.isConnected }.first == .connected(reader: "default", name: "user defined device"))
            h.sim.place(try card(TagSpec(type: "ntag213")))
            #expect(try await log.wait { $0.isArrival }.first?.arrival?.reader == "default")
            await svc.stop()
        }

        @Test("service: reader ID, merged events, unknown reader for write")
        func service() async throws {
            let h = try SimHarness()
            let svc = NFCReaderService(readers: [ReaderConfiguration(connstring: h.connstring)], logger: quietLogger)
            let log = EventLog(svc.events)
            svc.start()
            let c = try await log.wait { $0.isConnected }
            #expect(c.first == .connected(reader: h.connstring, name: "pn532_uart:" + h.device))
            await #expect(throws: TagWriteError.self) {
                _ = try await svc.write(ndefMessage: [0xD0, 0, 0], reader: "nope")
            }
            await svc.stop()
        }
    }
}
