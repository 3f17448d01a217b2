#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NDEF

/// Whether an NFC reader is usable right now.
public enum ReaderConnection: String, Sendable, Codable, CaseIterable {
    /// The reader is open and polling for tags.
    case connected
    /// The reader is absent or failed; the reader loop retries with backoff.
    case disconnected
}

/// One configured NFC reader as the daemon sees it.
public struct ReaderStatus: Sendable, Codable, Equatable {
    /// The reader's name in RoomBridge (from config, e.g. `front-desk`).
    public var name: String
    /// The libnfc connection string in use, once known (e.g. `pn532_uart:/dev/nfc/pn532`).
    public var connstring: String?
    /// Connected or disconnected.
    public var state: ReaderConnection
    /// libnfc's error text for the last failure, if any.
    public var lastError: String?
    /// When `state` last changed.
    public var since: Date

    public init(name: String, connstring: String? = nil, state: ReaderConnection,
                lastError: String? = nil, since: Date) {
        self.name = name
        self.connstring = connstring
        self.state = state
        self.lastError = lastError
        self.since = since
    }
}

/// A summary of one NDEF record of a tapped tag, in a form clients can show.
public struct TagRecord: Sendable, Codable, Equatable {
    /// Type Name Format, by name: `empty`, `wellKnown`, `mime`, `absoluteURI`, `external`, `unknown`, `unchanged`.
    public var tnf: String
    /// The record type (`T`, `U`, `application/vnd.roombridge.device+json`, …).
    public var type: String
    /// The record ID, if the record has one.
    public var id: String?
    /// Decoded text for Text records and UTF-8 MIME payloads.
    public var text: String?
    /// The full URI for URI records.
    public var uri: String?
    /// The raw payload, hex encoded.
    public var payloadHex: String

    public init(tnf: String, type: String, id: String? = nil, text: String? = nil,
                uri: String? = nil, payloadHex: String) {
        self.tnf = tnf
        self.type = type
        self.id = id
        self.text = text
        self.uri = uri
        self.payloadHex = payloadHex
    }
}

/// One physical tap: a tag or card arriving in a reader's field.
public struct Tap: Sendable, Codable, Equatable {
    /// Which reader saw it.
    public var reader: String
    /// The tag's UID (ISO 14443-A) or IDm (FeliCa).
    public var uid: TagUID
    /// Tag type by name, e.g. `NTAG213`, `MIFARE Ultralight`, `ISO14443-A`, `FeliCa`.
    public var tagType: String
    /// ISO 14443-A ATQA, hex (absent for FeliCa).
    public var atqa: String?
    /// ISO 14443-A SAK, hex (absent for FeliCa).
    public var sak: String?
    /// The decoded NDEF records, if the tag carries an NDEF message.
    public var records: [TagRecord]
    /// The device this tag identifies, from its device record (absent otherwise).
    public var device: DeviceTagRecord?
    /// Why the tag's content could not be read or decoded, if it could not.
    public var readError: String?
    /// How long reading the tag took, in milliseconds.
    public var readMillis: Double
    /// When the tag arrived.
    public var at: Date

    public init(reader: String, uid: TagUID, tagType: String, atqa: String? = nil, sak: String? = nil,
                records: [TagRecord] = [], device: DeviceTagRecord? = nil, readError: String? = nil,
                readMillis: Double = 0, at: Date) {
        self.reader = reader
        self.uid = uid
        self.tagType = tagType
        self.atqa = atqa
        self.sak = sak
        self.records = records
        self.device = device
        self.readError = readError
        self.readMillis = readMillis
        self.at = at
    }
}

/// A tag leaving a reader's field.
public struct TagRemoval: Sendable, Codable, Equatable {
    public var reader: String
    public var uid: TagUID
    /// How long the tag stayed in the field, in milliseconds.
    public var presentMillis: Double
    public var at: Date

    public init(reader: String, uid: TagUID, presentMillis: Double, at: Date) {
        self.reader = reader
        self.uid = uid
        self.presentMillis = presentMillis
        self.at = at
    }
}

/// A pending or finished request to write a device tag at registration.
public struct TagWriteStatus: Sendable, Codable, Equatable {
    public enum Phase: String, Sendable, Codable, CaseIterable {
        /// The next tap of a writable tag gets the device's message.
        case armed
        /// The message was written, read back, compared and the UID bound.
        case done
        /// The write failed; `message` says why and what to do.
        case failed
        /// A client cancelled it.
        case cancelled
    }
    public var deviceId: String
    public var phase: Phase
    public var lock: Bool
    /// The UID of the written tag, once known.
    public var uid: TagUID?
    public var message: String?
    public var at: Date

    public init(deviceId: String, phase: Phase, lock: Bool, uid: TagUID? = nil, message: String? = nil, at: Date) {
        self.deviceId = deviceId
        self.phase = phase
        self.lock = lock
        self.uid = uid
        self.message = message
        self.at = at
    }
}
