import Foundation
import NDEF
import RoomBridgeCore
import Varlink

/// Our JSON (Varlink's strict parser, serializer and Codable bridge) next to Foundation's
/// `JSONSerialization` and `JSONDecoder`/`JSONEncoder`, in-process, on the messages the daemon
/// really exchanges: a GetState reply, a Watch event, a Lend call and a device record payload.
enum JSONBench {
    /// The messages, built from the real types the daemon encodes.
    struct Messages {
        let snapshot: StateSnapshot
        let event: Event
        /// A curtain's event as a MoveTo records it (the request, then the motion): the event a command waits for.
        let curtainEvent: Event
        /// Framed messages without the NUL: (name, bytes).
        let texts: [(String, [UInt8])]
    }

    static func messages() async throws -> Messages {
        let clock = Date(timeIntervalSince1970: 1_795_000_000.125)
        let state = SystemState(curtain: CurtainState(connection: .connected, address: "C0:FF:EE:00:00:01",
                                                      name: "RoomBridge Curtain", position: 40),
                                now: { clock })
        await state.declareReaders(["front"])
        await state.updateReader(ReaderStatus(name: "front", connstring: "pn532_uart:/dev/ttyUSB0", state: .connected, since: clock))
        let device = DeviceTagRecord(deviceId: "D-0001", model: "iPhone 15", serial: "F2LXK0Q1N7")
        let payload = try device.payload()
        let uid = TagUID("04A1B2C3D4E5F6")!  // a literal: an invariant of this code
        let tap = Tap(reader: "front", uid: uid, tagType: "NTAG216", atqa: "0044", sak: "00",
                      records: [TagRecord(tnf: "media", type: DeviceTagRecord.mimeType,
                                          payloadHex: payload.map { String(format: "%02x", $0) }.joined())],
                      device: DeviceTagRecord(deviceId: "D-0001", model: "iPhone 15", serial: "F2LXK0Q1N7"),
                      readMillis: 34.2, at: clock)
        await state.recordTap(tap)
        await state.recordLending(LendingOutcome(kind: .lent, deviceId: "D-0001", userId: "U-0017", userName: "Ada Lovelace",
                                                 uid: uid, reader: "front",
                                                 message: "D-0001 lent to Ada Lovelace", at: clock))
        let snapshot = await state.snapshot()
        let event = Event(seq: snapshot.seq + 1, at: clock, payload: .tagArrived(tap))
        let encoder = JSONValueEncoder()
        let reply = VarlinkReply(parameters: ["state": try encoder.encode(snapshot)]).json.serializedBytes()
        let watch = VarlinkReply(parameters: ["event": try encoder.encode(event)], continues: true).json.serializedBytes()
        let lend = VarlinkCall(method: "io.roombridge.Lending.Lend", parameters: [
            "deviceId": "D-0001", "userId": "U-0017", "dueAt": "2026-12-01T00:00:00Z"]).json.serializedBytes()
        var curtain = CurtainState(id: "window", connection: .connected, address: "C0:FF:EE:00:00:01", name: "RoomBridge Curtain",
                                   lastRequest: CurtainRequest(kind: .moveTo, position: 70, at: clock, by: "unix:aiko"),
                                   motion: .opening, position: 40, target: 70)
        curtain.profile = "roombridge"
        curtain.scheduleSource = "device"
        curtain.battery = 87
        curtain.finishesAt = clock.addingTimeInterval(0.6)
        let curtainEvent = Event(seq: snapshot.seq + 2, at: clock, payload: .curtain(curtain))
        return Messages(snapshot: snapshot, event: event, curtainEvent: curtainEvent, texts: [
            ("GetState reply", reply), ("Watch event", watch), ("Lend call", lend), ("device record payload", payload),
        ])
    }

    /// Microseconds per operation, one sample per batch (after a warm-up batch).
    static func time(batches: Int = 15, perBatch: Int, _ body: () throws -> Void) rethrows -> Stats {
        for _ in 0..<perBatch { try body() }
        var samples: [Double] = []
        for _ in 0..<batches {
            let t = monotonicSeconds()
            for _ in 0..<perBatch { try body() }
            samples.append((monotonicSeconds() - t) / Double(perBatch) * 1e6)
        }
        return Stats(samples)
    }

    static func foundationEncoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(date.formatted(style))
        }
        return e
    }

    static func foundationDecoder() -> JSONDecoder {
        let d = JSONDecoder()
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        d.dateDecodingStrategy = .custom { decoder in
            try style.parse(try decoder.singleValueContainer().decode(String.self))
        }
        return d
    }

    static func rows(_ m: Messages, perBatch: Int) throws -> [Row] {
        var rows: [Row] = []
        let fEncoder = foundationEncoder(), fDecoder = foundationDecoder()
        for (name, bytes) in m.texts {
            let data = Data(bytes)
            let tree = try JSONParser.parse(bytes)
            let object = try JSONSerialization.jsonObject(with: data)
            rows.append(Row("parse \(name), \(bytes.count) B (µs)",
                            try time(perBatch: perBatch) { _ = try JSONParser.parse(bytes) },
                            peer: ("JSONSerialization.jsonObject", try time(perBatch: perBatch) { _ = try JSONSerialization.jsonObject(with: data) })))
            rows.append(Row("parse \(name) to JSONValue (µs)",
                            try time(perBatch: perBatch) { _ = try JSONParser.parse(bytes) },
                            peer: ("JSONDecoder → JSONValue", try time(perBatch: perBatch) { _ = try fDecoder.decode(JSONValue.self, from: data) })))
            rows.append(Row("serialize \(name) (µs)",
                            time(perBatch: perBatch) { _ = tree.serializedBytes() },
                            peer: ("JSONSerialization.data, sorted keys", try time(perBatch: perBatch) {
                                _ = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                            })))
        }
        let encoder = JSONValueEncoder(), decoder = JSONValueDecoder()
        let stateBytes = try encoder.encode(m.snapshot).serializedBytes()
        let eventBytes = try encoder.encode(m.event).serializedBytes()
        let stateData = Data(stateBytes), eventData = Data(eventBytes)
        rows.append(Row("encode StateSnapshot (Codable → bytes) (µs)",
                        try time(perBatch: perBatch) { _ = try encoder.encode(m.snapshot).serializedBytes() },
                        peer: ("JSONEncoder", try time(perBatch: perBatch) { _ = try fEncoder.encode(m.snapshot) })))
        rows.append(Row("decode StateSnapshot (bytes → Codable) (µs)",
                        try time(perBatch: perBatch) { _ = try decoder.decode(StateSnapshot.self, from: JSONParser.parse(stateBytes)) },
                        peer: ("JSONDecoder", try time(perBatch: perBatch) { _ = try fDecoder.decode(StateSnapshot.self, from: stateData) })))
        rows.append(Row("encode Event (Codable → bytes) (µs)",
                        try time(perBatch: perBatch) { _ = try encoder.encode(m.event).serializedBytes() },
                        peer: ("JSONEncoder", try time(perBatch: perBatch) { _ = try fEncoder.encode(m.event) })))
        rows.append(Row("encode Event, a curtain's (Codable → bytes) (µs)",
                        try time(perBatch: perBatch) { _ = try encoder.encode(m.curtainEvent).serializedBytes() },
                        peer: ("JSONEncoder", try time(perBatch: perBatch) { _ = try fEncoder.encode(m.curtainEvent) })))
        rows.append(Row("decode Event (bytes → Codable) (µs)",
                        try time(perBatch: perBatch) { _ = try decoder.decode(Event.self, from: JSONParser.parse(eventBytes)) },
                        peer: ("JSONDecoder", try time(perBatch: perBatch) { _ = try fDecoder.decode(Event.self, from: eventData) })))
        return rows
    }
}

extension Bench {
    /// Our JSON against Foundation's on the real messages (in-process, no sockets).
    func jsonFigures(_ report: inout Report) async throws {
        let messages = try await JSONBench.messages()
        report.add(section: "JSON: ours (Varlink) against Foundation's, on real messages (in-process)",
                   rows: try JSONBench.rows(messages, perBatch: jsonIterations))
    }
}
