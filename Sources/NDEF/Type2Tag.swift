// NFC Forum Type 2 Tag memory layout (NFC Forum "Type 2 Tag Operation" / T2T 1.x):
// page 3 holds the capability container, the data area starts at page 4 and holds TLV blocks.

/// The Type 2 Tag capability container (CC, page 3): `E1 <version> <size/8> <access>`.
public struct Type2CapabilityContainer: Hashable, Sendable {
    /// The NDEF magic number in CC byte 0.
    public static let magic: UInt8 = 0xE1

    /// Mapping version byte (major in the high nibble, minor in the low nibble); 0x10 is 1.0.
    public var version: UInt8
    /// Data area size in bytes (CC byte 2 × 8).
    public var dataAreaSize: Int
    /// Read access nibble (0x0 = read access granted without security).
    public var readAccess: UInt8
    /// Write access nibble (0x0 = granted, 0xF = no write access: read-only).
    public var writeAccess: UInt8

    /// Major mapping version.
    public var majorVersion: UInt8 { version >> 4 }
    /// Minor mapping version.
    public var minorVersion: UInt8 { version & 0x0F }
    /// True if the NDEF data can be read (read access 0x0).
    public var isReadable: Bool { readAccess == 0 }
    /// True if the NDEF data can be written (write access 0x0).
    public var isWritable: Bool { writeAccess == 0 }

    /// The four CC bytes.
    public var bytes: [UInt8] {
        [Self.magic, version, UInt8(clamping: dataAreaSize / 8), (readAccess << 4) | (writeAccess & 0x0F)]
    }

    /// Builds a CC for formatting a tag.
    public init(dataAreaSize: Int, version: UInt8 = 0x10, readAccess: UInt8 = 0, writeAccess: UInt8 = 0) {
        self.version = version
        self.dataAreaSize = dataAreaSize
        self.readAccess = readAccess & 0x0F
        self.writeAccess = writeAccess & 0x0F
    }

    /// Parses the CC from the 4 bytes of page 3 (extra bytes, e.g. a 16-byte READ response
    /// starting at page 3, are ignored).
    ///
    /// - Throws: ``NDEFError/blankCapabilityContainer`` for a factory-blank `00 00 00 00` CC,
    ///   ``NDEFError/notNDEFFormatted(magic:)`` for any other magic than 0xE1,
    ///   ``NDEFError/unsupportedMappingVersion(major:minor:)`` for a major version other than 1.
    public init(bytes: some Collection<UInt8>) throws(NDEFError) {
        let cc = Array(bytes.prefix(4))
        guard cc.count == 4 else { throw .invalidCapabilityContainerLength(cc.count) }
        if cc == [0, 0, 0, 0] { throw .blankCapabilityContainer }
        guard cc[0] == Self.magic else { throw .notNDEFFormatted(magic: cc[0]) }
        // T2T: a reader shall not access a tag whose major version is higher than its own.
        guard cc[1] >> 4 == 1 else { throw .unsupportedMappingVersion(major: cc[1] >> 4, minor: cc[1] & 0x0F) }
        version = cc[1]
        dataAreaSize = Int(cc[2]) * 8
        readAccess = cc[3] >> 4
        writeAccess = cc[3] & 0x0F
    }

    /// NTAG213: 144-byte data area, `E1 10 12 00`.
    public static let ntag213 = Type2CapabilityContainer(dataAreaSize: 144)
    /// NTAG215: 496-byte data area, `E1 10 3E 00`.
    public static let ntag215 = Type2CapabilityContainer(dataAreaSize: 496)
    /// NTAG216: 872-byte data area, `E1 10 6D 00`.
    public static let ntag216 = Type2CapabilityContainer(dataAreaSize: 872)
    /// MIFARE Ultralight: 48-byte data area, `E1 10 06 00`.
    public static let ultralight = Type2CapabilityContainer(dataAreaSize: 48)
}

/// Known Type 2 tag products and their NDEF formatting.
public enum Type2TagModel: String, Hashable, Sendable, CaseIterable {
    case ntag213, ntag215, ntag216, ultralight

    /// The CC to write into page 3 when formatting a factory-blank tag.
    public var capabilityContainer: Type2CapabilityContainer {
        switch self {
        case .ntag213: .ntag213
        case .ntag215: .ntag215
        case .ntag216: .ntag216
        case .ultralight: .ultralight
        }
    }

    /// Data area (user memory) size in bytes, from page 4.
    public var dataAreaSize: Int { capabilityContainer.dataAreaSize }
}

/// Outcome of scanning (part of) a Type 2 data area for the NDEF Message TLV.
public enum Type2Locate: Hashable, Sendable {
    /// The scan cannot continue until at least `totalBytes` data-area bytes (counted from page 4)
    /// are available. Read more pages (a READ returns 16 bytes) and scan again.
    case needMore(totalBytes: Int)
    /// The NDEF message occupies these bytes of the data area.
    case ndef(range: Range<Int>)
    /// No NDEF message: an empty NDEF TLV (`03 00`), a Terminator TLV before any NDEF TLV, or the
    /// end of the data area.
    case noNDEFMessage
}

/// TLV block tags used in the Type 2 data area.
public enum Type2TLVTag {
    public static let null: UInt8 = 0x00
    public static let lockControl: UInt8 = 0x01
    public static let memoryControl: UInt8 = 0x02
    public static let ndefMessage: UInt8 = 0x03
    public static let proprietary: UInt8 = 0xFD
    public static let terminator: UInt8 = 0xFE
}

/// Incremental locator for the NDEF Message TLV in a Type 2 data area.
public enum Type2TLVScanner {
    /// Largest data area a Type 2 CC can announce (255 × 8).
    public static let maxDataAreaSize = 255 * 8

    /// Scans the TLV blocks in `dataArea` (bytes from page 4 on; may be only a prefix of the
    /// data area) and locates the first NDEF Message TLV.
    ///
    /// NULL TLVs are skipped byte by byte; Lock Control, Memory Control, Proprietary and
    /// unknown TLVs are skipped by their length. Reserved/lock areas announced by Memory/Lock
    /// Control TLVs are not subtracted from the NDEF value: on NTAG21x and Ultralight the
    /// dynamic lock bytes lie behind the data area, so the NDEF TLV value is contiguous.
    /// Bytes of `dataArea` beyond `dataAreaSize` are ignored.
    ///
    /// - Parameters:
    ///   - dataArea: the data-area bytes read so far.
    ///   - dataAreaSize: the size from the capability container (``Type2CapabilityContainer/dataAreaSize``).
    /// - Throws: ``NDEFError/tlvOutOfBounds(tag:offset:length:dataAreaSize:)`` when a TLV runs
    ///   past the data area, ``NDEFError/invalidTLVLength(tag:offset:)`` for length 0xFFFF.
    public static func locate(in dataArea: [UInt8], dataAreaSize: Int) throws(NDEFError) -> Type2Locate {
        guard dataAreaSize >= 0, dataAreaSize <= maxDataAreaSize else { throw .invalidDataAreaSize(dataAreaSize) }
        let available = min(dataArea.count, dataAreaSize)
        var i = 0
        while true {
            if i >= dataAreaSize { return .noNDEFMessage }
            if i >= available { return .needMore(totalBytes: i + 1) }
            let tag = dataArea[i]
            switch tag {
            case Type2TLVTag.null:
                i += 1
                continue
            case Type2TLVTag.terminator:
                return .noNDEFMessage
            default:
                break
            }
            // Length field: 1 byte, or FF hi lo.
            guard i + 1 < dataAreaSize else {
                throw .tlvOutOfBounds(tag: tag, offset: i, length: 0, dataAreaSize: dataAreaSize)
            }
            if i + 1 >= available { return .needMore(totalBytes: i + 2) }
            var length = Int(dataArea[i + 1])
            var headerSize = 2
            if length == 0xFF {
                guard i + 3 < dataAreaSize else {
                    throw .tlvOutOfBounds(tag: tag, offset: i, length: 0xFF, dataAreaSize: dataAreaSize)
                }
                if i + 3 >= available { return .needMore(totalBytes: i + 4) }
                length = Int(dataArea[i + 2]) << 8 | Int(dataArea[i + 3])
                if length == 0xFFFF { throw .invalidTLVLength(tag: tag, offset: i) }
                headerSize = 4
            }
            let valueStart = i + headerSize
            let valueEnd = valueStart + length
            guard valueEnd <= dataAreaSize else {
                throw .tlvOutOfBounds(tag: tag, offset: i, length: length, dataAreaSize: dataAreaSize)
            }
            if tag == Type2TLVTag.ndefMessage {
                if length == 0 { return .noNDEFMessage }
                if valueEnd > available { return .needMore(totalBytes: valueEnd) }
                return .ndef(range: valueStart..<valueEnd)
            }
            // Lock Control (01), Memory Control (02), Proprietary (FD) and unknown TLVs: skip.
            i = valueEnd
        }
    }

    /// Locates and decodes the NDEF message in a complete data area.
    ///
    /// - Returns: the message, or `nil` if the tag holds no NDEF message.
    /// - Throws: TLV errors, ``NDEFError/truncated(offset:needed:available:)`` if `dataArea` is
    ///   shorter than the NDEF TLV, and any message decoding error.
    public static func decodeMessage(in dataArea: [UInt8], dataAreaSize: Int,
                                     options: NDEFDecodingOptions = NDEFDecodingOptions()) throws(NDEFError) -> NDEFMessage? {
        switch try locate(in: dataArea, dataAreaSize: dataAreaSize) {
        case .noNDEFMessage:
            return nil
        case let .needMore(total):
            throw .truncated(offset: dataArea.count, needed: total - dataArea.count, available: 0)
        case let .ndef(range):
            return try NDEFMessage.decode(Array(dataArea[range]), options: options)
        }
    }
}

/// Builds the data-area image written to a Type 2 tag.
public enum Type2TagImage {
    /// Page size of Type 2 tags in bytes.
    public static let pageSize = 4

    /// The bytes to write from page 4: NDEF Message TLV (1-byte length below 0xFF, else
    /// `FF hi lo`), then a Terminator TLV if it fits, NULL-padded to whole 4-byte pages.
    ///
    /// - Parameter capacity: the data area size (``Type2CapabilityContainer/dataAreaSize``).
    /// - Throws: ``NDEFError/tooLarge(needed:capacity:)`` if the NDEF TLV does not fit.
    public static func dataArea(for message: NDEFMessage, capacity: Int) throws(NDEFError) -> [UInt8] {
        try dataArea(forMessageBytes: message.encoded(), capacity: capacity)
    }

    /// Same as ``dataArea(for:capacity:)`` for an already encoded message (empty bytes give
    /// an empty NDEF TLV `03 00 FE`).
    public static func dataArea(forMessageBytes message: [UInt8], capacity: Int) throws(NDEFError) -> [UInt8] {
        let n = message.count
        let header: [UInt8] = n < 0xFF
            ? [Type2TLVTag.ndefMessage, UInt8(n)]
            : [Type2TLVTag.ndefMessage, 0xFF, UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        let needed = header.count + n
        guard n <= 0xFFFE, needed <= capacity else { throw .tooLarge(needed: needed, capacity: max(capacity, 0)) }
        var out = header
        out.reserveCapacity(needed + 1 + pageSize)
        out.append(contentsOf: message)
        if out.count < capacity { out.append(Type2TLVTag.terminator) }
        while out.count % pageSize != 0 && out.count < capacity { out.append(Type2TLVTag.null) }
        return out
    }

    /// Size of the NDEF TLV (header + message) for a message of `messageLength` bytes.
    public static func tlvSize(messageLength: Int) -> Int {
        messageLength + (messageLength < 0xFF ? 2 : 4)
    }
}
