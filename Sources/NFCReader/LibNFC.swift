import CLibNFC
import Foundation

/// Thin helpers over libnfc used only from a reader thread.
enum LibNFC {
    static func strerror(_ dev: OpaquePointer) -> String {
        guard let p = nfc_strerror(dev) else { return "unknown libnfc error" }
        return String(cString: p)
    }

    /// Errors that mean the reader (not the tag) failed.
    static func isDeviceError(_ code: Int32) -> Bool {
        code == NFC_EIO || code == NFC_ENOTSUCHDEV || code == NFC_ETIMEOUT || code == NFC_ESOFT
    }

    static func modulation(_ m: PollModulation) -> nfc_modulation {
        switch m {
        case .iso14443a: nfc_modulation(nmt: NMT_ISO14443A, nbr: NBR_106)
        case .felica212: nfc_modulation(nmt: NMT_FELICA, nbr: NBR_212)
        case .felica424: nfc_modulation(nmt: NMT_FELICA, nbr: NBR_424)
        }
    }

    static func bytes<T>(_ tuple: T, count: Int) -> [UInt8] {
        withUnsafeBytes(of: tuple) { Array($0.prefix(count)) }
    }

    /// Raw exchange through InDataExchange (easy framing, CRC by the chip).
    static func transceive(_ dev: OpaquePointer, _ tx: [UInt8], maxRx: Int, timeout: Int32 = -1) -> Result<[UInt8], Type2IOError> {
        var rx = [UInt8](repeating: 0, count: maxRx)
        let n = tx.withUnsafeBufferPointer { txp in
            rx.withUnsafeMutableBufferPointer { rxp in
                nfc_initiator_transceive_bytes(dev, txp.baseAddress, tx.count, rxp.baseAddress, maxRx, timeout)
            }
        }
        if n >= 0 { return .success(Array(rx.prefix(Int(n)))) }
        return .failure(ioError(dev, n))
    }

    static func ioError(_ dev: OpaquePointer, _ code: Int32) -> Type2IOError {
        switch code {
        case NFC_ERFTRANS, NFC_ETGRELEASED: .silent
        case NFC_EMFCAUTHFAIL, NFC_ECHIP, NFC_EOVFLOW: .refused
        default: .device(code, strerror(dev))
        }
    }

    /// GET_VERSION (0x60) sent as nfc-mfultralight does: CRC and easy framing off,
    /// InCommunicateThru with a host-computed CRC_A; the answer keeps its CRC.
    /// Returns nil when the tag does not answer (MIFARE Ultralight) — the tag is then IDLE
    /// and must be selected again.
    static func getVersion(_ dev: OpaquePointer) -> [UInt8]? {
        guard nfc_device_set_property_bool(dev, NP_HANDLE_CRC, false) >= 0,
              nfc_device_set_property_bool(dev, NP_EASY_FRAMING, false) >= 0 else { return nil }
        var cmd: [UInt8] = [0x60, 0, 0]
        iso14443a_crc_append(&cmd, 1)
        let r = transceive(dev, cmd, maxRx: 32, timeout: 0)
        _ = nfc_device_set_property_bool(dev, NP_HANDLE_CRC, true)
        _ = nfc_device_set_property_bool(dev, NP_EASY_FRAMING, true)
        if case .success(let v) = r, v.count >= 8 { return Array(v.prefix(8)) }
        return nil
    }

    /// Selects the ISO14443-A tag with this UID again (after it fell back to IDLE).
    @discardableResult
    static func reselect(_ dev: OpaquePointer, uid: [UInt8]) -> Bool {
        var t = nfc_target()
        let r = uid.withUnsafeBufferPointer {
            nfc_initiator_select_passive_target(dev, modulation(.iso14443a), $0.baseAddress, uid.count, &t)
        }
        return r > 0
    }
}

/// Type 2 page access through libnfc (InDataExchange).
struct LibNFCType2Transport: Type2Transport {
    let dev: OpaquePointer

    func read(page: Int) throws(Type2IOError) -> [UInt8] {
        let d = try LibNFC.transceive(dev, [0x30, UInt8(page)], maxRx: 16).get()
        guard d.count == 16 else { throw .silent }
        return d
    }

    func fastRead(from: Int, to: Int) throws(Type2IOError) -> [UInt8] {
        let n = (to - from + 1) * 4
        let d = try LibNFC.transceive(dev, [0x3A, UInt8(from), UInt8(to)], maxRx: n + 8).get()
        guard d.count == n else { throw .silent }
        return d
    }

    func write(page: Int, _ data: [UInt8]) throws(Type2IOError) {
        _ = try LibNFC.transceive(dev, [0xA2, UInt8(page)] + data, maxRx: 16).get()
    }
}
