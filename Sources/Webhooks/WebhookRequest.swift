import Crypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Lending

/// Where and how the outbox delivers to one target (`[outbox.targets.NAME]`).
public struct WebhookTarget: Sendable, Hashable {
    /// `json`: the event document as it is; `slack`: `{"text": "…"}`, which Slack, Teams and Google
    /// Chat incoming webhooks accept.
    public enum Format: String, Sendable, Hashable { case json, slack }

    public var name: String
    public var url: String
    public var format: Format
    /// The HMAC-SHA256 key; nil: requests are not signed.
    public var secret: [UInt8]?
    /// Sent as `Authorization: Bearer …`; nil: no such header.
    public var bearerToken: String?
    /// How long one request may take.
    public var timeout: Duration

    public init(name: String, url: String, format: Format = .json, secret: [UInt8]? = nil, bearerToken: String? = nil,
                timeout: Duration = .seconds(10)) {
        self.name = name
        self.url = url
        self.format = format
        self.secret = secret
        self.bearerToken = bearerToken
        self.timeout = timeout
    }
}

/// The HTTP request of one outbox entry: body and headers, signed. Receivers check
/// `X-RoomBridge-Signature: sha256=HEX`, the HMAC-SHA256 of `TIMESTAMP + "." + BODY` under the
/// shared secret, with `TIMESTAMP` from `X-RoomBridge-Timestamp` (seconds since 1970, to refuse
/// old replays), and deduplicate by `Idempotency-Key` (the event's ID).
public struct WebhookRequest: Sendable, Hashable {
    public var body: [UInt8]
    public var headers: [(String, String)] { headerList.map { ($0.name, $0.value) } }
    private var headerList: [Header]

    private struct Header: Sendable, Hashable { var name: String, value: String }

    public init(entry: OutboxEntry, target: WebhookTarget, timestamp: Int64) {
        switch target.format {
        case .json: body = entry.payload
        case .slack: body = JSONValue.object(["text": .string(OutboxEvent.summary(entry.payload))]).serializedBytes()
        }
        var list = [
            Header(name: "Content-Type", value: "application/json"),
            Header(name: "User-Agent", value: "roombridged"),
            Header(name: "Idempotency-Key", value: entry.eventId.uuidString.lowercased()),
            Header(name: "X-RoomBridge-Event", value: entry.kind.rawValue),
            Header(name: "X-RoomBridge-Timestamp", value: String(timestamp)),
        ]
        if let secret = target.secret {
            list.append(Header(name: "X-RoomBridge-Signature",
                               value: "sha256=" + Self.signature(body: body, timestamp: timestamp, secret: secret)))
        }
        if let token = target.bearerToken { list.append(Header(name: "Authorization", value: "Bearer \(token)")) }
        headerList = list
    }

    /// Lower-case hex of HMAC-SHA256(secret, timestamp + "." + body).
    public static func signature(body: [UInt8], timestamp: Int64, secret: [UInt8]) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + body, using: SymmetricKey(data: secret))
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in code { hex += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: hex, as: UTF8.self)
    }
}
