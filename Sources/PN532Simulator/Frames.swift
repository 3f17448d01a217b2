// PN532 host-link framing (PN532 User Manual §6.2): normal and extended information frames,
// ACK / NACK frames and the syntax-error frame. Pure byte handling, no I/O.

/// One unit received from the host on the HSU link.
public enum PN532HostFrame: Equatable, Sendable {
    /// `00 00 FF 00 FF 00`: from the host this aborts the command in progress.
    case ack
    /// `00 00 FF FF 00 00`: the host asks for the last response again.
    case nack
    /// An information frame with TFI `D4`; `data` starts with the command code.
    case command([UInt8])
}

/// Incremental parser for bytes sent by the host. Wake-up bytes (`0x55`), zero padding and
/// garbage between frames are skipped, as the chip does.
public struct PN532FrameParser: Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// Appends received bytes and returns every complete frame found.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [PN532HostFrame] {
        buffer.append(contentsOf: bytes)
        var frames: [PN532HostFrame] = []
        while true {
            // Find the start code 00 FF.
            guard let start = findStartCode() else {
                // Keep a trailing 0x00 that could begin a start code.
                if let last = buffer.last, last == 0x00 { buffer = [0x00] } else { buffer.removeAll() }
                return frames
            }
            if start > 0 { buffer.removeFirst(start) }
            // buffer[0] = 00, buffer[1] = FF
            guard buffer.count >= 4 else { return frames }
            let b2 = buffer[2], b3 = buffer[3]
            if b2 == 0x00 && b3 == 0xFF {           // ACK: 00 FF 00 FF (postamble 00 optional)
                buffer.removeFirst(4)
                frames.append(.ack)
                continue
            }
            if b2 == 0xFF && b3 == 0x00 {           // NACK: 00 FF FF 00
                buffer.removeFirst(4)
                frames.append(.nack)
                continue
            }
            var len: Int
            var headerEnd: Int
            if b2 == 0xFF && b3 == 0xFF {           // extended frame: FF FF LENm LENl LCS
                guard buffer.count >= 7 else { return frames }
                let lenM = buffer[4], lenL = buffer[5], lcs = buffer[6]
                guard (Int(lenM) + Int(lenL) + Int(lcs)) & 0xFF == 0 else {
                    buffer.removeFirst(2); continue   // bad length checksum: resynchronise
                }
                len = Int(lenM) << 8 | Int(lenL)
                headerEnd = 7
            } else {
                guard (Int(b2) + Int(b3)) & 0xFF == 0 else { buffer.removeFirst(2); continue }
                len = Int(b2)
                headerEnd = 4
            }
            guard len >= 1 else { buffer.removeFirst(headerEnd); continue }
            // TFI + data (len bytes) + DCS
            guard buffer.count >= headerEnd + len + 1 else { return frames }
            let body = Array(buffer[headerEnd ..< headerEnd + len])
            let dcs = buffer[headerEnd + len]
            buffer.removeFirst(headerEnd + len + 1)
            let sum = body.reduce(0) { ($0 + Int($1)) & 0xFF }
            guard (sum + Int(dcs)) & 0xFF == 0, body[0] == 0xD4, body.count >= 2 else { continue }
            frames.append(.command(Array(body.dropFirst())))
        }
    }

    private func findStartCode() -> Int? {
        guard buffer.count >= 2 else { return nil }
        for i in 0 ..< buffer.count - 1 where buffer[i] == 0x00 && buffer[i + 1] == 0xFF {
            return i
        }
        return nil
    }
}

/// Frames sent by the simulated chip.
public enum PN532Frames {
    /// ACK frame.
    public static let ack: [UInt8] = [0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00]
    /// Application-level error frame (syntax error in the host's command).
    public static let error: [UInt8] = [0x00, 0x00, 0xFF, 0x01, 0xFF, 0x7F, 0x81, 0x00]

    /// Builds a response information frame (TFI `D5`); `data` starts with the response code.
    /// Uses the extended format when more than 254 bytes follow the TFI.
    public static func response(_ data: [UInt8]) -> [UInt8] {
        let body: [UInt8] = [0xD5] + data
        var frame: [UInt8] = [0x00, 0x00, 0xFF]
        if body.count <= 255 {
            frame += [UInt8(body.count), UInt8((256 - body.count) & 0xFF)]
        } else {
            let m = UInt8(body.count >> 8), l = UInt8(body.count & 0xFF)
            frame += [0xFF, 0xFF, m, l, UInt8((256 - (Int(m) + Int(l))) & 0xFF)]
        }
        frame += body
        let sum = body.reduce(0) { ($0 + Int($1)) & 0xFF }
        frame += [UInt8((256 - sum) & 0xFF), 0x00]
        return frame
    }
}

/// ISO/IEC 14443-3 type A CRC (CRC_A), low byte first, as appended on the air.
public func iso14443aCRC(_ data: some Sequence<UInt8>) -> [UInt8] {
    var crc: UInt32 = 0x6363
    for byte in data {
        var bt = byte ^ UInt8(crc & 0xFF)
        bt ^= bt << 4
        let b = UInt32(bt)
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    }
    return [UInt8(crc & 0xFF), UInt8((crc >> 8) & 0xFF)]
}
