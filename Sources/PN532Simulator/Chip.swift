// Command interpreter of the simulated PN532 (PN532 User Manual UM0701-02 §7), driven by
// libnfc 1.8's pn53x/pn532_uart code paths (libnfc/chips/pn53x.c). Pure state machine: the
// I/O loop feeds it host commands and field changes and writes back what it returns.

/// What the chip does with a command after sending the ACK frame.
enum ChipOutcome {
    /// Send this response (response code first) after `delay` seconds.
    case response([UInt8], delay: Double)
    /// Send the syntax-error frame.
    case syntaxError
    /// Keep the command running: it completes through `PN532Chip.resolvePending`.
    case hold(deadline: Double?)
}

/// A command the chip is still working on (InListPassiveTarget with infinite retries,
/// InAutoPoll, or a response delayed by RF timing).
struct PendingCommand {
    var command: [UInt8]
    var deadline: Double?
    /// Precomputed response, sent at `deadline` (delayed responses).
    var response: [UInt8]?
}

/// PN532 register/RF/target state and command handling.
final class PN532Chip {
    /// Register file (XRAM/SFR addresses); unknown registers read as 0.
    private(set) var registers: [UInt16: UInt8] = [
        0x6302: 0x00, 0x6303: 0x00, 0x630D: 0x00, 0x633C: 0x10, 0x633D: 0x00, 0x6338: 0x00,
        0x6305: 0x00, 0x6301: 0x3F,
    ]
    /// The card in the field, if any.
    var card: SimulatedCard? {
        didSet { if !sameCard(oldValue, card) { active = false } }
    }
    /// Whether the card in the field is selected (ACTIVE state) as target 1.
    private(set) var active = false
    private(set) var rfOn = false
    private(set) var mxRtyPassiveActivation: UInt8 = 0xFF
    private var retryTimeoutCode: UInt8 = 0x0A
    private var maxRtyCOM: UInt8 = 0
    var realisticTiming = false
    var log: (String) -> Void = { _ in }

    /// Firmware answered to GetFirmwareVersion: PN532 v1.6, ISO14443A/B + ISO18092.
    static let firmware: [UInt8] = [0x32, 0x01, 0x06, 0x07]

    private func sameCard(_ a: SimulatedCard?, _ b: SimulatedCard?) -> Bool {
        switch (a, b) {
        case (.type2(let x), .type2(let y)): x.uid == y.uid
        case (.isoA(let x, _, _), .isoA(let y, _, _)): x == y
        case (.felica(let x, _), .felica(let y, _)): x.idm == y.idm
        default: false
        }
    }

    /// Time the chip waits for an absent PICC: RFConfiguration item 0x02 `fRetryTimeout`
    /// (100 µs × 2^(n-1)), times (MaxRtyCOM + 1).
    private var rfTimeout: Double {
        let n = Double(retryTimeoutCode == 0 ? 0 : 1 << Int(min(retryTimeoutCode, 16) - 1))
        return 0.0001 * n * Double(Int(maxRtyCOM == 0xFF ? 0 : maxRtyCOM) + 1)
    }

    private func rfTime(_ tx: Int, _ rx: Int) -> Double {
        realisticTiming ? 0.0005 + Double(tx + rx) * 0.000085 : 0
    }

    func register(_ address: UInt16) -> UInt8 { registers[address] ?? 0 }

    // MARK: - Commands

    func handle(_ cmd: [UInt8], now: Double) -> ChipOutcome {
        let code = cmd[0]
        let args = Array(cmd.dropFirst())
        switch code {
        case 0x00:   // Diagnose
            guard let test = args.first else { return .syntaxError }
            if test == 0x00 { return .response([0x01] + args, delay: 0) }
            if test == 0x06 { return .response([0x01, (card != nil && active) ? 0x00 : 0x01], delay: 0) }
            return .response([0x01, 0x00], delay: 0)
        case 0x02:   // GetFirmwareVersion
            return .response([0x03] + Self.firmware, delay: 0)
        case 0x04:   // GetGeneralStatus
            return .response([0x05, 0x00, rfOn ? 1 : 0, active ? 1 : 0] + (active ? [0x01, 0x00, 0x00, 0x00] : []) + [0x00], delay: 0)
        case 0x06:   // ReadRegister: list of 16-bit addresses
            guard args.count >= 2, args.count % 2 == 0 else { return .syntaxError }
            var out: [UInt8] = [0x07]
            for i in stride(from: 0, to: args.count, by: 2) {
                out.append(register(UInt16(args[i]) << 8 | UInt16(args[i + 1])))
            }
            return .response(out, delay: 0)
        case 0x08:   // WriteRegister: list of (address, value)
            guard args.count >= 3, args.count % 3 == 0 else { return .syntaxError }
            for i in stride(from: 0, to: args.count, by: 3) {
                registers[UInt16(args[i]) << 8 | UInt16(args[i + 1])] = args[i + 2]
            }
            return .response([0x09], delay: 0)
        case 0x0C: return .response([0x0D, 0xFF, 0xFF, 0x00], delay: 0)   // ReadGPIO
        case 0x0E: return .response([0x0F], delay: 0)                     // WriteGPIO
        case 0x10: return .response([0x11], delay: 0)                     // SetSerialBaudRate
        case 0x12: return .response([0x13], delay: 0)                     // SetParameters
        case 0x14: return .response([0x15], delay: 0)                     // SAMConfiguration
        case 0x16:   // PowerDown: RF off, targets released
            rfOn = false; active = false
            return .response([0x17, 0x00], delay: 0)
        case 0x32:   // RFConfiguration
            guard let item = args.first else { return .syntaxError }
            switch item {
            case 0x01:
                rfOn = (args.count > 1 && args[1] & 0x01 != 0)
                if !rfOn { active = false }     // the PICC loses power
            case 0x02 where args.count >= 4: retryTimeoutCode = args[3]
            case 0x04 where args.count >= 2: maxRtyCOM = args[1]
            case 0x05 where args.count >= 4: mxRtyPassiveActivation = args[3]
            default: break
            }
            return .response([0x33], delay: 0)
        case 0x4A:   // InListPassiveTarget MaxTg BrTy [InitiatorData]
            guard args.count >= 2 else { return .syntaxError }
            rfOn = true
            if let r = listPassive(args) { return .response(r, delay: rfTime(4, 20)) }
            if mxRtyPassiveActivation == 0xFF { return .hold(deadline: nil) }
            let tries = Double(Int(mxRtyPassiveActivation) + 1)
            return .response([0x4B, 0x00], delay: realisticTiming ? tries * 0.005 : 0)
        case 0x60:   // InAutoPoll PollNr Period Type1..TypeN
            guard args.count >= 3 else { return .syntaxError }
            rfOn = true
            if let r = autoPoll(args) { return .response(r, delay: rfTime(4, 20)) }
            let pollNr = args[0]
            if pollNr == 0xFF { return .hold(deadline: nil) }
            let duration = Double(pollNr) * Double(args[1]) * 0.150 * Double(args.count - 2)
            return .hold(deadline: now + duration)
        case 0x40:   // InDataExchange Tg Data
            guard args.count >= 1 else { return .syntaxError }
            return exchange(Array(args.dropFirst()), target: args[0], responseCode: 0x41, raw: false)
        case 0x42:   // InCommunicateThru Data
            return exchange(args, target: 1, responseCode: 0x43, raw: true)
        case 0x44:   // InDeselect
            active = false
            return .response([0x45, 0x00], delay: 0)
        case 0x52:   // InRelease
            active = false
            return .response([0x53, 0x00], delay: 0)
        case 0x54:   // InSelect
            return .response([0x55, (card != nil) ? 0x00 : 0x27], delay: 0)
        case 0x4E: return .response([0x4F, 0x00], delay: 0)               // InPSL
        case 0x46, 0x56, 0x50:                                          // InJumpForPSL/DEP, InATR: no DEP target
            return .response([code + 1, 0x01], delay: rfTimeout)
        default:
            log("unsupported command 0x\(hex([code]))")
            return .syntaxError
        }
    }

    /// Re-evaluates a held command after a field change or at its deadline; returns the
    /// response to send, or nil to keep waiting.
    func resolvePending(_ p: PendingCommand, now: Double) -> [UInt8]? {
        if let r = p.response { return now >= (p.deadline ?? 0) ? r : nil }
        let args = Array(p.command.dropFirst())
        switch p.command[0] {
        case 0x4A:
            return listPassive(args)
        case 0x60:
            if let r = autoPoll(args) { return r }
            if let d = p.deadline, now >= d { return [0x61, 0x00] }
            return nil
        default:
            return nil
        }
    }

    // MARK: - Activation

    /// ISO14443-A target data: Tg, SENS_RES (2), SEL_RES, NFCIDLength, NFCID1.
    private func isoATargetData(_ id: (atqa: [UInt8], sak: UInt8, uid: [UInt8])) -> [UInt8] {
        [0x01] + id.atqa + [id.sak, UInt8(id.uid.count)] + id.uid
    }

    /// Removes the cascade tags (0x88) libnfc's iso14443_cascade_uid inserts.
    private func uncascade(_ d: [UInt8]) -> [UInt8] {
        switch d.count {
        case 8 where d[0] == 0x88: Array(d[1...])
        case 12 where d[0] == 0x88 && d[4] == 0x88: Array(d[1 ..< 4]) + Array(d[5...])
        default: d
        }
    }

    private func listPassive(_ args: [UInt8]) -> [UInt8]? {
        let brTy = args[1]
        let initData = Array(args.dropFirst(2))
        guard let card else { return nil }
        switch brTy {
        case 0x00:
            guard let id = card.isoAIdentity else { return nil }
            if !initData.isEmpty && uncascade(initData) != id.uid { return nil }
            activateTypeA106()
            return [0x4B, 0x01] + isoATargetData(id)
        case 0x01, 0x02:
            guard case .felica(let c, let rates) = card, rates.contains(brTy == 0x01 ? 212 : 424),
                  let res = c.poll(initData.isEmpty ? [0x00, 0xFF, 0xFF, 0x00, 0x00] : initData) else { return nil }
            active = true
            return [0x4B, 0x01, 0x01, UInt8(res.count + 1)] + res
        default:
            return nil    // ISO14443-B, Jewel, …: no such card in the simulator
        }
    }

    /// Selects the type A card and leaves the CIU as the firmware's activation (SEL_REQ/SEL_RES
    /// are sent and received with CRC_A) leaves it: 106 kbps ISO/IEC 14443-A framing with
    /// TxCRCEn (CIU_TxMode 0x6302 bit 7) and RxCRCEn (CIU_RxMode 0x6303 bit 7) set; InvMod and
    /// RxNoErr/RxMultiple (bits 3 and 2) are kept.
    /// Clients depend on it:
    /// - nfcpy 1.0.4 nfc/clf/pn53x.py `Device.sense_tta` clears only RxMode bit 7 after
    ///   InListPassiveTarget ("disable crc check for type 2 tag"), `Device.send_cmd_recv_rsp`
    ///   rewrites only the speed/framing bits (masks 0b10001111, 0b11111100) and
    ///   `Device._tt2_send_cmd_recv_rsp` sends tag commands through InCommunicateThru without
    ///   appending CRC_A, then checks and strips the CRC_A of the answer itself: the transmit CRC
    ///   must be on after activation.
    /// - libnfc 1.8 libnfc/chips/pn53x.c `pn53x_set_property_bool` (NP_HANDLE_CRC) writes both
    ///   bits only when the request differs from its cached `pnd->bCrc`; `pn53x_reset_settings`
    ///   turns it on at init and never after a select (`pn53x_initiator_select_passive_target_ext`
    ///   writes no CIU mode register): libnfc assumes CRC stays on across InListPassiveTarget.
    ///   Its raw-mode users restore NP_HANDLE_CRC=true before selecting again
    ///   (utils/nfc-mfultralight.c `raw_mode_end`, `pn53x_ISO14443A_Barcode_is_present`), so
    ///   the chip setting and libnfc's cache agree.
    private func activateTypeA106() {
        registers[0x6302] = (register(0x6302) & 0x0C) | 0x80
        registers[0x6303] = (register(0x6303) & 0x0C) | 0x80
        active = true
    }

    private func autoPoll(_ args: [UInt8]) -> [UInt8]? {
        guard let card else { return nil }
        for type in args.dropFirst(2) {
            switch type {
            case 0x00, 0x10, 0x20:
                guard let id = card.isoAIdentity else { continue }
                if type == 0x20 && id.sak & 0x20 == 0 { continue }
                let td = isoATargetData(id)
                activateTypeA106()
                return [0x61, 0x01, type, UInt8(td.count)] + td
            case 0x01, 0x02, 0x11, 0x12:
                let rate = (type & 0x0F) == 0x01 ? 212 : 424
                guard case .felica(let c, let rates) = card, rates.contains(rate),
                      let res = c.poll([0x00, 0xFF, 0xFF, 0x00, 0x00]) else { continue }
                let td: [UInt8] = [0x01, UInt8(res.count + 1)] + res
                active = true
                return [0x61, 0x01, type, UInt8(td.count)] + td
            default:
                continue
            }
        }
        return nil
    }

    // MARK: - Data exchange

    private func exchange(_ data: [UInt8], target: UInt8, responseCode: UInt8, raw: Bool) -> ChipOutcome {
        let timeout = ChipOutcome.response([responseCode, 0x01], delay: rfTimeout)
        var frame = data
        if raw {
            // Frames with host-made parity bits (ManualRCV.ParityDisable) are not modelled: no answer.
            if register(0x630D) & 0x10 != 0 { return timeout }
            let txBits = register(0x633D) & 0x07
            // 7-bit short frames REQA / WUPA: the PICC answers its ATQA (LSB first on air).
            if txBits == 7, frame.count == 1, frame[0] == 0x26 || frame[0] == 0x52 {
                guard let id = card?.isoAIdentity else { return timeout }
                active = false
                setRxLastBits(0)
                return .response([responseCode, 0x00, id.atqa[1], id.atqa[0]], delay: rfTime(1, 2))
            }
            if register(0x6302) & 0x80 == 0 {          // host supplies the CRC
                guard frame.count >= 3, iso14443aCRC(frame.dropLast(2)) == Array(frame.suffix(2)) || isFeliCa else {
                    if card != nil { active = false }
                    return timeout
                }
                if !isFeliCa { frame.removeLast(2) }
            }
        }
        guard target == 1, active, var current = card else { return timeout }
        let reply: TagReply
        switch current {
        case .type2(var t):
            reply = t.handle(frame)
            current = .type2(t)
        case .isoA:
            reply = .silent      // needs authentication (MIFARE Classic) or ISO-DEP we do not model
        case .felica(let c, _):
            reply = c.handle(frame)
        }
        card = current
        let delay = rfTime(frame.count, 18)
        switch reply {
        case .data(let d):
            setRxLastBits(0)
            let crc = (raw && register(0x6303) & 0x80 == 0 && !isFeliCa) ? iso14443aCRC(d) : []
            return .response([responseCode, 0x00] + d + crc, delay: delay)
        case .ack:
            if raw { setRxLastBits(4); return .response([responseCode, 0x00, 0x0A], delay: delay) }
            return .response([responseCode, 0x00], delay: delay)
        case .nak(let n):
            // The PICC answered a 4-bit NAK and fell back to IDLE. Through InDataExchange the
            // PN532 reports it as a failed MIFARE operation (error 0x14); raw it returns the nibble.
            active = false
            if raw { setRxLastBits(4); return .response([responseCode, 0x00, n], delay: delay) }
            return .response([responseCode, 0x14], delay: delay)
        case .silent:
            active = false
            return timeout
        }
    }

    private var isFeliCa: Bool {
        if case .felica = card { return true }
        return false
    }

    private func setRxLastBits(_ bits: UInt8) {
        registers[0x633C] = (register(0x633C) & ~0x07) | bits
    }
}
