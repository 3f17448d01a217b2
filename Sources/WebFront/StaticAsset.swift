import Crypto
import Foundation
import Hummingbird
import NIOCore

/// A file of the pages (stylesheet, script), served from memory under a name that carries a hash of its bytes
/// (`/static/kiosk.1f0c3a9b2d4e5f60.js`). A browser may keep it for a year without asking again: a new release
/// changes the bytes, hence the name the pages refer to. The plain name (`/static/kiosk.js`) still answers, for
/// a page loaded before an upgrade, with a short lifetime. Both carry an ETag, so a browser that asks again with
/// `If-None-Match` gets 304 and no body.
struct StaticAsset: Sendable {
    /// The plain name: `kiosk.js`.
    let name: String
    let contentType: String
    let body: String
    /// The first 16 hex digits of the bytes' SHA-256.
    let tag: String

    init(name: String, contentType: String, body: String) {
        self.name = name
        self.contentType = contentType
        self.body = body
        tag = SHA256.hash(data: Array(body.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The path the pages refer to: the plain name with the hash before its extension.
    var path: String {
        guard let dot = name.lastIndex(of: ".") else { return "/static/\(name).\(tag)" }
        return "/static/\(name[..<dot]).\(tag)\(name[dot...])"
    }

    /// The plain path, for pages from before an upgrade.
    var plainPath: String { "/static/\(name)" }

    /// The answer to a GET of `path` (immutable) or of `plainPath` (`versioned` false: five minutes).
    func response(to request: Request, versioned: Bool) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        headers[.cacheControl] = versioned ? "public, max-age=31536000, immutable" : "max-age=300"
        headers[.eTag] = "\"\(tag)\""
        headers[.xContentTypeOptions] = "nosniff"
        if let asked = request.headers[.ifNoneMatch],
           asked.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }).contains(where: { $0 == "\"\(tag)\"" || $0 == "*" }) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// Serves the asset under both names.
    func add(to router: Router<WebRequestContext>) {
        router.get(RouterPath(path)) { request, _ in response(to: request, versioned: true) }
        router.get(RouterPath(plainPath)) { request, _ in response(to: request, versioned: false) }
    }
}
