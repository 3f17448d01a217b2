import CLibNFC
import Logging
import Synchronization

/// All NFC readers of the daemon: one `NFCReaderLoop` (thread) per reader, events merged
/// into one stream.
public final class NFCReaderService: Sendable {
    private struct Running {
        var loops: [NFCReaderLoop]
        var started = false
        var stopped = false
    }

    /// Merged events of all readers (finished after `stop()`).
    public let events: AsyncStream<ReaderEvent>
    private let continuation: AsyncStream<ReaderEvent>.Continuation
    private let running: Mutex<Running>
    private let logger: Logger

    /// The loops, one per configured reader.
    public var loops: [NFCReaderLoop] { running.withLock { $0.loops } }

    /// - Parameter readers: one configuration per reader; empty means one reader chosen by
    ///   libnfc (its configuration file, `LIBNFC_DEVICE`, or scan).
    public init(readers: [ReaderConfiguration], logger: Logger = Logger(label: "roombridge.nfc")) {
        let (stream, cont) = AsyncStream<ReaderEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        events = stream
        continuation = cont
        self.logger = logger
        running = Mutex(Running(loops: Self.configurations(readers).map {
            NFCReaderLoop(configuration: $0, logger: logger, sink: { cont.yield($0) })
        }))
    }

    private static func configurations(_ readers: [ReaderConfiguration]) -> [ReaderConfiguration] {
        readers.isEmpty ? [ReaderConfiguration()] : readers
    }

    /// Starts every reader thread.
    public func start() {
        for l in running.withLock({ $0.started = true; return $0.loops }) { l.start() }
    }

    /// Stops every reader (each within about 1 s) and finishes `events`.
    public func stop() async {
        let loops = running.withLock { $0.stopped = true; return $0.loops }
        await withTaskGroup(of: Void.self) { g in
            for l in loops { g.addTask { await l.stop() } }
        }
        continuation.finish()
    }

    /// Changes the set of readers while running (a configuration reload): readers no longer in
    /// `readers` are stopped and released, new ones are opened; readers in both keep running
    /// untouched. Readers are told apart by ID (connstring). Returns the IDs stopped and started.
    public func reconfigure(_ readers: [ReaderConfiguration]) async -> (started: [String], stopped: [String]) {
        let wanted = Self.configurations(readers)
        let (removed, added, start): ([NFCReaderLoop], [NFCReaderLoop], Bool) = running.withLock { r in
            guard !r.stopped else { return ([], [], false) }
            let ids = Set(wanted.map(\.readerID))
            let removed = r.loops.filter { !ids.contains($0.configuration.readerID) }
            let kept = r.loops.filter { ids.contains($0.configuration.readerID) }
            let keptIDs = Set(kept.map(\.configuration.readerID))
            let cont = continuation
            let added = wanted.filter { !keptIDs.contains($0.readerID) }.map {
                NFCReaderLoop(configuration: $0, logger: logger, sink: { cont.yield($0) })
            }
            r.loops = kept + added
            return (removed, added, r.started)
        }
        await withTaskGroup(of: Void.self) { g in
            for l in removed { g.addTask { await l.stop() } }
        }
        if start { for l in added { l.start() } }
        return (added.map(\.configuration.readerID), removed.map(\.configuration.readerID))
    }

    /// The loop for a reader ID (its connstring or `default`); the only loop when nil.
    public func loop(for reader: String?) -> NFCReaderLoop? {
        guard let reader else { return loops.count == 1 ? loops[0] : nil }
        return loops.first { $0.configuration.readerID == reader }
    }

    /// Writes an NDEF message on a reader; see `NFCReaderLoop.write`.
    public func write(ndefMessage: [UInt8], reader: String? = nil, expectedUID: [UInt8]? = nil,
                      timeout: Duration = .seconds(10)) async throws(TagWriteError) -> TagWriteResult {
        guard let l = loop(for: reader) else { throw .readerUnavailable("no reader \(reader ?? "(unspecified)")") }
        return try await l.write(ndefMessage: ndefMessage, expectedUID: expectedUID, timeout: timeout)
    }

    /// Locks the tag on a reader; see `NFCReaderLoop.lock`.
    public func lock(reader: String? = nil, expectedUID: [UInt8]? = nil,
                     timeout: Duration = .seconds(10)) async throws(TagWriteError) -> TagWriteResult {
        guard let l = loop(for: reader) else { throw .readerUnavailable("no reader \(reader ?? "(unspecified)")") }
        return try await l.lock(expectedUID: expectedUID, timeout: timeout)
    }

    /// Connstrings of the devices libnfc finds (configuration, `LIBNFC_DEVICE`, scan).
    /// Blocking (intrusive scans can take seconds): call it from a thread, not the async pool.
    public static func discoverDevices(max: Int = 8) -> [String] {
        var context: OpaquePointer?
        nfc_init(&context)
        guard let ctx = context else { return [] }
        defer { nfc_exit(ctx) }
        let size = MemoryLayout<nfc_connstring>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size * max, alignment: 1)
        defer { raw.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size * max)
        let list = raw.bindMemory(to: nfc_connstring.self, capacity: max)
        let n = nfc_list_devices(ctx, list, max)
        return (0 ..< n).map { i in
            let bytes = UnsafeRawBufferPointer(start: raw + i * size, count: size)
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
