import Foundation
import MultipartKit

/// A submitted `multipart/form-data` body (RFC 7578), as a browser sends a form with a file:
/// each part's field name (`Content-Disposition: form-data; name="…"`), its file name when it is
/// a file, and its bytes; the framing is parsed by multipart-kit. No I/O: the caller collects
/// the body first.
struct MultipartForm: Sendable {
    struct Part: Sendable {
        var name: String
        var filename: String?
        var body: [UInt8]
    }

    let parts: [Part]

    /// The boundary of a `multipart/form-data` content type; nil for any other type.
    static func boundary(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let fields = parameters(contentType)
        guard fields.first?.0.lowercased() == "multipart/form-data" else { return nil }
        return fields.dropFirst().first(where: { $0.0.lowercased() == "boundary" }).flatMap { $0.1.isEmpty ? nil : $0.1 }
    }

    /// Parses `body` with multipart-kit's `MultipartParser`; nil when it is not framed by
    /// `boundary` (no part, no closing delimiter, or a malformed part header).
    init?(_ body: [UInt8], boundary: String) {
        guard !boundary.isEmpty, body.firstRange(of: Array("--\(boundary)--".utf8)) != nil else { return nil }
        let parser = MultipartParser(boundary: boundary)
        var parts: [Part] = []
        var headers: [(String, String)] = []
        var current: [UInt8] = []
        parser.onHeader = { name, value in headers.append((name, value)) }
        parser.onBody = { chunk in current += chunk.readBytes(length: chunk.readableBytes) ?? [] }
        parser.onPartComplete = {
            let disposition = headers.first { $0.0.lowercased() == "content-disposition" }.flatMap { Self.disposition($0.1) }
            if let disposition, let name = disposition["name"] {
                parts.append(Part(name: name, filename: disposition["filename"], body: current))
            }
            headers = []
            current = []
        }
        do { try parser.execute(body) } catch { return nil }
        guard !parts.isEmpty else { return nil }
        self.parts = parts
    }

    /// A text field's value, trimmed; empty counts as absent (as in ``Query``).
    subscript(name: String) -> String? { query[name] }

    /// The text fields (not the files) as a ``Query``, for the checks every form shares.
    var query: Query {
        Query(items: parts.filter { $0.filename == nil }.map { ($0.name, String(decoding: $0.body, as: UTF8.self)) })
    }

    /// The file sent in field `name`; nil when none was chosen (browsers send an empty file name).
    func file(_ name: String) -> Part? {
        parts.last { $0.name == name && !($0.filename ?? "").isEmpty }
    }

    /// The `name` and `filename` of a `Content-Disposition: form-data` header's value
    /// (multipart-kit parses the framing, but keeps its header-parameter parser to itself).
    private static func disposition(_ value: String) -> [String: String]? {
        let fields = parameters(value)
        guard fields.first?.0.lowercased() == "form-data" else { return nil }
        return Dictionary(fields.dropFirst().map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { _, last in last })
    }

    /// `value; key=token; key="quoted; \"text\""` as [(value, ""), (key, text), …].
    private static func parameters(_ header: String) -> [(String, String)] {
        var fields: [(String, String)] = []
        var key = "", value = "", inKey = true, quoted = false, escaped = false
        func finish() {
            let k = key.trimmingCharacters(in: .whitespaces)
            if !k.isEmpty { fields.append((k, fields.isEmpty && inKey ? "" : value)) }
            key = ""; value = ""; inKey = true
        }
        for c in header {
            if quoted {
                if escaped { value.append(c); escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { quoted = false } else { value.append(c) }
            } else if c == ";" {
                finish()
            } else if inKey && c == "=" {
                inKey = false
            } else if inKey {
                key.append(c)
            } else if c == "\"" {
                quoted = true
            } else if c != " " && c != "\t" {
                value.append(c)
            }
        }
        finish()
        return fields
    }
}
