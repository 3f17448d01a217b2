import Foundation
import PN532Simulator
import Testing
import TestSupport

/// The simulator against Debian's libnfc tools (independent client).
extension NFCHardwareTests {
    @Suite("PN532 simulator", .serialized)
    struct SimulatorTests {
        @Test("frame parser: wake-up preamble, ACK, normal and extended frames")
        func frameParser() {
            var p = PN532FrameParser()
            let getFW: [UInt8] = [0x00, 0x00, 0xFF, 0x02, 0xFE, 0xD4, 0x02, 0x2A, 0x00]
            var frames = p.feed([0x55, 0x55, 0, 0, 0, 0] + getFW)
            #expect(frames == [.command([0x02])])
            frames = p.feed(PN532Frames.ack)
            #expect(frames == [.ack])
            // Extended frame built by hand: 300 data bytes.
            let data: [UInt8] = [0xD4, 0x40, 0x01] + [UInt8](repeating: 0xAB, count: 297)
            let len = data.count
            var ext: [UInt8] = [0x00, 0x00, 0xFF, 0xFF, 0xFF, UInt8(len >> 8), UInt8(len & 0xFF)]
            ext.append(UInt8((256 - ((len >> 8) + (len & 0xFF)) % 256) % 256))
            ext += data
            ext.append(UInt8((256 - data.reduce(0) { ($0 + Int($1)) % 256 }) % 256))
            ext.append(0)
            frames = p.feed(ext.prefix(100))
            #expect(frames.isEmpty)
            frames = p.feed(ext.dropFirst(100))
            #expect(frames == [.command(Array(data.dropFirst()))])
            // Corrupted checksum is dropped.
            var bad = getFW; bad[7] ^= 1
            #expect(p.feed(bad).isEmpty)
            // Responses round-trip through the same checksum rules.
            let r = PN532Frames.response([0x03, 0x32, 0x01, 0x06, 0x07])
            #expect(r == [0x00, 0x00, 0xFF, 0x06, 0xFA, 0xD5, 0x03, 0x32, 0x01, 0x06, 0x07, 0xE8, 0x00])
        }

        @Test("Type 2 tag model: READ wrap-around, FAST_READ bounds, lock bits, OTP")
        func type2Model() throws {
            guard case .type2(var t) = try TagSpec(type: "ultralight").makeCard() else { Issue.record("not type 2"); return }
            guard case .data(let d) = t.handle([0x30, 0x0F]) else { Issue.record("no data"); return }
            #expect(Array(d[4 ..< 8]) == Array(t.memory[0 ..< 4]))          // page 15 then 0, 1, 2
            #expect(t.handle([0x30, 0x10]) == .nak(0))
            #expect(t.handle([0x60]) == .silent)                            // Ultralight: no GET_VERSION
            #expect(t.handle([0x3A, 0, 1]) == .silent)                      // nor FAST_READ
            #expect(t.handle([0xA2, 0x05, 1, 2, 3, 4]) == .ack)
            #expect(t.handle([0xA2, 0x02, 0, 0, 0x20, 0x00]) == .ack)       // lock page 5
            #expect(t.handle([0xA2, 0x05, 9, 9, 9, 9]) == .nak(0))
            #expect(Array(t.memory[20 ..< 24]) == [1, 2, 3, 4])
            #expect(t.handle([0xA2, 0x03, 0x00, 0x00, 0x00, 0x0F]) == .ack)  // OTP: bits OR-ed
            #expect(Array(t.memory[12 ..< 16]) == [0xE1, 0x10, 0x06, 0x0F])
            #expect(t.handle([0xA2, 0x00, 0, 0, 0, 0]) == .nak(0))

            guard case .type2(var n) = try TagSpec(type: "ntag213").makeCard() else {
                Issue.record("the ntag213 spec made no Type 2 card"); return
            }
            #expect(n.handle([0x60]) == .data([0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03]))
            guard case .data(let f) = n.handle([0x3A, 4, 0x2C]) else { Issue.record("fast read"); return }
            #expect(f.count == 41 * 4)
            #expect(Array(f.suffix(8)) == [UInt8](repeating: 0, count: 8))  // PWD/PACK read as zero
            #expect(n.handle([0x3A, 4, 0x2D]) == .nak(0))
            #expect(n.handle([0xA2, 0x28, 0x01, 0x00, 0x00, 0x00]) == .ack)  // dynamic lock pages 16-17
            #expect(n.handle([0xA2, 0x10, 1, 1, 1, 1]) == .nak(0))
            #expect(n.handle([0xA2, 0x12, 1, 1, 1, 1]) == .ack)
        }

        @Test("control protocol over the Unix socket")
        func controlSocket() async throws {
            let h = try SimHarness(control: true)
            let ctl = h.dir + "/ctl"
            #expect(try ControlClient.send("list", socketPath: ctl) == "ok none")
            #expect(try ControlClient.send("place ntag215", socketPath: ctl).hasPrefix("ok ntag215 uid="))
            let dump = try ControlClient.send("dump", socketPath: ctl)
            #expect(dump.count == 3 + 135 * 8)
            #expect(try ControlClient.send("place nonsense", socketPath: ctl).hasPrefix("error"))
            #expect(try ControlClient.send("tap 50 isoa:01020304", socketPath: ctl).hasPrefix("ok iso14443a"))
            try await eventually("the 50 ms tap ends by itself") { try ControlClient.send("list", socketPath: ctl) == "ok none" }
            #expect(try ControlClient.send("unplug", socketPath: ctl) == "ok")
            #expect(!FileManager.default.fileExists(atPath: h.device))
            #expect(try ControlClient.send("replug", socketPath: ctl).hasPrefix("ok /dev/pts/"))
            #expect(FileManager.default.fileExists(atPath: h.device))
        }

        @Test("nfc-list shows the simulated NTAG213 with its UID")
        func nfcListNTAG() throws {
            let h = try SimHarness()
            h.sim.place(try TagSpec(type: "ntag213", uid: "04a1b2c3d4e5f6").makeCard())
            let (status, out) = try h.runTool(["nfc-list", "-t", "1"])
            #expect(status == 0)
            #expect(out.contains("1 ISO14443A passive target(s) found"))
            #expect(out.contains("UID (NFCID1): 04  a1  b2  c3  d4  e5  f6"))
            #expect(out.contains("ATQA (SENS_RES): 00  44"))
            #expect(out.contains("SAK (SEL_RES): 00"))
        }

        @Test("nfc-list (all modulations) shows a FeliCa card and a 10-byte-UID badge")
        func nfcListOthers() throws {
            let h = try SimHarness()
            h.sim.place(try TagSpec(type: "felica", idm: "0102030405060708").makeCard())
            var (status, out) = try h.runTool(["nfc-list"])
            #expect(status == 0)
            #expect(out.contains("1 Felica (212 kbps) passive target(s) found"))
            #expect(out.contains("ID (NFCID2): 01  02  03  04  05  06  07  08"))
            h.sim.place(try TagSpec(type: "isoA", uid: "0102030405060708090a").makeCard())
            (status, out) = try h.runTool(["nfc-list"])
            #expect(status == 0)
            #expect(out.contains("UID (NFCID1): 01  02  03  04  05  06  07  08  09  0a"))
            #expect(out.contains("SAK (SEL_RES): 08"))
        }

        @Test("nfc-mfultralight r reads back the image byte for byte", arguments: ["ntag213", "ntag215", "ntag216", "ultralight"])
        func nfcMfultralightRead(model: String) throws {
            let h = try SimHarness()
            // A short URI record (https://abc.de) fits even the 48-byte Ultralight.
            let msg = model == "ultralight" ? [0xD1, 0x01, 0x07, 0x55, 0x04, 0x61, 0x62, 0x63, 0x2E, 0x64, 0x65] : try deviceMessage()
            h.sim.place(try TagSpec(type: model, uid: "04112233445566", ndef: hex(msg)).makeCard())
            let (status, out) = try h.runTool(["nfc-mfultralight", "r", "out.mfd"])
            #expect(status == 0, "\(out)")
            let read = try [UInt8](Data(contentsOf: URL(fileURLWithPath: h.dir + "/out.mfd")))
            var expected = try #require(h.sim.dumpMemory())
            if let cfg = ["ntag213": 0x29, "ntag215": 0x83, "ntag216": 0xE3][model] {
                // nfc-mfultralight stores the (unknown, zero) password and PACK there; the tag reads them as 0.
                for i in (cfg + 2) * 4 ..< (cfg + 4) * 4 { expected[i] = 0 }
            }
            #expect(read == expected)
            // The dump loads back as a tag image.
            let reloaded = try TagSpec.parse("dump:\(model):\(h.dir)/out.mfd").makeCard()
            guard case .type2(let t) = reloaded else { Issue.record("dump not loaded"); return }
            #expect(t.memory == expected)
        }

        @Test("nfc-mfultralight w writes pages that READ returns (compatibility write)")
        func nfcMfultralightWrite() throws {
            let h = try SimHarness()
            h.sim.place(try TagSpec(type: "ultralight", uid: "04112233445566", format: "blank").makeCard())
            var image = try #require(h.sim.dumpMemory())
            for i in 16 ..< 64 { image[i] = UInt8(i) }
            try Data(image).write(to: URL(fileURLWithPath: h.dir + "/in.mfd"))
            let (status, out) = try h.runTool(["nfc-mfultralight", "w", "in.mfd"], stdin: "n\nn\nn\n")
            #expect(status == 0, "\(out)")
            #expect(out.contains("Done, 12 of 16 pages written"))
            #expect(h.sim.dumpMemory() == image)
        }
    }
}

extension NFCHardwareTests {
    @Suite("pn532-sim executable")
    struct ExecutableTests {
        @Test("pn532-sim run prints its device path; ctl places a tag that nfc-list sees; SIGTERM cleans up")
        func runAndControl() throws {
            let h = try SimHarness()             // only for the temp dir and runTool
            h.sim.stop()
            let exe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("pn532-sim").path
            let found = FileManager.default.isExecutableFile(atPath: exe)
            try #require(found, "build the pn532-sim product first (swift build), looked at \(exe)")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: exe)
            p.arguments = ["run", "--link", h.device, "--control", h.dir + "/ctl", "--tag", "ntag213"]
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            defer { if p.isRunning { p.terminate() } }
            var line = Data()
            while !line.contains(0x0A) {
                let d = out.fileHandleForReading.availableData
                if d.isEmpty { break }
                line += d
            }
            let ready = String(decoding: line, as: UTF8.self)
            #expect(ready.hasPrefix("pn532-sim ready: device=\(h.device) pty=/dev/pts/"))
            let ctl = Process()
            ctl.executableURL = p.executableURL
            ctl.arguments = ["ctl", "--control", h.dir + "/ctl", "place", "isoa:0a0b0c0d"]
            ctl.standardOutput = FileHandle.nullDevice
            try ctl.run()
            ctl.waitUntilExit()
            #expect(ctl.terminationStatus == 0)
            let (status, list) = try h.runTool(["nfc-list", "-t", "1"])
            #expect(status == 0)
            #expect(list.contains("UID (NFCID1): 0a  0b  0c  0d"))
            p.terminate()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
            #expect(!FileManager.default.fileExists(atPath: h.device))
        }
    }
}
