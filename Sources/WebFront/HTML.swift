/// Small helpers for server-rendered HTML. Every text that comes from data goes through
/// `escape`; every text meant for people comes from the message catalogue.
enum HTML {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// Percent-encodes a query value or path segment.
    static func urlComponent(_ text: String) -> String {
        var allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        allowed.remove(UInt8(ascii: "+"))
        var out = ""
        for byte in text.utf8 {
            if allowed.contains(byte) { out.append(Character(Unicode.Scalar(byte))) } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// A table; `cells` are already-escaped HTML.
    static func table(_ headers: [String], _ rows: [(cells: [String], attributes: String)], id: String) -> String {
        var out = "<table id=\"\(id)\"><thead><tr>"
        for h in headers { out += "<th>\(escape(h))</th>" }
        out += "</tr></thead><tbody>"
        for row in rows {
            out += "<tr\(row.attributes)>" + row.cells.map { "<td>\($0)</td>" }.joined() + "</tr>"
        }
        return out + "</tbody></table>"
    }

    /// A `<select>` named `name` with `options` (value, label), `selected` chosen.
    static func select(_ name: String, _ options: [(String, String)], selected: String?) -> String {
        var out = "<select name=\"\(name)\" id=\"\(name)\">"
        for (value, label) in options {
            let mark = value == (selected ?? "") ? " selected" : ""
            out += "<option value=\"\(escape(value))\"\(mark)>\(escape(label))</option>"
        }
        return out + "</select>"
    }

    /// Links to this page in the other languages (the choice is remembered, `LanguageChoice`).
    static func languageSwitch(_ l: Localizer) -> String {
        Language.allCases.map { language in
            let name = language == .en ? "English" : "日本語"
            return language == l.language
                ? "<span id=\"lang-\(language.rawValue)\" aria-current=\"true\">\(name)</span>"
                : "<a href=\"?lang=\(language.rawValue)\" hreflang=\"\(language.rawValue)\" lang=\"\(language.rawValue)\" id=\"lang-\(language.rawValue)\">\(name)</a>"
        }.joined(separator: " | ")
    }

    /// The page around `body`: the language, the navigation and the stylesheet.
    static func page(_ l: Localizer, title: String, active: String, viewer: Viewer, body: String) -> String {
        let nav = ["devices", "rentals", "history", "reports", "dashboard", "users", "stocktakes", "curtain", "kiosk"].map { item in
            let current = item == active ? " aria-current=\"page\"" : ""
            return "<a href=\"/\(item)\"\(current)>\(escape(l.t("nav.\(item)")))</a>"
        }.joined(separator: " ")
        let account: String
        if let user = viewer.signedIn {
            account = "<form method=\"post\" action=\"/logout\" class=\"account\"><span id=\"signed-in\">"
                + escape(l.t("admin.signedIn", ["user": user])) + "</span> " + viewer.csrfField
                + "<button type=\"submit\" id=\"sign-out\">\(escape(l.t("admin.signOut")))</button></form>"
        } else {
            account = "<a class=\"account\" href=\"/login\" id=\"sign-in-link\">\(escape(l.t("admin.signIn")))</a>"
        }
        return """
            <!doctype html>
            <html lang="\(l.language.rawValue)"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) — \(escape(l.t("app.name")))</title>
            <link rel="stylesheet" href="\(Assets.site.path)"></head>
            <body><header><strong>\(escape(l.t("app.name")))</strong> <nav>\(nav)</nav> \(account)
            <span id="time-zone">\(escape(l.t("page.timeZone", ["zone": l.timeZone.identifier])))</span>
            <span class="languages">\(languageSwitch(l))</span></header>
            <main><h1>\(escape(title))</h1>
            \(viewer.notice.map { "<p class=\"notice\" id=\"notice\" role=\"status\">\(escape($0))</p>" } ?? "")
            \(body)
            </main></body></html>
            """
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
