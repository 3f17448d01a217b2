import Foundation
import Lending
import Testing
import Webhooks

@Suite("Webhook requests")
struct WebhookRequestTests {
    let eventId = UUID(uuidString: "0F8E5B7A-1C2D-4E3F-8A9B-0C1D2E3F4A5B")!

    func entry(payload: [UInt8]) -> OutboxEntry {
        OutboxEntry(seq: 1, eventId: eventId, target: "hook", kind: .lend, deviceId: "D-1", payload: payload,
                    createdAt: Date(timeIntervalSince1970: 0), nextAttemptAt: Date(timeIntervalSince1970: 0))
    }

    func header(_ request: WebhookRequest, _ name: String) -> String? {
        request.headers.first { $0.0 == name }?.1
    }

    /// The signature is HMAC-SHA256 over "TIMESTAMP.BODY" (expected value from Python's hmac module).
    @Test func signsTimestampAndBodyAndCarriesTheEventID() {
        let target = WebhookTarget(name: "hook", url: "http://127.0.0.1:1/", secret: Array("topsecret".utf8),
                                   bearerToken: "tok")
        let request = WebhookRequest(entry: entry(payload: Array(#"{"id":"x"}"#.utf8)), target: target, timestamp: 1_700_000_000)
        #expect(request.body == Array(#"{"id":"x"}"#.utf8))
        #expect(header(request, "X-RoomBridge-Signature") == "sha256=f222a6bd6510f7a55e2f9c68bb0d0cd64ab31438cf9e89d64a903ae820701be6")
        #expect(header(request, "X-RoomBridge-Timestamp") == "1700000000")
        #expect(header(request, "Idempotency-Key") == "0f8e5b7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b")
        #expect(header(request, "Authorization") == "Bearer tok")
    }

    @Test func unsignedWithoutSecretAndSlackGetsText() {
        let rental = Rental(id: 1, deviceId: "D-1", model: "Pixel 8", osVersion: "15", serialNumber: "S", userId: "U-1",
                            userName: "Alice", rentedAt: Date(timeIntervalSince1970: 0))
        let payload = OutboxEvent.payload(kind: .lend, eventId: eventId, rental: rental, at: rental.rentedAt)
        let request = WebhookRequest(entry: entry(payload: payload),
                                     target: WebhookTarget(name: "chat", url: "http://127.0.0.1:1/", format: .slack),
                                     timestamp: 1_700_000_000)
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"text":"D-1 (Pixel 8) lent to Alice"}"#)
        #expect(header(request, "X-RoomBridge-Signature") == nil)
        #expect(header(request, "Authorization") == nil)
    }
}
