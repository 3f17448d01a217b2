// The fuzz harness compiles NDEF and JSON as one module; the package builds them apart.
#if canImport(JSON)
import JSON
#endif

// Device tag format version 1 (docs/device-tag.md).

/// Why a device record on a tag could not be used.
public enum DeviceTagError: Error, Hashable, Sendable {
    /// The payload exceeds the 512-byte limit of the device tag format.
    case payloadTooLarge(size: Int, limit: Int)
    /// The payload is not valid UTF-8.
    case invalidUTF8
    /// The payload is not valid JSON (`offset` is the byte where parsing stopped).
    case invalidJSON(offset: Int, reason: String)
    /// The JSON value is not an object.
    case notAnObject
    /// The object has no `deviceId` member.
    case missingDeviceId
    /// A known member has the wrong type or an invalid value (`expected` says what is allowed).
    case invalidField(key: String, expected: String)
    /// The tag holds several device records naming different devices.
    case conflictingDeviceRecords(first: String, second: String)
    /// The device record cannot be written (e.g. empty device ID).
    case cannotEncode(reason: String)
    /// The record is in a format version this implementation does not read (`v` above
    /// ``DeviceTagRecord/currentVersion``).
    case unsupportedVersion(Int, supported: Int)
}

extension DeviceTagError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .payloadTooLarge(size, limit):
            return "Device record payload is \(size) bytes; the device tag format allows at most \(limit). Rewrite the tag with shorter model/serial values."
        case .invalidUTF8:
            return "Device record payload is not valid UTF-8 text; rewrite the tag."
        case let .invalidJSON(offset, reason):
            return "Device record payload is not valid JSON (\(reason) at byte \(offset)); rewrite the tag."
        case .notAnObject:
            return "Device record payload must be a JSON object like {\"v\":1,\"deviceId\":\"D-0001\"}; rewrite the tag."
        case .missingDeviceId:
            return "Device record has no \"deviceId\"; rewrite the tag with the device's ID."
        case let .invalidField(key, expected):
            return "Device record field \"\(key)\" is invalid: expected \(expected); rewrite the tag."
        case let .conflictingDeviceRecords(first, second):
            return "The tag holds device records for two different devices (\(first) and \(second)); rewrite it with a single device record."
        case let .cannotEncode(reason):
            return "Cannot write the device record: \(reason)."
        case let .unsupportedVersion(version, supported):
            return "Device record is format version \(version); this RoomBridge reads only version \(supported). Upgrade RoomBridge, or rewrite the tag with this version."
        }
    }
}

/// The immutable facts stored on a lendable device's tag.
public struct DeviceTagRecord: Hashable, Sendable {
    /// MIME type of the device record.
    public static let mimeType = "application/vnd.roombridge.device+json"
    /// MIME type tolerated for tags written by other tools (needs a string `deviceId`).
    public static let toleratedMimeType = "application/json"
    /// Maximum payload size in bytes.
    public static let maxPayloadSize = 512
    /// Nesting allowed in the payload (a device record is flat; this only bounds hostile input).
    static let maxJSONDepth = 32
    /// Format version written by this implementation.
    public static let currentVersion = 1

    /// Format version (`v`; 1 when absent).
    public var version: Int
    /// Device ID (required, non-empty).
    public var deviceId: String
    /// Model name, if present.
    public var model: String?
    /// Serial number, if present.
    public var serial: String?

    /// Creates a device record.
    public init(deviceId: String, model: String? = nil, serial: String? = nil, version: Int = DeviceTagRecord.currentVersion) {
        self.version = version
        self.deviceId = deviceId
        self.model = model
        self.serial = serial
    }

    /// Decodes the JSON payload of a device record. Unknown keys are ignored; `model` and
    /// `serial` may be absent or null.
    public init(payload: [UInt8]) throws(DeviceTagError) {
        guard payload.count <= Self.maxPayloadSize else {
            throw .payloadTooLarge(size: payload.count, limit: Self.maxPayloadSize)
        }
        guard String(validating: payload, as: UTF8.self) != nil else { throw .invalidUTF8 }
        let json: JSONValue
        do {
            json = try JSONParser.parse(payload, maxDepth: Self.maxJSONDepth)
        } catch {
            throw .invalidJSON(offset: error.offset, reason: error.explanation)
        }
        guard case let .object(members) = json else { throw .notAnObject }
        func member(_ key: String) -> JSONValue? { members[key] }

        var version = 1
        switch member("v") {
        case nil: break
        case let .int(value)?:
            guard let n = Int(exactly: value), n >= 1 else { throw .invalidField(key: "v", expected: "a positive integer") }
            // A newer version may change what the members mean: never read it as version 1.
            guard n <= Self.currentVersion else { throw .unsupportedVersion(n, supported: Self.currentVersion) }
            version = n
        default:
            throw .invalidField(key: "v", expected: "a positive integer")
        }
        guard let idValue = member("deviceId") else { throw .missingDeviceId }
        guard case let .string(deviceId) = idValue, !deviceId.isEmpty else {
            throw .invalidField(key: "deviceId", expected: "a non-empty string")
        }
        // A NUL would cut the ID short in the database; other control characters forge log lines.
        guard !deviceId.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            throw .invalidField(key: "deviceId", expected: "a string without control characters")
        }
        func optionalString(_ key: String) throws(DeviceTagError) -> String? {
            switch member(key) {
            case nil, .null?: return nil
            case let .string(s)?: return s
            default: throw .invalidField(key: key, expected: "a string")
            }
        }
        self.init(deviceId: deviceId, model: try optionalString("model"), serial: try optionalString("serial"), version: version)
    }

    /// The UTF-8 JSON payload, e.g. `{"v":1,"deviceId":"D-0001","model":"Pixel 7","serial":"SN123"}`.
    ///
    /// - Throws: ``DeviceTagError/cannotEncode(reason:)`` for an empty device ID,
    ///   ``DeviceTagError/payloadTooLarge(size:limit:)`` over 512 bytes.
    public func payload() throws(DeviceTagError) -> [UInt8] {
        guard !deviceId.isEmpty else { throw .cannotEncode(reason: "the device ID is empty") }
        guard version >= 1 else { throw .cannotEncode(reason: "version must be at least 1") }
        // Members in this order (not sorted), as the format shows them.
        var bytes = Array("{\"v\":\(version),\"deviceId\":".utf8) + JSONValue.string(deviceId).serializedBytes()
        if let model { bytes += Array(",\"model\":".utf8) + JSONValue.string(model).serializedBytes() }
        if let serial { bytes += Array(",\"serial\":".utf8) + JSONValue.string(serial).serializedBytes() }
        bytes.append(UInt8(ascii: "}"))
        guard bytes.count <= Self.maxPayloadSize else {
            throw .payloadTooLarge(size: bytes.count, limit: Self.maxPayloadSize)
        }
        return bytes
    }

    /// The MIME record (TNF 2, ``mimeType``).
    public func record() throws(DeviceTagError) -> NDEFRecord {
        .mime(type: Self.mimeType, payload: try payload())
    }

    /// The message to write on the tag: an optional URI record first (for phones), then the
    /// device record.
    public func message(uri: String? = nil) throws(DeviceTagError) -> NDEFMessage {
        var records: [NDEFRecord] = []
        if let uri { records.append(.uri(uri)) }
        records.append(try record())
        return NDEFMessage(records: records)
    }
}

/// What a tap's NDEF content identifies.
public enum TagIdentification: Hashable, Sendable {
    /// The tag carries a device record.
    case device(DeviceTagRecord)
    /// No device record: the decoded records (possibly none), for the UID / unknown-tag path.
    case other([NDEFRecord])
}

/// Device tag identification (step 1 of the identification order in device-tag.md).
public enum DeviceTag {
    /// Finds the device record in a message.
    ///
    /// A record of type ``DeviceTagRecord/mimeType`` must be valid, otherwise this throws
    /// (the tag claims to be a device tag but is damaged). An `application/json` record is
    /// used only if it is a valid device record with a string `deviceId` (≤ 512 bytes) and no
    /// record of our own type is present; otherwise it is ignored like any other record.
    /// Several device records must agree on the device ID.
    public static func identify(_ message: NDEFMessage) throws(DeviceTagError) -> TagIdentification {
        var found: DeviceTagRecord?
        var tolerated: DeviceTagRecord?
        for record in message.records where record.tnf == .media {
            guard let type = mediaType(of: record.type) else { continue }
            if type == DeviceTagRecord.mimeType {
                let device = try DeviceTagRecord(payload: record.payload)
                if let first = found, first.deviceId != device.deviceId {
                    throw .conflictingDeviceRecords(first: first.deviceId, second: device.deviceId)
                }
                if found == nil { found = device }
            } else if type == DeviceTagRecord.toleratedMimeType, tolerated == nil {
                tolerated = try? DeviceTagRecord(payload: record.payload)
            }
        }
        if let device = found ?? tolerated { return .device(device) }
        return .other(message.records)
    }

    /// Decodes the NDEF message bytes (e.g. from ``Type2TLVScanner``) and identifies them.
    /// A malformed NDEF message is reported as ``NDEFError``; a malformed device record as
    /// ``DeviceTagError``.
    public static func identify(messageBytes: [UInt8]) throws -> TagIdentification {
        try identify(NDEFMessage.decode(messageBytes))
    }

    /// The lower-cased media type without parameters (`Application/JSON; charset=utf-8` →
    /// `application/json`), or nil if the type is not ASCII.
    static func mediaType(of type: [UInt8]) -> String? {
        guard type.allSatisfy({ $0 < 0x80 }) else { return nil }
        var out = ""
        for b in type {
            if b == UInt8(ascii: ";") { break }
            let lower = (b >= 0x41 && b <= 0x5A) ? b + 0x20 : b
            out.unicodeScalars.append(Unicode.Scalar(lower))
        }
        while let last = out.last, last == " " || last == "\t" { out.removeLast() }
        return out
    }
}

/// On the wire (a tap's `device`): `deviceId`, `model` and `serial`. The format version is the
/// tag's encoding, not a fact about the device, so it stays on the tag.
extension DeviceTagRecord: Codable {
    private enum CodingKeys: String, CodingKey { case deviceId, model, serial }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(deviceId: try c.decode(String.self, forKey: .deviceId),
                  model: try c.decodeIfPresent(String.self, forKey: .model),
                  serial: try c.decodeIfPresent(String.self, forKey: .serial))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(deviceId, forKey: .deviceId)
        try c.encodeIfPresent(model, forKey: .model)
        try c.encodeIfPresent(serial, forKey: .serial)
    }
}
