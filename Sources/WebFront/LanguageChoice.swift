import Hummingbird

/// The language a page is in: `?lang=en|ja` on the request, else the one chosen before (the
/// `rb_lang` cookie, set whenever a request carries `?lang=`), else the browser's
/// `Accept-Language`. So a choice made once — by the header's switch, or a kiosk opened as
/// `/kiosk?lang=ja` — holds on every page after it.
struct LanguageChoice: RouterMiddleware {
    typealias Context = WebRequestContext
    static let cookie = "rb_lang"
    let secure: Bool

    static func language(of request: Request) -> Language {
        Query(request.uri.query)["lang"].flatMap(Language.init(rawValue:))
            ?? request.cookies[cookie].flatMap { Language(rawValue: $0.value) }
            ?? Language.preferred(acceptLanguage: request.headers[.acceptLanguage])
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if let chosen = Query(request.uri.query)["lang"].flatMap(Language.init(rawValue:)),
           request.cookies[Self.cookie]?.value != chosen.rawValue {
            response.setCookie(Cookie(name: Self.cookie, value: chosen.rawValue, maxAge: 365 * 86_400, path: "/",
                                      secure: secure, httpOnly: true, sameSite: .lax))
        }
        return response
    }
}
