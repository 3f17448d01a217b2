import CLibNFC
import CShims
import Foundation
import Logging
import NDEF
import Synchronization

/// Configuration of one reader loop.
public struct ReaderConfiguration: Sendable, Hashable {
    /// libnfc connstring (`pn532_uart:/dev/ttyUSB0`, `pn53x_usb:`, `acr122_usb:`); nil uses
    /// libnfc's own configuration / scan (`nfc_open(context, NULL)`).
    public var connstring: String?
    /// Modulations polled, in order.
    public var modulations: [PollModulation]
    /// Pause between presence checks while a tag rests on the reader. A lift is reported within
    /// this pause plus one failed check (`tagResponseTimeout` and the UART bytes of a READ).
    public var presenceCheckInterval: Duration
    /// How long the PN53x waits for a tag's answer before it reports a timeout: libnfc's
    /// NP_TIMEOUT_COM, sent as RFConfiguration item 0x02 (fRetryTimeout, 100 µs × 2^(n-1); 13 ms
    /// becomes 12.8 ms — libnfc/chips/pn53x.c `pn53x_set_property_int`, `pn53x_int_to_timeout`).
    /// Left alone, the chip waits 51.2 ms, and every presence check of a lifted tag costs that
    /// (`pn53x_ISO14443A_MFUL_is_present` READs page 0 and reports the timeout as the tag gone).
    /// NTAG21x answer a READ within about 1 ms and a WRITE within about 5 ms.
    public var tagResponseTimeout: Duration
    /// InAutoPoll period in units of 150 ms (PN532), and polls per libnfc call.
    public var pollPeriod: UInt8
    public var pollCount: UInt8
    /// First and maximum delay between reopen attempts after a failure.
    public var reconnectDelay: Duration
    public var maxReconnectDelay: Duration

    public init(connstring: String? = nil,
                modulations: [PollModulation] = [.iso14443a, .felica212],
                presenceCheckInterval: Duration = .milliseconds(50), tagResponseTimeout: Duration = .milliseconds(13),
                pollPeriod: UInt8 = 1, pollCount: UInt8 = 4,
                reconnectDelay: Duration = .milliseconds(100), maxReconnectDelay: Duration = .seconds(1)) {
        self.connstring = connstring; self.modulations = modulations
        self.presenceCheckInterval = presenceCheckInterval
        self.tagResponseTimeout = tagResponseTimeout
        self.pollPeriod = pollPeriod; self.pollCount = pollCount
        self.reconnectDelay = reconnectDelay; self.maxReconnectDelay = maxReconnectDelay
    }

    /// Identifier used in events.
    public var readerID: String { connstring ?? "default" }
}

/// One NFC reader driven through libnfc on a dedicated, named thread. Blocking libnfc calls
/// never run on the Swift concurrency pool; events reach async code through `events`.
///
/// A tag produces one `tagArrived` per physical tap: while it rests on the reader the loop
/// only runs libnfc's presence check (`nfc_initiator_target_is_present`, a READ of page 0 for
/// Type 2 tags) every `presenceCheckInterval`, and reports `tagRemoved` when it fails.
///
/// Unchecked Sendable: its mutable state is guarded by `cond`, which the compiler cannot check.
public final class NFCReaderLoop: @unchecked Sendable {
    public let configuration: ReaderConfiguration
    /// Events of this loop (finished after `stop()`).
    public let events: AsyncStream<ReaderEvent>
    private let continuation: AsyncStream<ReaderEvent>.Continuation
    private let sink: @Sendable (ReaderEvent) -> Void
    private let logger: Logger

    /// The reader thread sleeps between polls in `pause(_:wakeOnJobs:)` with a deadline and must wake at
    /// once on stop or on a queued write: a condition variable on the dedicated libnfc thread (never on
    /// the cooperative pool), the one place a lock alone (`Mutex`) does not do.
    private let cond = NSCondition()
    private var stopRequested = false
    private var started = false
    private var exited = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []
    private var device: OpaquePointer?        // guarded by cond; used for nfc_abort_command
    private var jobs: [WriteJob] = []

    /// Creates a loop; call `start()` to open the reader.
    public convenience init(configuration: ReaderConfiguration, logger: Logger = Logger(label: "roombridge.nfc")) {
        self.init(configuration: configuration, logger: logger, sink: nil)
    }

    init(configuration: ReaderConfiguration, logger: Logger, sink: (@Sendable (ReaderEvent) -> Void)?) {
        self.configuration = configuration
        var l = logger
        l[metadataKey: "reader"] = .string(configuration.readerID)
        self.logger = l
        let (stream, cont) = AsyncStream<ReaderEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        events = stream
        continuation = cont
        if let sink {
            self.sink = { sink($0); cont.yield($0) }
        } else {
            self.sink = { cont.yield($0) }
        }
    }

    /// Starts the reader thread (idempotent).
    public func start() {
        cond.lock()
        defer { cond.unlock() }
        guard !started else { return }
        started = true
        let t = Thread { [self] in self.run() }
        t.name = "nfc-reader"
        t.stackSize = 1 << 20
        t.start()
    }

    /// Stops the loop: aborts a blocked libnfc call (`nfc_abort_command`), closes the device
    /// and releases libnfc. Returns when the thread has finished (normally well within 1 s).
    public func stop() async {
        guard requestStop() else { continuation.finish(); return }
        abortBlockedCall()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            cond.lock()
            if exited { cond.unlock(); c.resume(); return }
            exitWaiters.append(c)
            cond.unlock()
            // The abort is lost if it lands between two libnfc calls: repeat until the thread is gone.
            repeatAbort()
        }
    }

    /// Flags the stop; false when the thread is not running.
    private func requestStop() -> Bool {
        cond.lock()
        defer { cond.unlock() }
        if !started || exited { return false }
        stopRequested = true
        cond.broadcast()
        return true
    }

    private func repeatAbort() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            cond.lock(); let done = exited; cond.unlock()
            if done { return }
            abortBlockedCall()
            repeatAbort()
        }
    }

    private func abortBlockedCall() {
        cond.lock()
        if let d = device { _ = nfc_abort_command(d) }
        cond.unlock()
    }

    // MARK: - Writing

    /// Writes an NDEF message (encoded bytes) to the Type 2 tag on the reader — the one
    /// resting there, or the next one presented within `timeout` — then reads it back and
    /// compares. A factory-blank NTAG21x is formatted first.
    ///
    /// - Parameter expectedUID: refuse any other tag (`.wrongTag`).
    public func write(ndefMessage: [UInt8], expectedUID: [UInt8]? = nil, timeout: Duration = .seconds(10)) async throws(TagWriteError) -> TagWriteResult {
        try await submit(.write(ndefMessage), expectedUID: expectedUID, timeout: timeout)
    }

    /// Makes the tag read-only (CC write access 0x0F and lock bits). Irreversible.
    public func lock(expectedUID: [UInt8]? = nil, timeout: Duration = .seconds(10)) async throws(TagWriteError) -> TagWriteResult {
        try await submit(.lock, expectedUID: expectedUID, timeout: timeout)
    }

    private func submit(_ op: WriteJob.Operation, expectedUID: [UInt8]?, timeout: Duration) async throws(TagWriteError) -> TagWriteResult {
        let result: Result<TagWriteResult, TagWriteError> = await withCheckedContinuation { c in
            let job = WriteJob(operation: op, expectedUID: expectedUID) { c.resume(returning: $0) }
            cond.lock()
            if stopRequested || !started {
                cond.unlock()
                job.finish(.failure(.readerUnavailable("reader loop not running")))
                return
            }
            jobs.append(job)
            cond.broadcast()
            cond.unlock()
            let ns = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(ns))) { [self] in
                cond.lock()
                let waiting = jobs.contains { $0 === job }
                if waiting { jobs.removeAll { $0 === job } }
                cond.unlock()
                if waiting { job.finish(.failure(.noTag)) }
            }
        }
        return try result.get()
    }

    // MARK: - Thread

    private var shouldStop: Bool { cond.lock(); defer { cond.unlock() }; return stopRequested }

    private func emit(_ e: ReaderEvent) {
        logger.debug("event \(e)")
        sink(e)
    }

    /// Sleeps up to `d`, returning early on stop or when a write job is queued.
    private func pause(_ d: Duration, wakeOnJobs: Bool) {
        let until = Date().addingTimeInterval(Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
        cond.lock()
        while !stopRequested && !(wakeOnJobs && !jobs.isEmpty) {
            if !cond.wait(until: until) { break }
        }
        cond.unlock()
    }

    private func run() {
        _ = rb_set_thread_name("nfc-reader")
        var context: OpaquePointer?
        nfc_init(&context)
        if let ctx = context {
            loop(ctx)
            nfc_exit(ctx)
        } else {
            emit(.disconnected(reader: configuration.readerID, reason: "libnfc could not be initialised (out of memory?)"))
        }
        cond.lock()
        let pending = jobs
        jobs.removeAll()
        exited = true
        let waiters = exitWaiters
        exitWaiters.removeAll()
        cond.unlock()
        for j in pending { j.finish(.failure(.readerUnavailable("reader stopped"))) }
        continuation.finish()
        for w in waiters { w.resume() }
        logger.debug("reader thread finished")
    }

    private func loop(_ ctx: OpaquePointer) {
        var delay = configuration.reconnectDelay
        var down = false
        let id = configuration.readerID
        while !shouldStop {
            let dev: OpaquePointer? = configuration.connstring.map { nfc_open(ctx, $0) } ?? nfc_open(ctx, nil)
            guard let dev else {
                if !down {
                    emit(.disconnected(reader: id, reason: "Cannot open NFC device \(configuration.connstring ?? "(libnfc default)"): not found or not accessible. Check that the reader is plugged in and the path and permissions are right."))
                    down = true
                }
                pause(delay, wakeOnJobs: false)
                delay = min(delay * 2, configuration.maxReconnectDelay)
                continue
            }
            cond.lock(); device = dev; let stopping = stopRequested; cond.unlock()
            var failure: String?
            if stopping {
                failure = nil
            } else if nfc_initiator_init(dev) < 0 {
                failure = LibNFC.strerror(dev)
            } else {
                _ = nfc_device_set_property_bool(dev, NP_INFINITE_SELECT, false)
                let timeout = configuration.tagResponseTimeout.components
                _ = nfc_device_set_property_int(dev, NP_TIMEOUT_COM,
                                                Int32(timeout.seconds * 1000 + timeout.attoseconds / 1_000_000_000_000_000))
                let name = nfc_device_get_name(dev).map { String(cString: $0) } ?? id
                emit(.connected(reader: id, name: name))
                logger.info("NFC reader connected: \(name)")
                down = false
                delay = configuration.reconnectDelay
                failure = session(dev)
            }
            cond.lock(); device = nil; cond.unlock()
            nfc_close(dev)
            if let failure {
                logger.warning("NFC reader failed: \(failure)")
                emit(.disconnected(reader: id, reason: failure))
                down = true
                pause(delay, wakeOnJobs: false)
            }
        }
    }

    /// Polls and follows tags until the device fails (returns libnfc's error text) or stop (nil).
    private func session(_ dev: OpaquePointer) -> String? {
        let mods = configuration.modulations.map(LibNFC.modulation)
        while !shouldStop {
            var target = nfc_target()
            let res = mods.withUnsafeBufferPointer {
                nfc_initiator_poll_target(dev, $0.baseAddress, mods.count, configuration.pollCount, configuration.pollPeriod, &target)
            }
            if shouldStop { return nil }
            if res < 0 {
                if res == NFC_EOPABORTED { continue }
                if LibNFC.isDeviceError(res) { return LibNFC.strerror(dev) }
                logger.debug("poll: \(LibNFC.strerror(dev))")
                continue
            }
            if res == 0 { continue }
            if let failure = follow(dev, target) { return failure }
        }
        return nil
    }

    /// Reads a newly arrived tag, runs queued writes, and waits for its removal.
    private func follow(_ dev: OpaquePointer, _ target: nfc_target) -> String? {
        let id = configuration.readerID
        let clock = ContinuousClock()
        let start = clock.now
        var tag: TagArrival
        do {
            tag = try identifyAndRead(dev, target)
        } catch {
            if case .device(_, let text) = error { return text }
            return nil
        }
        tag.readDuration = clock.now - start
        emit(.tagArrived(tag))
        if case .unreadable(let reason) = tag.ndef {
            emit(.tagReadFailed(reader: id, uid: tag.uid, reason: reason))
        }
        while true {
            if let failure = runJobs(dev, tag) { return failure }
            pause(configuration.presenceCheckInterval, wakeOnJobs: true)
            if shouldStop { return nil }
            cond.lock(); let hasJobs = !jobs.isEmpty; cond.unlock()
            if hasJobs { continue }
            var r = nfc_initiator_target_is_present(dev, nil)
            if r == NFC_EDEVNOTSUPP, case .iso14443a = tag.technology {
                r = LibNFC.reselect(dev, uid: tag.uid) ? 0 : NFC_ETGRELEASED
            }
            if r == 0 { continue }
            if r == NFC_EOPABORTED { if shouldStop { return nil } else { continue } }
            if LibNFC.isDeviceError(r) { return LibNFC.strerror(dev) }
            emit(.tagRemoved(reader: id, uid: tag.uid))
            return nil
        }
    }

    private func identifyAndRead(_ dev: OpaquePointer, _ target: nfc_target) throws(Type2IOError) -> TagArrival {
        let id = configuration.readerID
        if target.nm.nmt == NMT_FELICA {
            let f = target.nti.nfi
            let idm = LibNFC.bytes(f.abtId, count: 8)
            let sc: [UInt8]? = f.szLen > 18 ? LibNFC.bytes(f.abtSysCode, count: 2) : nil
            return TagArrival(reader: id, uid: idm,
                              technology: .felica(idm: idm, pmm: LibNFC.bytes(f.abtPad, count: 8), systemCode: sc),
                              kind: .felica, capabilityContainer: nil, ndef: .notApplicable, readDuration: .zero)
        }
        let a = target.nti.nai
        let uid = LibNFC.bytes(a.abtUid, count: min(Int(a.szUidLen), 10))
        let atqa = LibNFC.bytes(a.abtAtqa, count: 2)
        var arrival = TagArrival(reader: id, uid: uid, technology: .iso14443a(atqa: atqa, sak: a.btSak),
                                 kind: .iso14443a, capabilityContainer: nil, ndef: .notApplicable, readDuration: .zero)
        // Type 2 tags answer ATQA 00 44 / SAK 00 (the test libnfc itself uses for MIFARE Ultralight).
        guard atqa == [0x00, 0x44], a.btSak == 0x00 else { return arrival }
        let version = LibNFC.getVersion(dev)
        arrival.kind = version.map(TagKind.fromVersion) ?? .ultralight
        if version == nil { LibNFC.reselect(dev, uid: uid) }
        do {
            let (cc, content, kind) = try Type2ContentReader.read(LibNFCType2Transport(dev: dev), kind: arrival.kind)
            arrival.capabilityContainer = cc
            arrival.ndef = content
            arrival.kind = kind
        } catch {
            if case .device = error { throw error }
            arrival.ndef = .unreadable(error.description)
        }
        if case .unreadable = arrival.ndef { LibNFC.reselect(dev, uid: uid) }
        return arrival
    }

    private func runJobs(_ dev: OpaquePointer, _ tag: TagArrival) -> String? {
        while true {
            cond.lock()
            guard !stopRequested, !jobs.isEmpty else { cond.unlock(); return nil }
            let job = jobs.removeFirst()
            cond.unlock()
            let result: Result<TagWriteResult, TagWriteError>
            if let expected = job.expectedUID, expected != tag.uid {
                result = .failure(.wrongTag(found: tag.uid))
            } else {
                let t = LibNFCType2Transport(dev: dev)
                do throws(TagWriteError) {
                    switch job.operation {
                    case .write(let message):
                        result = .success(try Type2Writer.write(message: message, kind: tag.kind, uid: tag.uid, transport: t))
                    case .lock:
                        try Type2Writer.lock(kind: tag.kind, transport: t)
                        result = .success(TagWriteResult(uid: tag.uid, kind: tag.kind, formatted: false, bytesWritten: 0))
                    }
                } catch {
                    result = .failure(error)
                }
            }
            job.finish(result)
            if case .failure(let e) = result {
                if case .readerUnavailable(let text) = e { return text }
                // A NAK or silence leaves the tag IDLE: select it again for the presence check.
                LibNFC.reselect(dev, uid: tag.uid)
            }
        }
    }
}

/// A queued write or lock request.
final class WriteJob: Sendable {
    enum Operation: Sendable { case write([UInt8]), lock }
    typealias Completion = @Sendable (Result<TagWriteResult, TagWriteError>) -> Void
    let operation: Operation
    let expectedUID: [UInt8]?
    private let completion: Mutex<Completion?>

    init(operation: Operation, expectedUID: [UInt8]?, completion: @escaping Completion) {
        self.operation = operation
        self.expectedUID = expectedUID
        self.completion = Mutex(completion)
    }

    /// Completes the request once; later calls are ignored.
    func finish(_ r: Result<TagWriteResult, TagWriteError>) {
        let c = completion.withLock { c in
            defer { c = nil }
            return c
        }
        c?(r)
    }
}
