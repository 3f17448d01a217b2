// libFuzzer target for the NDEF decoders; built by scripts/fuzz-ndef.sh together with
// Sources/NDEF/*.swift into one module (so no `import NDEF`).
//
// Checks: no crash/trap/hang on any input, and decode → encode → decode is the identity for
// every message the decoder accepts (plain and chunked).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNDEF(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    fuzzMessage(input)
    fuzzType2(input)
    _ = try? DeviceTagRecord(payload: input)
    _ = try? Type2CapabilityContainer(bytes: input)
    return 0
}

private func fuzzMessage(_ input: [UInt8]) {
    let options = NDEFDecodingOptions(maxRecordPayloadSize: 4096, maxRecords: 256)
    guard let message = try? NDEFMessage.decode(input, options: options) else { return }
    for record in message.records { _ = try? record.content() }
    _ = try? DeviceTag.identify(message)
    do {
        let again = try NDEFMessage.decode(message.encoded(), options: options)
        precondition(again == message, "plain round trip changed the message")
        let chunked = try NDEFMessage.decode(message.encoded(chunkSize: 7), options: options)
        precondition(chunked == message, "chunked round trip changed the message")
        // Writer side: the Type 2 image (and the tear-safe page writes) locate back to it.
        if let area = try? Type2TagImage.dataArea(for: message, capacity: Type2TLVScanner.maxDataAreaSize) {
            let located = try Type2TLVScanner.decodeMessage(in: area, dataAreaSize: Type2TLVScanner.maxDataAreaSize, options: options)
            precondition(located == message, "Type 2 image round trip changed the message")
            let writes = try Type2TagImage.writeSequence(for: message, capacity: Type2TLVScanner.maxDataAreaSize)
            precondition(writes.count == (area.count + 3) / 4 + 1, "unexpected number of page writes")
        }
    } catch {
        preconditionFailure("a decoded message failed to re-encode/decode: \(error)")
    }
}

private func fuzzType2(_ input: [UInt8]) {
    // First byte chooses the announced data area size; the rest is the data area.
    guard let first = input.first else { return }
    let dataArea = Array(input.dropFirst())
    let size = Int(first) * 8
    guard let full = try? Type2TLVScanner.locate(in: dataArea, dataAreaSize: size) else { return }
    // Incremental scanning must agree with scanning everything at once.
    var available = 0
    var steps = 0
    while true {
        steps += 1
        precondition(steps <= size + 2, "locator did not make progress")
        let partial: Type2Locate
        do {
            partial = try Type2TLVScanner.locate(in: Array(dataArea.prefix(available)), dataAreaSize: size)
        } catch {
            preconditionFailure("partial scan failed where the full scan succeeded: \(error)")
        }
        guard case let .needMore(total) = partial else {
            precondition(partial == full, "incremental and full scans disagree")
            break
        }
        precondition(total > available && total <= size, "needMore(\(total)) is not progress within the data area")
        if total > dataArea.count {
            if case .needMore = full {} else { preconditionFailure("full scan finished but partial needs more") }
            break
        }
        available = total
    }
    if case let .ndef(range) = full, let message = try? NDEFMessage.decode(Array(dataArea[range])) {
        _ = try? DeviceTag.identify(message)
    }
}
