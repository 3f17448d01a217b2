/// The framing of a Varlink byte stream failed.
public enum VarlinkFrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// More than `maxMessageSize` bytes arrived without a terminating NUL byte.
    case messageTooLarge(maxMessageSize: Int)

    public var description: String {
        switch self {
        case .messageTooLarge(let max):
            return "Varlink message larger than \(max) bytes (no NUL terminator within the limit)"
        }
    }
}

/// Splits a Varlink byte stream into messages: each message is a JSON text terminated by a NUL
/// byte. Feed bytes with ``append(_:)`` as they arrive (any split: byte-at-a-time, several
/// messages per read, one message across many reads) and drain complete messages with
/// ``nextMessage()``.
public struct VarlinkFrameDecoder: Sendable {
    /// The largest accepted message in bytes, excluding the NUL terminator.
    public let maxMessageSize: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Bytes before this index (from `readIndex`) are known not to contain a NUL.
    private var scanIndex = 0

    public init(maxMessageSize: Int = 65536) {
        // Invariant of the caller: socket.max_message_size is accepted only when positive (ConfigKeys.swift).
        precondition(maxMessageSize > 0)
        self.maxMessageSize = maxMessageSize
    }

    /// Number of bytes received but not yet returned as part of a message.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// `true` if part of a message has arrived but not its terminator.
    public var hasPartialMessage: Bool { bufferedByteCount > 0 }

    /// Appends received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if readIndex > 0, readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
            scanIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete message (without its NUL; possibly empty), or `nil` if no
    /// complete message is buffered yet.
    /// - Throws: ``VarlinkFrameError/messageTooLarge(maxMessageSize:)`` once more than
    ///   `maxMessageSize` bytes of one message are buffered. The stream cannot be framed
    ///   reliably after that; close the connection.
    public mutating func nextMessage() throws(VarlinkFrameError) -> [UInt8]? {
        var i = max(scanIndex, readIndex)
        while i < buffer.count {
            if buffer[i] == 0 {
                if i - readIndex > maxMessageSize { throw .messageTooLarge(maxMessageSize: maxMessageSize) }
                let message = Array(buffer[readIndex..<i])
                readIndex = i + 1
                scanIndex = readIndex
                compactIfWorthIt()
                return message
            }
            i += 1
        }
        scanIndex = i
        if buffer.count - readIndex > maxMessageSize { throw .messageTooLarge(maxMessageSize: maxMessageSize) }
        return nil
    }

    private mutating func compactIfWorthIt() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 4 * maxMessageSize)
            readIndex = 0
            scanIndex = 0
        } else if readIndex > 4096, readIndex > buffer.count / 2 {
            buffer.removeFirst(readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
    }
}
