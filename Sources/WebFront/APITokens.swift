import Crypto
import Foundation

/// API tokens for `/api/v1`: one line per token in the tokens file, `NAME:SCOPE:sha256:HEX` (the SHA-256 of the
/// token, never the token), written by `roombridge-web token add NAME --scope read|write`. A token is 32 random
/// bytes, so a plain hash is enough to keep it from a reader of the file (a password needs scrypt because people
/// choose guessable ones; nobody guesses 256 bits). Blank lines and `#` comments are ignored.
public struct APITokens: Sendable {
    /// What a token may do: `read` every GET, `write` also every change.
    public enum Scope: String, Sendable, CaseIterable {
        case read, write
    }

    public struct Token: Sendable, Equatable {
        public var name: String
        public var scope: Scope
    }

    public enum ParseError: Error, CustomStringConvertible, Equatable {
        case badLine(Int)
        public var description: String {
            switch self {
            case .badLine(let n):
                return "tokens file line \(n) is not NAME:read|write:sha256:HEX; make one with `roombridge-web token add NAME --scope read`"
            }
        }
    }

    /// By the hex SHA-256 of the token.
    let byDigest: [String: Token]

    public init(text: String) throws(ParseError) {
        var byDigest: [String: Token] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let f = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 4, Self.validName(f[0]), let scope = Scope(rawValue: f[1]), f[2] == "sha256",
                  f[3].count == 64, f[3].allSatisfy(\.isHexDigit)
            else { throw .badLine(index + 1) }
            byDigest[f[3].lowercased()] = Token(name: f[0], scope: scope)
        }
        self.byDigest = byDigest
    }

    /// The names of the tokens, sorted.
    public var names: [String] { byDigest.values.map(\.name).sorted() }

    /// The token an `Authorization: Bearer …` value names, or nil.
    public func token(bearer: String) -> Token? {
        byDigest[Self.digest(bearer)]
    }

    /// The token an `Authorization` header value (`Bearer …`, any case) names, or nil.
    public func token(authorization header: String?) -> Token? {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return nil }
        return token(bearer: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
    }

    static func digest(_ token: String) -> String {
        SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A new token and its tokens-file line.
    public static func make(name: String, scope: Scope) -> (token: String, line: String) {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = UInt8.random(in: .min ... .max, using: &generator) }
        let token = "rbt_" + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return (token, "\(name):\(scope.rawValue):sha256:\(digest(token))")
    }

    /// A token's name: letters, digits, `-`, `_`, `.` (it is recorded as the actor of its changes).
    public static func validName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }
}
