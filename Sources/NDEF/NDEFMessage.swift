/// Limits applied while decoding NDEF messages from untrusted bytes.
public struct NDEFDecodingOptions: Hashable, Sendable {
    /// Largest payload of one logical record, after chunk reassembly.
    public var maxRecordPayloadSize: Int
    /// Largest number of logical records in one message.
    public var maxRecords: Int

    /// Defaults sized well above any Type 2 tag (NTAG216 holds 868 NDEF bytes).
    public init(maxRecordPayloadSize: Int = 1 << 20, maxRecords: Int = 4096) {
        self.maxRecordPayloadSize = maxRecordPayloadSize
        self.maxRecords = maxRecords
    }
}

/// An NDEF message: an ordered list of records (NFC Forum NDEF 1.0).
public struct NDEFMessage: Hashable, Sendable {
    /// The logical records (chunked records appear reassembled).
    public var records: [NDEFRecord]

    /// Creates a message from records.
    public init(records: [NDEFRecord]) {
        self.records = records
    }

    /// Decodes a complete NDEF message.
    ///
    /// Validates MB/ME flags, TNF-specific constraints, chunk sequences (reassembled into one
    /// record, at most `options.maxRecordPayloadSize` bytes) and rejects trailing bytes.
    public init(bytes: some Collection<UInt8>, options: NDEFDecodingOptions = NDEFDecodingOptions()) throws(NDEFError) {
        self = try NDEFMessage.decode(Array(bytes), options: options)
    }

    /// Decodes a complete NDEF message (see ``init(bytes:options:)``).
    public static func decode(_ bytes: [UInt8], options: NDEFDecodingOptions = NDEFDecodingOptions()) throws(NDEFError) -> NDEFMessage {
        var decoder = MessageDecoder(bytes: bytes, options: options)
        return NDEFMessage(records: try decoder.decode())
    }

    /// Encodes the message.
    ///
    /// A message without records is encoded as a single Empty record (`D0 00 00`), the NFC Forum
    /// representation of an empty NDEF message. Short records (SR) are used for payloads under
    /// 256 bytes. If `chunkSize` is given, payloads longer than it are split into chunks of that
    /// size (the first chunk keeps type and ID, the others use TNF Unchanged).
    public func encoded(chunkSize: Int? = nil) throws(NDEFError) -> [UInt8] {
        let list = records.isEmpty ? [NDEFRecord.empty] : records
        if let chunkSize, chunkSize < 1 { throw .cannotEncode(reason: "chunk size must be at least 1") }
        var out: [UInt8] = []
        for (index, record) in list.enumerated() {
            try record.validateForEncoding()
            let first = index == 0
            let last = index == list.count - 1
            if let chunkSize, record.payload.count > chunkSize {
                var start = 0
                while start < record.payload.count {
                    let end = min(start + chunkSize, record.payload.count)
                    let initial = start == 0
                    let final = end == record.payload.count
                    try appendRecord(
                        to: &out,
                        tnf: initial ? record.tnf : .unchanged,
                        type: initial ? record.type : [],
                        id: initial ? record.id : [],
                        payload: record.payload[start..<end],
                        mb: first && initial, me: last && final, cf: !final)
                    start = end
                }
            } else {
                try appendRecord(to: &out, tnf: record.tnf, type: record.type, id: record.id,
                                 payload: record.payload[...], mb: first, me: last, cf: false)
            }
        }
        return out
    }
}

private func appendRecord(to out: inout [UInt8], tnf: TypeNameFormat, type: [UInt8], id: [UInt8],
                          payload: ArraySlice<UInt8>, mb: Bool, me: Bool, cf: Bool) throws(NDEFError) {
    guard type.count <= 255 else { throw .cannotEncode(reason: "type is \(type.count) bytes, at most 255 allowed") }
    guard id.count <= 255 else { throw .cannotEncode(reason: "ID is \(id.count) bytes, at most 255 allowed") }
    guard UInt64(payload.count) <= UInt64(UInt32.max) else {
        throw .cannotEncode(reason: "payload is \(payload.count) bytes, at most 4294967295 allowed")
    }
    let short = payload.count < 256
    var header = tnf.rawValue
    if mb { header |= NDEFFlag.mb }
    if me { header |= NDEFFlag.me }
    if cf { header |= NDEFFlag.cf }
    if short { header |= NDEFFlag.sr }
    if !id.isEmpty { header |= NDEFFlag.il }
    out.append(header)
    out.append(UInt8(type.count))
    if short {
        out.append(UInt8(payload.count))
    } else {
        let n = UInt32(payload.count)
        out.append(contentsOf: [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
    }
    if !id.isEmpty { out.append(UInt8(id.count)) }
    out.append(contentsOf: type)
    out.append(contentsOf: id)
    out.append(contentsOf: payload)
}

extension NDEFRecord {
    /// Checks the TNF-specific rules that the decoder also enforces.
    func validateForEncoding() throws(NDEFError) {
        switch tnf {
        case .empty:
            guard type.isEmpty, id.isEmpty, payload.isEmpty else {
                throw .cannotEncode(reason: "an Empty (TNF 0) record must have no type, ID or payload")
            }
        case .wellKnown, .media, .absoluteURI, .external:
            guard !type.isEmpty else { throw .cannotEncode(reason: "TNF \(tnf.rawValue) requires a non-empty type") }
        case .unknown:
            guard type.isEmpty else { throw .cannotEncode(reason: "an Unknown (TNF 5) record must have no type") }
        case .unchanged:
            throw .cannotEncode(reason: "TNF Unchanged (6) is only used for chunks; the encoder emits it itself")
        }
    }
}

/// Parses raw records and reassembles chunks. Every length is checked against the remaining
/// input before any slice is taken, so allocations are bounded by the input size.
struct MessageDecoder {
    let bytes: [UInt8]
    let options: NDEFDecodingOptions
    var position = 0

    init(bytes: [UInt8], options: NDEFDecodingOptions) {
        self.bytes = bytes
        self.options = options
    }

    struct RawRecord {
        var offset: Int
        var header: UInt8
        var tnfValue: UInt8
        var typeRange: Range<Int>
        var idRange: Range<Int>
        var payloadRange: Range<Int>
        var mb: Bool { header & NDEFFlag.mb != 0 }
        var me: Bool { header & NDEFFlag.me != 0 }
        var cf: Bool { header & NDEFFlag.cf != 0 }
        var hasID: Bool { header & NDEFFlag.il != 0 }
    }

    mutating func decode() throws(NDEFError) -> [NDEFRecord] {
        guard !bytes.isEmpty else { throw .emptyMessage }
        var records: [NDEFRecord] = []
        var rawIndex = 0
        // Chunk reassembly state.
        var chunkHead: RawRecord?
        var chunkPayload: [UInt8] = []

        while true {
            guard position < bytes.count else {
                if chunkHead != nil {
                    throw .invalidChunk(offset: position, reason: "the input ends inside a chunked record (no terminating chunk)")
                }
                throw .missingMessageEnd
            }
            let raw = try readRaw()
            if rawIndex == 0 {
                guard raw.mb else { throw .missingMessageBegin }
            } else if raw.mb {
                throw .unexpectedMessageBegin(recordIndex: rawIndex)
            }
            rawIndex += 1
            try validate(raw, inChunk: chunkHead != nil)

            if let head = chunkHead {
                // Middle or terminating chunk (TNF Unchanged, no type, no ID: checked in validate).
                let added = raw.payloadRange.count
                guard chunkPayload.count + added <= options.maxRecordPayloadSize else {
                    throw .recordTooLarge(size: chunkPayload.count + added, limit: options.maxRecordPayloadSize)
                }
                chunkPayload.append(contentsOf: bytes[raw.payloadRange])
                if !raw.cf {
                    try appendRecord(&records, NDEFRecord(
                        tnf: TypeNameFormat(rawValue: head.tnfValue) ?? .unknown,
                        type: Array(bytes[head.typeRange]), id: Array(bytes[head.idRange]),
                        payload: chunkPayload))
                    chunkHead = nil
                    chunkPayload = []
                } else if raw.me {
                    throw .invalidChunk(offset: raw.offset, reason: "a non-terminating chunk carries the ME flag")
                }
            } else if raw.cf {
                guard !raw.me else {
                    throw .invalidChunk(offset: raw.offset, reason: "the initial chunk carries the ME flag, so the record can never be completed")
                }
                guard raw.payloadRange.count <= options.maxRecordPayloadSize else {
                    throw .recordTooLarge(size: raw.payloadRange.count, limit: options.maxRecordPayloadSize)
                }
                chunkHead = raw
                chunkPayload = Array(bytes[raw.payloadRange])
            } else {
                guard raw.payloadRange.count <= options.maxRecordPayloadSize else {
                    throw .recordTooLarge(size: raw.payloadRange.count, limit: options.maxRecordPayloadSize)
                }
                try appendRecord(&records, NDEFRecord(
                    tnf: TypeNameFormat(rawValue: raw.tnfValue) ?? .unknown,
                    type: Array(bytes[raw.typeRange]), id: Array(bytes[raw.idRange]),
                    payload: Array(bytes[raw.payloadRange])))
            }

            if raw.me {
                guard chunkHead == nil else {
                    throw .invalidChunk(offset: raw.offset, reason: "the message ends inside a chunked record")
                }
                if position < bytes.count {
                    throw .trailingBytes(offset: position, count: bytes.count - position)
                }
                return records
            }
        }
    }

    private func appendRecord(_ records: inout [NDEFRecord], _ record: NDEFRecord) throws(NDEFError) {
        guard records.count < options.maxRecords else { throw .tooManyRecords(limit: options.maxRecords) }
        records.append(record)
    }

    private func validate(_ raw: RawRecord, inChunk: Bool) throws(NDEFError) {
        let tnf = raw.tnfValue
        if inChunk {
            guard tnf == TypeNameFormat.unchanged.rawValue else {
                throw .invalidChunk(offset: raw.offset, reason: "a chunked record continues with TNF \(tnf) instead of Unchanged (6)")
            }
            guard raw.idRange.isEmpty, !raw.hasID else {
                throw .invalidChunk(offset: raw.offset, reason: "a middle or terminating chunk must not have an ID")
            }
        } else if tnf == TypeNameFormat.unchanged.rawValue {
            throw .invalidChunk(offset: raw.offset, reason: "TNF Unchanged (6) outside a chunked record")
        }
        switch tnf {
        case TypeNameFormat.empty.rawValue:
            guard raw.typeRange.isEmpty, raw.idRange.isEmpty, raw.payloadRange.isEmpty else {
                throw .invalidRecord(offset: raw.offset, reason: "an Empty (TNF 0) record must have no type, ID or payload")
            }
            if raw.cf { throw .invalidChunk(offset: raw.offset, reason: "an Empty (TNF 0) record cannot be chunked") }
        case 1...4:
            guard !raw.typeRange.isEmpty else {
                throw .invalidRecord(offset: raw.offset, reason: "TNF \(tnf) requires a non-empty type")
            }
        case TypeNameFormat.unknown.rawValue, TypeNameFormat.unchanged.rawValue:
            guard raw.typeRange.isEmpty else {
                throw .invalidRecord(offset: raw.offset, reason: "TNF \(tnf) (Unknown/Unchanged) must have an empty type")
            }
        default:
            throw .reservedTNF(offset: raw.offset)
        }
    }

    /// Reads one record header and computes the field ranges, checking the lengths first.
    private mutating func readRaw() throws(NDEFError) -> RawRecord {
        let start = position
        let header = bytes[position]
        let short = header & NDEFFlag.sr != 0
        let hasID = header & NDEFFlag.il != 0
        let fixed = 1 + 1 + (short ? 1 : 4) + (hasID ? 1 : 0)
        let available = bytes.count - start
        guard available >= fixed else { throw .truncated(offset: start, needed: fixed, available: available) }
        var p = start + 1
        let typeLength = Int(bytes[p]); p += 1
        let payloadLength: Int
        if short {
            payloadLength = Int(bytes[p]); p += 1
        } else {
            // Up to 0xFFFFFFFF: fits in Int on 64-bit; on 32-bit the check below still holds
            // because it is done in UInt64.
            let value = UInt64(bytes[p]) << 24 | UInt64(bytes[p + 1]) << 16 | UInt64(bytes[p + 2]) << 8 | UInt64(bytes[p + 3])
            p += 4
            let remaining = UInt64(bytes.count - p)
            guard value <= remaining else {
                throw .truncated(offset: start, needed: Int(clamping: value) , available: bytes.count - p)
            }
            payloadLength = Int(value)
        }
        let idLength = hasID ? Int(bytes[p]) : 0
        if hasID { p += 1 }
        let variable = typeLength + idLength + payloadLength
        let remaining = bytes.count - p
        guard variable <= remaining else {
            throw .truncated(offset: start, needed: variable, available: remaining)
        }
        let typeRange = p..<(p + typeLength)
        let idRange = typeRange.upperBound..<(typeRange.upperBound + idLength)
        let payloadRange = idRange.upperBound..<(idRange.upperBound + payloadLength)
        position = payloadRange.upperBound
        return RawRecord(offset: start, header: header, tnfValue: header & NDEFFlag.tnfMask,
                         typeRange: typeRange, idRange: idRange, payloadRange: payloadRange)
    }
}
