/// Text encoding of an NFC Forum Text record (RTD Text 1.0).
public enum NDEFTextEncoding: Hashable, Sendable {
    case utf8
    /// UTF-16. When encoding, a big-endian byte order mark is written; when decoding, a BOM
    /// selects the byte order and text without BOM is read as big-endian (RTD Text §3.4).
    case utf16
}

/// Typed view of an NDEF record (see ``NDEFRecord/content()``).
public enum NDEFRecordContent: Hashable, Sendable {
    /// TNF 0.
    case empty
    /// Well-known `T`.
    case text(String, language: String, encoding: NDEFTextEncoding)
    /// Well-known `U`, with the abbreviation prefix expanded.
    case uri(String)
    /// TNF 2: media type and payload.
    case mime(type: String, payload: [UInt8])
    /// TNF 3: the absolute URI from the type field, and the payload.
    case absoluteURI(String, payload: [UInt8])
    /// TNF 4: `domain:type` split at the first colon, and the payload.
    case external(domain: String, type: String, payload: [UInt8])
    /// Any other well-known type (e.g. `Sp` smart poster), left raw.
    case wellKnown(type: String, payload: [UInt8])
    /// TNF 5.
    case unknown(payload: [UInt8])
}

extension NDEFRecord {
    /// NFC Forum URI RTD abbreviation table, identifier codes 0x00–0x23 (URI RTD 1.0, Table 3).
    public static let uriPrefixes: [String] = [
    "", "http://www.", "https://www.", "http://", "https://", "tel:", "mailto:",
    "ftp://anonymous:anonymous@", "ftp://ftp.", "ftps://", "sftp://", "smb://", "nfs://",
    "ftp://", "dav://", "news:", "telnet://", "imap:", "rtsp://", "urn:", "pop:", "sip:",
    "sips:", "tftp:", "btspp://", "btl2cap://", "btgoep://", "tcpobex://", "irdaobex://",
    "file://", "urn:epc:id:", "urn:epc:tag:", "urn:epc:pat:", "urn:epc:raw:", "urn:epc:",
    "urn:nfc:",
    ]
}

extension NDEFRecord {
    /// Well-known type `T`.
    public static let textType: [UInt8] = [0x54]
    /// Well-known type `U`.
    public static let uriType: [UInt8] = [0x55]

    /// A Text record (well-known `T`).
    ///
    /// - Throws: ``NDEFError/invalidText(reason:)`` if the language code is not 1–63 ASCII bytes.
    public static func text(_ text: String, language: String = "en", encoding: NDEFTextEncoding = .utf8) throws(NDEFError) -> NDEFRecord {
        let lang = Array(language.utf8)
        guard !lang.isEmpty, lang.count <= 63, lang.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidText(reason: "language code must be 1–63 printable ASCII characters, got \"\(language)\"")
        }
        var payload: [UInt8] = [UInt8(lang.count) | (encoding == .utf16 ? 0x80 : 0)]
        payload += lang
        switch encoding {
        case .utf8:
            payload += Array(text.utf8)
        case .utf16:
            payload += [0xFE, 0xFF]
            for unit in text.utf16 { payload += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        }
        return NDEFRecord(tnf: .wellKnown, type: textType, payload: payload)
    }

    /// A URI record (well-known `U`), using the longest matching abbreviation prefix.
    public static func uri(_ uri: String) -> NDEFRecord {
        var best = 0
        for (code, prefix) in Self.uriPrefixes.enumerated() where code > 0 {
            if uri.utf8.starts(with: prefix.utf8), prefix.utf8.count > Self.uriPrefixes[best].utf8.count { best = code }
        }
        let rest = uri.utf8.dropFirst(Self.uriPrefixes[best].utf8.count)
        return NDEFRecord(tnf: .wellKnown, type: uriType, payload: [UInt8(best)] + Array(rest))
    }

    /// A media-type record (TNF 2).
    public static func mime(type: String, payload: [UInt8]) -> NDEFRecord {
        NDEFRecord(tnf: .media, type: Array(type.utf8), payload: payload)
    }

    /// An external-type record (TNF 4) with type `domain:type`.
    public static func external(domain: String, type: String, payload: [UInt8]) -> NDEFRecord {
        NDEFRecord(tnf: .external, type: Array("\(domain):\(type)".utf8), payload: payload)
    }

    /// An absolute-URI record (TNF 3): the URI is the type field.
    public static func absoluteURI(_ uri: String, payload: [UInt8] = []) -> NDEFRecord {
        NDEFRecord(tnf: .absoluteURI, type: Array(uri.utf8), payload: payload)
    }

    /// Builds the raw record for a typed content value.
    public init(content: NDEFRecordContent) throws(NDEFError) {
        switch content {
        case .empty: self = .empty
        case let .text(text, language, encoding): self = try .text(text, language: language, encoding: encoding)
        case let .uri(uri): self = .uri(uri)
        case let .mime(type, payload): self = .mime(type: type, payload: payload)
        case let .absoluteURI(uri, payload): self = .absoluteURI(uri, payload: payload)
        case let .external(domain, type, payload): self = .external(domain: domain, type: type, payload: payload)
        case let .wellKnown(type, payload): self = NDEFRecord(tnf: .wellKnown, type: Array(type.utf8), payload: payload)
        case let .unknown(payload): self = NDEFRecord(tnf: .unknown, payload: payload)
        }
    }

    /// Decodes the typed view of this record.
    ///
    /// - Throws: ``NDEFError`` if a Text/URI payload or a type field is malformed.
    public func content() throws(NDEFError) -> NDEFRecordContent {
        switch tnf {
        case .empty:
            return .empty
        case .wellKnown:
            if type == Self.textType { return try decodeText() }
            if type == Self.uriType { return try decodeURI() }
            return .wellKnown(type: try asciiType(), payload: payload)
        case .media:
            return .mime(type: try asciiType(), payload: payload)
        case .absoluteURI:
            guard let uri = String(validating: type, as: UTF8.self) else {
                throw .invalidURI(reason: "the absolute URI type field is not valid UTF-8")
            }
            return .absoluteURI(uri, payload: payload)
        case .external:
            let name = try asciiType()
            guard let colon = name.firstIndex(of: ":"), colon != name.startIndex, name.index(after: colon) != name.endIndex else {
                throw .invalidType(reason: "external type \"\(name)\" is not of the form domain:type")
            }
            return .external(domain: String(name[..<colon]), type: String(name[name.index(after: colon)...]), payload: payload)
        case .unknown:
            return .unknown(payload: payload)
        case .unchanged:
            throw .invalidChunk(offset: 0, reason: "TNF Unchanged (6) outside a chunked record")
        }
    }

    private func asciiType() throws(NDEFError) -> String {
        guard type.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), let s = String(validating: type, as: UTF8.self) else {
            throw .invalidType(reason: "type field is not printable ASCII")
        }
        return s
    }

    private func decodeText() throws(NDEFError) -> NDEFRecordContent {
        guard let status = payload.first else { throw .invalidText(reason: "payload is empty (no status byte)") }
        guard status & 0x40 == 0 else { throw .invalidText(reason: "reserved bit 6 of the status byte is set") }
        let langLength = Int(status & 0x3F)
        guard 1 + langLength <= payload.count else {
            throw .invalidText(reason: "language code length \(langLength) exceeds the payload")
        }
        let langBytes = payload[1..<(1 + langLength)]
        guard langBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), let language = String(validating: langBytes, as: UTF8.self) else {
            throw .invalidText(reason: "language code is not printable ASCII")
        }
        let body = payload[(1 + langLength)...]
        if status & 0x80 == 0 {
            guard let text = String(validating: body, as: UTF8.self) else { throw .invalidText(reason: "text is not valid UTF-8") }
            return .text(text, language: language, encoding: .utf8)
        }
        guard body.count % 2 == 0 else { throw .invalidText(reason: "UTF-16 text has an odd number of bytes") }
        var bigEndian = true
        var start = body.startIndex
        if body.count >= 2 {
            let b0 = body[start], b1 = body[start + 1]
            if b0 == 0xFE && b1 == 0xFF { start += 2 } else if b0 == 0xFF && b1 == 0xFE { bigEndian = false; start += 2 }
        }
        var units: [UInt16] = []
        units.reserveCapacity((body.endIndex - start) / 2)
        var i = start
        while i < body.endIndex {
            let hi = bigEndian ? body[i] : body[i + 1]
            let lo = bigEndian ? body[i + 1] : body[i]
            units.append(UInt16(hi) << 8 | UInt16(lo))
            i += 2
        }
        guard let text = String(validating: units, as: UTF16.self) else { throw .invalidText(reason: "text is not valid UTF-16") }
        return .text(text, language: language, encoding: .utf16)
    }

    private func decodeURI() throws(NDEFError) -> NDEFRecordContent {
        guard let code = payload.first else { throw .invalidURI(reason: "URI record payload is empty (no identifier code)") }
        guard Int(code) < Self.uriPrefixes.count else { throw .invalidURIPrefix(code: code) }
        guard let rest = String(validating: payload.dropFirst(), as: UTF8.self) else {
            throw .invalidURI(reason: "URI field is not valid UTF-8")
        }
        return .uri(Self.uriPrefixes[Int(code)] + rest)
    }
}
