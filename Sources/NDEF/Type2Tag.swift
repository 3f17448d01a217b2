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
    /// NXP NTAG213: 144 bytes of user memory (pages 4–39).
    case ntag213
    /// NXP NTAG215: 496 bytes of user memory (pages 4–129).
    case ntag215
    /// NXP NTAG216: 872 bytes of user memory (pages 4–221).
    case ntag216
    /// MIFARE Ultralight (MF0ICU1): 48 bytes (pages 4–15); too small for a device record,
    /// whose MIME type alone takes 38 bytes.
    case ultralight

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
    /// NULL TLV (padding, no length field).
    public static let null: UInt8 = 0x00
    /// Lock Control TLV (position of dynamic lock bits).
    public static let lockControl: UInt8 = 0x01
    /// Memory Control TLV (reserved memory area).
    public static let memoryControl: UInt8 = 0x02
    /// NDEF Message TLV.
    public static let ndefMessage: UInt8 = 0x03
    /// Proprietary TLV.
    public static let proprietary: UInt8 = 0xFD
    /// Terminator TLV (last TLV, no length field).
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
    /// unknown TLVs are skipped by their length (as nfcpy's tt2.py does). On NTAG21x and
    /// MIFARE Ultralight (C) the lock bytes lie behind the data area (e.g. Lock Control
    /// `01 03 A0 10 44` points at tag byte 160, page 40), so the NDEF TLV value is contiguous.
    /// If a Lock/Memory Control TLV announces a reserved area inside the NDEF value, the value
    /// would have to be read around it; that layout is refused with
    /// ``NDEFError/reservedAreaInsideNDEF(offset:)``.
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
        var reserved: [Range<Int>] = []
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
                if let area = reserved.first(where: { $0.overlaps(valueStart..<valueEnd) }) {
                    throw .reservedAreaInsideNDEF(offset: area.lowerBound)
                }
                if valueEnd > available { return .needMore(totalBytes: valueEnd) }
                return .ndef(range: valueStart..<valueEnd)
            }
            if (tag == Type2TLVTag.lockControl || tag == Type2TLVTag.memoryControl), length == 3, valueEnd <= available {
                reserved.append(reservedArea(tag: tag, value: dataArea[valueStart], dataArea[valueStart + 1], dataArea[valueStart + 2]))
            }
            // Lock Control (01), Memory Control (02), Proprietary (FD) and unknown TLVs: skip.
            i = valueEnd
        }
    }

    /// The data-area byte range announced by a Lock Control (lock bits → bytes) or Memory
    /// Control TLV: position = page × bytes-per-page + byte offset, counted from tag byte 0
    /// (the data area starts at byte 16).
    static func reservedArea(tag: UInt8, value v0: UInt8, _ v1: UInt8, _ v2: UInt8) -> Range<Int> {
        let bytesPerPage = 1 << Int(v2 & 0x0F)
        let start = Int(v0 >> 4) * bytesPerPage + Int(v0 & 0x0F) - 16
        let count = v1 == 0 ? 256 : Int(v1)
        let size = tag == Type2TLVTag.lockControl ? (count + 7) / 8 : count
        return start..<(start + size)
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

/// One 4-byte page write to a Type 2 tag.
public struct Type2PageWrite: Hashable, Sendable {
    /// Page number (the data area starts at page 4).
    public var page: Int
    /// The four bytes to write.
    public var bytes: [UInt8]

    /// Creates a page write.
    public init(page: Int, bytes: [UInt8]) {
        self.page = page
        self.bytes = bytes
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

    /// The page writes that store `message` from page 4, in a tear-safe order (as nfcpy's
    /// tt2.py does): first page 4 with the NDEF TLV length set to 0 (a reader that sees a
    /// half-written tag finds an empty NDEF message), then pages 5…, finally page 4 with the
    /// real length. Write each with the Type 2 WRITE command (0xA2).
    ///
    /// - Throws: ``NDEFError/tooLarge(needed:capacity:)`` as ``dataArea(for:capacity:)``.
    public static func writeSequence(for message: NDEFMessage, capacity: Int) throws(NDEFError) -> [Type2PageWrite] {
        let area = try dataArea(for: message, capacity: capacity)
        var pages: [Type2PageWrite] = []
        var index = 0
        while index < area.count {
            let end = min(index + pageSize, area.count)
            var page = Array(area[index..<end])
            while page.count < pageSize { page.append(Type2TLVTag.null) }
            pages.append(Type2PageWrite(page: 4 + index / pageSize, bytes: page))
            index = end
        }
        guard var first = pages.first else { return [] }
        let final = first
        first.bytes[1] = 0
        return [first] + pages.dropFirst() + [final]
    }

    /// Size of the NDEF TLV (header + message) for a message of `messageLength` bytes.
    public static func tlvSize(messageLength: Int) -> Int {
        messageLength + (messageLength < 0xFF ? 2 : 4)
    }
}
