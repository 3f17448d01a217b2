#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Lending
import Logging
import NDEF
import NFCReader
import RoomBridgeAPI
import RoomBridgeCore
import RoomBridgeInterfaces

/// Registers device tags (device-tag.md): a client arms it with `Tags.Write`; the next Type 2
/// tag tapped gets the device record, is read back and compared (by the reader loop), optionally
/// locked, and only then is its UID bound and the device marked NFC registered.
actor TagRegistrar: TagRegistering {
    private struct Pending {
        let number: UInt64
        let request: TagWriteRequest
        let message: [UInt8]
        let continuation: CheckedContinuation<Result<TagWriteReport, TagRegistrationError>, Never>
        let timeout: Task<Void, Never>
    }

    private let nfc: NFCReaderService
    private let store: any InventoryStore
    private let state: SystemState
    private let logger: Logger
    private var pending: Pending?
    private var writing = false
    private var requests: UInt64 = 0

    init(nfc: NFCReaderService, store: any InventoryStore, state: SystemState, logger: Logger) {
        self.nfc = nfc
        self.store = store
        self.state = state
        self.logger = logger
    }

    func register(_ request: TagWriteRequest) async throws(TagRegistrationError) -> TagWriteReport {
        let id = request.deviceId
        guard pending == nil, !writing else {
            throw TagRegistrationError(.writeInProgress, deviceId: id,
                                       "another tag write is waiting for a tag; finish it or cancel it (roombridgectl tag cancel)")
        }
        let record: DeviceRecord?
        do { record = try await store.device(id: id) } catch {
            throw TagRegistrationError(.noSuchDevice, deviceId: id, "the inventory could not be read: \(error)")
        }
        guard let device = record?.device else {
            throw TagRegistrationError(.noSuchDevice, deviceId: id, "no device \(id); add it first: roombridgectl devices add")
        }
        let message: [UInt8]
        do {
            message = try DeviceTagRecord(deviceId: device.id, model: device.model,
                                          serial: device.serialNumber.isEmpty ? nil : device.serialNumber)
                .message(uri: request.uri).encoded()
        } catch {
            throw TagRegistrationError(.messageTooLarge, deviceId: id, "the device record cannot be encoded: \(error); shorten the model, serial or URI")
        }
        guard pending == nil, !writing else {
            throw TagRegistrationError(.writeInProgress, deviceId: id, "another tag write started meanwhile; try again")
        }
        let lock = request.lock ?? false
        await state.updateTagWrite(TagWriteStatus(deviceId: id, phase: .armed, lock: lock,
                                                  message: "place a writable tag (NTAG213/215/216) on the reader", at: Date()))
        let seconds = max(1, request.timeoutSeconds ?? 60)
        // The caller going away (client hang-up, roombridged stopping) cancels the request; the
        // handler runs after the continuation below is stored (both on this actor).
        let cancelled = TagRegistrationError(.cancelled, deviceId: id, "the request ended (client gone or roombridged stopping)")
        requests += 1
        let number = requests
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<TagWriteReport, TagRegistrationError>, Never>) in
                let timeout = Task { [weak self] in
                    try? await Task.sleep(for: .seconds(seconds))
                    guard !Task.isCancelled else { return }
                    await self?.finishPending(number, .failure(TagRegistrationError(
                        .timeout, deviceId: id, "no tag was presented within \(seconds) s; run the command again and hold the tag on the reader")))
                }
                pending = Pending(number: number, request: request, message: message, continuation: c, timeout: timeout)
            }
        } onCancel: {
            Task { await self.finishPending(number, .failure(cancelled)) }
        }
        return try result.get()
    }

    /// Fails a registration still waiting for a tag (a write already under way finishes on its own).
    func failPending(_ reason: TagRegistrationError.Reason, _ message: String) async {
        guard let p = pending else { return }
        await finishPending(p.number, .failure(TagRegistrationError(reason, deviceId: p.request.deviceId, message)))
    }

    func cancel() async -> Bool {
        guard let p = pending else { return false }
        await finishPending(p.number, .failure(TagRegistrationError(.cancelled, deviceId: p.request.deviceId, "the write was cancelled")))
        return true
    }

    /// Ends pending request `number` (timeout or cancel) if no tag claimed it yet.
    private func finishPending(_ number: UInt64, _ result: Result<TagWriteReport, TagRegistrationError>) async {
        guard let p = pending, p.number == number else { return }
        pending = nil
        p.timeout.cancel()
        await publish(p.request, result)
        p.continuation.resume(returning: result)
    }

    /// Takes the tap when a registration is waiting and the tag is a Type 2 tag; returns false
    /// otherwise (the tap then goes to lending as usual).
    func claim(_ tap: Tap, arrival: TagArrival) async -> Bool {
        guard let p = pending else { return false }
        guard arrival.kind.isType2 else { return false }
        pending = nil
        p.timeout.cancel()
        writing = true
        let result = await perform(p.request, message: p.message, tap: tap, arrival: arrival)
        writing = false
        await publish(p.request, result)
        p.continuation.resume(returning: result)
        return true
    }

    private func perform(_ r: TagWriteRequest, message: [UInt8], tap: Tap, arrival: TagArrival) async
        -> Result<TagWriteReport, TagRegistrationError>
    {
        let id = r.deviceId
        let force = r.force ?? false
        // 1. Refuse a tag that belongs to something else before writing anything.
        let binding: UIDBinding?
        do { binding = try await store.resolve(uid: tap.uid) } catch {
            return .failure(TagRegistrationError(.readerUnavailable, deviceId: id, "the inventory could not be read: \(error)"))
        }
        switch binding {
        case .badge(_, let user):
            return .failure(TagRegistrationError(.alreadyBound, deviceId: id,
                                                 "tag \(tap.uid) is the badge of \(user.name) (\(user.id)); use another tag"))
        case .device(let other) where other.device.id != id && !force:
            return .failure(TagRegistrationError(.alreadyBound, deviceId: id,
                                                 "tag \(tap.uid) is bound to device \(other.device.id); use another tag, or --force to re-register it for \(id)"))
        default:
            break
        }
        if let onTag = tap.device?.deviceId, onTag != id, !force {
            return .failure(TagRegistrationError(.alreadyBound, deviceId: id,
                                                 "tag \(tap.uid) carries device \(onTag); use another tag, or --force to overwrite it"))
        }
        // 2. Write, read back and compare (inside the reader loop), then lock if asked.
        let written: TagWriteResult
        do {
            written = try await nfc.write(ndefMessage: message, reader: arrival.reader, expectedUID: arrival.uid, timeout: .seconds(5))
        } catch {
            return .failure(Self.failure(error, deviceId: id))
        }
        var locked = false
        if r.lock ?? false {
            do {
                _ = try await nfc.lock(reader: arrival.reader, expectedUID: arrival.uid, timeout: .seconds(5))
                locked = true
            } catch {
                return .failure(Self.failure(error, deviceId: id))
            }
        }
        // 3. Only now: bind the UID and mark the device NFC registered (one transaction).
        do {
            if case .device = binding { try await store.unbindTag(uid: tap.uid) }
            try await store.registerTag(uid: tap.uid, deviceId: id, at: Date())
        } catch {
            return .failure(TagRegistrationError(.readerUnavailable, deviceId: id,
                                                 "the tag was written but binding it failed: \(error); run the write again"))
        }
        logger.notice("registered tag \(tap.uid) for device \(id)\(locked ? " (locked)" : "")")
        return .success(TagWriteReport(uid: tap.uid, tagType: tap.tagType, formatted: written.formatted, locked: locked))
    }

    private func publish(_ r: TagWriteRequest, _ result: Result<TagWriteReport, TagRegistrationError>) async {
        switch result {
        case .success(let report):
            await state.updateTagWrite(TagWriteStatus(deviceId: r.deviceId, phase: .done, lock: report.locked, uid: report.uid,
                                                      message: "tag \(report.uid) registered for \(r.deviceId)", at: Date()))
        case .failure(let e):
            await state.updateTagWrite(TagWriteStatus(deviceId: r.deviceId, phase: e.reason == .cancelled ? .cancelled : .failed,
                                                      lock: r.lock ?? false, message: e.message, at: Date()))
        }
    }

    static func failure(_ error: TagWriteError, deviceId: String) -> TagRegistrationError {
        let reason: TagRegistrationError.Reason
        switch error {
        case .noTag: reason = .noTag
        case .wrongTag: reason = .wrongTag
        case .unsupportedTag: reason = .unsupportedTag
        case .readOnly: reason = .readOnly
        case .tooSmall: reason = .tooSmall
        case .notFormattable: reason = .notFormattable
        case .tagLifted: reason = .tagLifted
        case .writeRefused: reason = .writeRefused
        case .verifyFailed: reason = .verifyFailed
        case .readerUnavailable: reason = .readerUnavailable
        }
        return TagRegistrationError(reason, deviceId: deviceId, error.description)
    }
}

/// Sends a tap to a waiting tag registration first, else to lending.
struct TapRouter: TapHandler {
    let registrar: TagRegistrar
    let lending: LendingTapHandler

    func handle(_ tap: Tap, arrival: TagArrival) async {
        if await registrar.claim(tap, arrival: arrival) { return }
        await lending.handle(tap, arrival: arrival)
    }

    func readersUnavailable(_ reason: TagRegistrationError.Reason, _ message: String) async {
        await registrar.failPending(reason, message)
    }
}
