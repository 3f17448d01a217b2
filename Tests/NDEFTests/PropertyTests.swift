import SeededRandom
import Testing
@testable import NDEF

@Suite("Property-style round trips (seeded)")
struct PropertyTests {
    static func randomBytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static func randomRecord(_ rng: inout SplitMix64) -> NDEFRecord {
        let tnf = [TypeNameFormat.empty, .wellKnown, .media, .absoluteURI, .external, .unknown].randomElement(using: &rng)!
        if tnf == .empty { return .empty }
        let size = [0, 1, 2, 254, 255, 256, 257, Int.random(in: 0...2000, using: &rng)].randomElement(using: &rng)!
        let type = tnf == .unknown ? [] : randomBytes(Int.random(in: 1...255, using: &rng), &rng)
        let id = Bool.random(using: &rng) ? [] : randomBytes(Int.random(in: 1...255, using: &rng), &rng)
        return NDEFRecord(tnf: tnf, type: type, id: id, payload: randomBytes(size, &rng))
    }

    @Test("random messages of every TNF round-trip, plain and chunked", arguments: [1 as UInt64, 2, 3, 4, 5, 6, 7, 8])
    func roundTrip(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for iteration in 0..<40 {
            let message = NDEFMessage(records: (0..<Int.random(in: 1...5, using: &rng)).map { _ in Self.randomRecord(&rng) })
            let plain = try message.encoded()
            #expect(try NDEFMessage.decode(plain) == message, "seed \(seed) iteration \(iteration)")
            let chunkSize = Int.random(in: 1...300, using: &rng)
            let chunked = try message.encoded(chunkSize: chunkSize)
            #expect(try NDEFMessage.decode(chunked) == message, "seed \(seed) iteration \(iteration) chunk \(chunkSize)")
            // Type 2 image of the same message, located and decoded again.
            let capacity = 2040
            if let image = try? Type2TagImage.dataArea(for: message, capacity: capacity) {
                #expect(try Type2TLVScanner.decodeMessage(in: image, dataAreaSize: capacity) == message)
            }
        }
    }

    @Test("random mutations of valid messages never crash", arguments: [11 as UInt64, 12, 13, 14])
    func mutations(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var decoded = 0
        for _ in 0..<500 {
            let message = NDEFMessage(records: (0..<Int.random(in: 1...3, using: &rng)).map { _ in Self.randomRecord(&rng) })
            var encoded = try message.encoded(chunkSize: Bool.random(using: &rng) ? nil : 64)
            for _ in 0..<Int.random(in: 1...4, using: &rng) where !encoded.isEmpty {
                encoded[Int.random(in: 0..<encoded.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            if let result = try? NDEFMessage.decode(encoded) {
                decoded += 1
                // Anything that decodes must re-encode into something that decodes to the same.
                #expect(try NDEFMessage.decode(result.encoded()) == result)
                for record in result.records { _ = try? record.content() }
            }
        }
        #expect(decoded < 500)
    }
}
