import NDEF

/// Failure of one Type 2 page operation.
enum Type2IOError: Error, Sendable {
    /// The tag did not answer (left the field, or fell back to IDLE after an unsupported command).
    case silent
    /// The tag answered with a NAK (locked page, address out of range).
    case refused
    /// The reader itself failed (I/O error, timeout of the chip): libnfc code and text.
    case device(Int32, String)
}

/// Page-level access to a selected NFC Forum Type 2 tag (READ 0x30, FAST_READ 0x3A, WRITE 0xA2).
protocol Type2Transport {
    /// READ: 16 bytes from `page` (the tag wraps around at the end of its memory).
    func read(page: Int) throws(Type2IOError) -> [UInt8]
    /// FAST_READ (NTAG21x): pages `from...to`.
    func fastRead(from: Int, to: Int) throws(Type2IOError) -> [UInt8]
    /// WRITE of one 4-byte page.
    func write(page: Int, _ data: [UInt8]) throws(Type2IOError)
}

extension TagKind {
    /// NDEF model for NTAG21x / Ultralight.
    var type2Model: Type2TagModel? {
        switch self {
        case .ntag213: .ntag213
        case .ntag215: .ntag215
        case .ntag216: .ntag216
        case .ultralight: .ultralight
        default: nil
        }
    }
    var supportsFastRead: Bool { self == .ntag213 || self == .ntag215 || self == .ntag216 }
    /// Total pages of the model (user memory + config).
    var pageCount: Int? {
        switch self {
        case .ntag213: 45
        case .ntag215: 135
        case .ntag216: 231
        case .ultralight: 16
        default: nil
        }
    }
    /// Page holding the NTAG dynamic lock bytes.
    var dynamicLockPage: Int? {
        switch self {
        case .ntag213: 0x28
        case .ntag215: 0x82
        case .ntag216: 0xE2
        default: nil
        }
    }

    /// Kind from the storage-size byte of a GET_VERSION answer (NTAG21x datasheet §10.1).
    static func fromVersion(_ v: [UInt8]) -> TagKind {
        guard v.count >= 8, v[1] == 0x04, v[2] == 0x04 else { return .ultralight }
        switch v[6] {
        case 0x0F: return .ntag213
        case 0x11: return .ntag215
        case 0x13: return .ntag216
        default: return .ultralight
        }
    }
}

/// Reads the NDEF content of a Type 2 tag with as few commands as the TLVs allow.
enum Type2ContentReader {
    /// Largest FAST_READ span: the PN532 returns at most ~262 bytes per InDataExchange.
    static let maxFastReadPages = 60

    /// Reads CC and NDEF TLV. `kind` comes from GET_VERSION; a tag without GET_VERSION whose
    /// CC announces more than the 48 bytes of an Ultralight is reported as `.type2`.
    static func read(_ t: Type2Transport, kind: TagKind) throws(Type2IOError)
        -> (cc: Type2CapabilityContainer?, content: NDEFContent, kind: TagKind) {
        let first = try t.read(page: 3)            // CC + the first 12 data-area bytes
        let cc: Type2CapabilityContainer
        do {
            cc = try Type2CapabilityContainer(bytes: first.prefix(4))
        } catch {
            if case .unsupportedMappingVersion = error { return (nil, .unreadable(error.description), kind) }
            return (nil, .notFormatted, kind)
        }
        let kind = (kind == .ultralight && cc.dataAreaSize > TagKind.ultralight.type2Model!.dataAreaSize) ? .type2 : kind
        let (c, content) = try readContent(t, cc: cc, first: first, kind: kind)
        return (c, content, kind)
    }

    private static func readContent(_ t: Type2Transport, cc: Type2CapabilityContainer, first: [UInt8], kind: TagKind) throws(Type2IOError)
        -> (cc: Type2CapabilityContainer?, content: NDEFContent) {
        guard cc.isReadable else { return (cc, .unreadable("The tag denies read access (CC read access 0x\(String(cc.readAccess, radix: 16))).")) }
        var area = Array(first.dropFirst(4))
        do {
            while true {
                switch try Type2TLVScanner.locate(in: area, dataAreaSize: cc.dataAreaSize) {
                case .noNDEFMessage:
                    return (cc, .empty)
                case .ndef(let range):
                    let bytes = Array(area[range])
                    do {
                        return (cc, .message(bytes: bytes, decoded: try NDEFMessage(bytes: bytes)))
                    } catch {
                        return (cc, .unreadable(error.description))
                    }
                case .needMore(let total):
                    let nextPage = 4 + area.count / 4
                    let lastNeeded = 4 + (min(total, cc.dataAreaSize) - 1) / 4
                    if let pages = kind.pageCount, nextPage >= pages {
                        return (cc, .unreadable("The NDEF TLV runs past the end of the tag memory."))
                    }
                    if kind.supportsFastRead {
                        var last = min(lastNeeded, nextPage + maxFastReadPages - 1)
                        if let pages = kind.pageCount { last = min(last, pages - 1) }
                        area += try t.fastRead(from: nextPage, to: max(last, nextPage))
                    } else {
                        area += try t.read(page: nextPage)
                    }
                }
            }
        } catch let e as Type2IOError {
            if case .device = e { throw e }
            return (cc, .unreadable(e.description))
        } catch {
            return (cc, .unreadable(String(describing: error)))
        }
    }
}

/// Writes an NDEF message (registration) and locks tags.
enum Type2Writer {
    static func write(message: [UInt8], kind: TagKind, uid: [UInt8], transport t: Type2Transport) throws(TagWriteError) -> TagWriteResult {
        guard kind.isType2 else { throw .unsupportedTag(kind) }
        let head = try io(page: 0) { () throws(Type2IOError) in try t.read(page: 0) }
        let ccBytes = Array(head[12 ..< 16])
        var formatted = false
        let cc: Type2CapabilityContainer
        if ccBytes == [0, 0, 0, 0] {
            // Factory-blank: only NTAG21x identified by GET_VERSION is formatted (the CC page is
            // OTP, a wrong size could never be corrected).
            guard kind != .ultralight, let model = kind.type2Model else { throw .notFormattable }
            cc = model.capabilityContainer
            formatted = true
        } else {
            guard let parsed = try? Type2CapabilityContainer(bytes: ccBytes) else { throw .notFormattable }
            guard parsed.isWritable else { throw .readOnly }
            cc = parsed
        }
        var capacity = cc.dataAreaSize
        if let model = kind.type2Model { capacity = min(capacity, model.dataAreaSize) }
        var area: [UInt8]
        do {
            area = try Type2TagImage.dataArea(forMessageBytes: message, capacity: capacity)
        } catch {
            if case .tooLarge(let needed, let cap) = error { throw .tooSmall(needed: needed, capacity: cap) }
            throw .tooSmall(needed: message.count, capacity: capacity)
        }
        while area.count % 4 != 0 { area.append(0) }
        let pages = area.count / 4
        // Static lock bits (page 2, bytes 2-3) protect pages 3..15.
        let lock0 = head[10], lock1 = head[11]
        if formatted && lock0 & 0x08 != 0 { throw .readOnly }
        for p in 4 ..< min(16, 4 + pages) {
            let locked = p < 8 ? lock0 & (1 << UInt8(p)) != 0 : lock1 & (1 << UInt8(p - 8)) != 0
            if locked { throw .readOnly }
        }
        // Dynamic lock bits (NTAG21x) for pages from 16 on.
        if 4 + pages > 16, let dyn = kind.dynamicLockPage {
            let d = try io(page: dyn) { () throws(Type2IOError) in try t.read(page: dyn) }
            let bits = UInt16(d[0]) | UInt16(d[1]) << 8
            let granularity = kind == .ntag213 ? 2 : 16
            for p in 16 ..< 4 + pages where bits & (1 << UInt16((p - 16) / granularity)) != 0 {
                throw .readOnly
            }
        }
        if formatted {
            try io(page: 3) { () throws(Type2IOError) in try t.write(page: 3, cc.bytes) }
        }
        for i in 0 ..< pages {
            let p = 4 + i
            try io(page: p) { () throws(Type2IOError) in try t.write(page: p, Array(area[i * 4 ..< i * 4 + 4])) }
        }
        // Read back and compare.
        var back: [UInt8] = []
        while back.count < area.count {
            let p = 4 + back.count / 4
            if kind.supportsFastRead {
                let last = min(4 + pages - 1, p + Type2ContentReader.maxFastReadPages - 1)
                back += try io(page: p) { () throws(Type2IOError) in try t.fastRead(from: p, to: last) }
            } else {
                back += try io(page: p) { () throws(Type2IOError) in try t.read(page: p) }
            }
        }
        for i in 0 ..< pages where Array(back[i * 4 ..< i * 4 + 4]) != Array(area[i * 4 ..< i * 4 + 4]) {
            throw .verifyFailed(page: 4 + i)
        }
        return TagWriteResult(uid: uid, kind: kind, formatted: formatted, bytesWritten: area.count)
    }

    /// Makes the tag read-only: CC write access 0x0F, static lock bytes, NTAG dynamic lock bytes.
    /// Irreversible.
    static func lock(kind: TagKind, transport t: Type2Transport) throws(TagWriteError) {
        guard kind.isType2 else { throw .unsupportedTag(kind) }
        let head = try io(page: 0) { () throws(Type2IOError) in try t.read(page: 0) }
        guard let cc = try? Type2CapabilityContainer(bytes: head[12 ..< 16]) else { throw .notFormattable }
        var ro = cc
        ro.writeAccess = 0x0F
        try io(page: 3) { () throws(Type2IOError) in try t.write(page: 3, ro.bytes) }
        if let dyn = kind.dynamicLockPage {
            try io(page: dyn) { () throws(Type2IOError) in try t.write(page: dyn, [0xFF, 0xFF, 0xFF, 0x00]) }
        }
        try io(page: 2) { () throws(Type2IOError) in try t.write(page: 2, [head[8], head[9], 0xFF, 0xFF]) }
    }

    private static func io<T>(page: Int, _ body: () throws(Type2IOError) -> T) throws(TagWriteError) -> T {
        do {
            return try body()
        } catch {
            switch error {
            case .silent: throw .tagLifted(page: page)
            case .refused: throw .writeRefused(page: page)
            case .device(_, let text): throw .readerUnavailable(text)
            }
        }
    }
}

extension Type2IOError: CustomStringConvertible {
    var description: String {
        switch self {
        case .silent: "The tag stopped answering (removed from the reader?)."
        case .refused: "The tag refused the command (NAK)."
        case .device(let code, let text): "Reader error \(code): \(text)"
        }
    }
}
