import Crypto
import CryptoExtras
import Dispatch
import Foundation

/// Sign-in accounts: one line per account in the accounts file,
/// `name:scrypt:LOG2N:R:P:SALT:HASH[:user=ID]` (SALT and HASH base64), written by
/// `roombridge-web hash-password NAME [--user ID]`. Blank lines and `#` comments are ignored.
/// A line without `user=` is an admin's; a line with it is a self-service account of the
/// inventory user ID, which can book for that user and change nothing else.
public struct Accounts: Sendable {
    public struct Entry: Sendable, Equatable {
        public var name: String
        var log2N: Int
        var r: Int
        var p: Int
        var salt: [UInt8]
        var hash: [UInt8]
        /// The inventory user a self-service account books for; nil for an admin.
        public var userId: String?
    }

    public enum ParseError: Error, CustomStringConvertible, Equatable {
        case badLine(Int)
        public var description: String {
            switch self {
            case .badLine(let n):
                return "accounts file line \(n) is not name:scrypt:LOG2N:R:P:SALT:HASH[:user=ID]; make it with `roombridge-web hash-password NAME [--user ID]`"
            }
        }
    }

    public let entries: [String: Entry]

    public init(text: String) throws(ParseError) {
        var entries: [String: Entry] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let f = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let userId: String?
            switch f.count {
            case 7: userId = nil
            case 8 where f[7].hasPrefix("user=") && f[7].count > 5: userId = String(f[7].dropFirst(5))
            default: throw .badLine(index + 1)
            }
            guard !f[0].isEmpty, f[1] == "scrypt", let n = Int(f[2]), let r = Int(f[3]), let p = Int(f[4]),
                  (10...20).contains(n), (1...32).contains(r), (1...16).contains(p),
                  let salt = Data(base64Encoded: f[5]), let hash = Data(base64Encoded: f[6]), salt.count >= 16, hash.count >= 32
            else { throw .badLine(index + 1) }
            entries[f[0]] = Entry(name: f[0], log2N: n, r: r, p: p, salt: Array(salt), hash: Array(hash), userId: userId)
        }
        self.entries = entries
    }

    /// Whether the accounts file has `name`.
    public func has(_ name: String) -> Bool { entries[name] != nil }

    /// The inventory user `name` books for when it is a self-service account; nil for an admin.
    public func userId(of name: String) -> String? { entries[name]?.userId }

    /// Whether `password` is `name`'s. Unknown names cost a hash too, so timing does not tell
    /// which names exist.
    public func verify(name: String, password: String) async -> Bool {
        let entry = entries[name]
        let probe = entry ?? Self.decoy
        let derived = await PasswordHash.derive(password, salt: probe.salt, log2N: probe.log2N, r: probe.r, p: probe.p,
                                                on: entry == nil ? PasswordHash.unknownQueue : PasswordHash.knownQueue)
        guard let entry, let derived else { return false }
        return PasswordHash.constantTimeEqual(derived, entry.hash)
    }

    private static let decoy = Entry(name: "", log2N: PasswordHash.defaultLog2N, r: 8, p: 1,
                                     salt: Array(repeating: 0, count: 16), hash: Array(repeating: 0, count: 32), userId: nil)
}

/// scrypt (RFC 7914) from swift-crypto, run off the cooperative thread pool: one derivation
/// takes tens of milliseconds and 16 MiB at the default cost.
public enum PasswordHash {
    /// N = 2^14, r = 8, p = 1: RFC 7914's interactive-login parameters.
    public static let defaultLog2N = 14
    /// Checks of names in the accounts file, and of other names: apart, so that attempts for
    /// unknown names never queue ahead of an admin's own sign-in.
    static let knownQueue = DispatchQueue(label: "roombridge-web.password-hash")
    static let unknownQueue = DispatchQueue(label: "roombridge-web.password-hash-unknown")

    static func derive(_ password: String, salt: [UInt8], log2N: Int, r: Int, p: Int,
                       on queue: DispatchQueue = knownQueue) async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            queue.async {
                let key = try? KDF.Scrypt.deriveKey(from: Array(password.utf8), salt: salt, outputByteCount: 32,
                                                    rounds: 1 << log2N, blockSize: r, parallelism: p)
                continuation.resume(returning: key.map { $0.withUnsafeBytes { Array($0) } })
            }
        }
    }

    /// An accounts-file line for `name` with a fresh random salt.
    public static func line(name: String, password: String, userId: String? = nil) async -> String? {
        var salt = [UInt8](repeating: 0, count: 16)
        var rng = SystemRandomNumberGenerator()
        for i in salt.indices { salt[i] = rng.next() }
        guard let hash = await derive(password, salt: salt, log2N: defaultLog2N, r: 8, p: 1) else { return nil }
        return "\(name):scrypt:\(defaultLog2N):8:1:\(Data(salt).base64EncodedString()):\(Data(hash).base64EncodedString())" + (userId.map { ":user=\($0)" } ?? "")
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
