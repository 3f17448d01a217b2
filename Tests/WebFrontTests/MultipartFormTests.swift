import Testing
@testable import WebFront

@Suite struct MultipartFormTests {
    /// A body as Chromium sends the import form: a token, a choice, a checkbox and a file whose
    /// text has line breaks and a quoted comma.
    static let boundary = "----WebKitFormBoundaryx7Qb2"
    static let body = [
        "------WebKitFormBoundaryx7Qb2",
        "Content-Disposition: form-data; name=\"csrf\"",
        "",
        "tok en",
        "------WebKitFormBoundaryx7Qb2",
        "Content-Disposition: form-data; name=\"kind\"",
        "",
        "badges",
        "------WebKitFormBoundaryx7Qb2",
        "Content-Disposition: form-data; name=\"file\"; filename=\"staff; \\\"new\\\".csv\"",
        "Content-Type: text/csv",
        "",
        "id,name\r\nU-1,\"Lovelace, Ada\"\r\n",
        "------WebKitFormBoundaryx7Qb2",
        "Content-Disposition: form-data; name=\"dryRun\"",
        "",
        "on",
        "------WebKitFormBoundaryx7Qb2--",
        "",
    ].joined(separator: "\r\n")

    @Test func theBoundaryComesFromAMultipartContentTypeOnly() {
        #expect(MultipartForm.boundary("multipart/form-data; boundary=\(Self.boundary)") == Self.boundary)
        #expect(MultipartForm.boundary("Multipart/Form-Data; charset=utf-8; boundary=\"a b\"") == "a b")
        #expect(MultipartForm.boundary("application/x-www-form-urlencoded") == nil)
        #expect(MultipartForm.boundary("multipart/form-data") == nil)
        #expect(MultipartForm.boundary(nil) == nil)
    }

    @Test func fieldsAndTheFileAreReadWithTheirBytes() throws {
        let form = try #require(MultipartForm(Array(Self.body.utf8), boundary: Self.boundary))
        #expect(form["csrf"] == "tok en")
        #expect(form["kind"] == "badges")
        #expect(form["dryRun"] == "on")
        #expect(form["partial"] == nil)
        let file = try #require(form.file("file"))
        #expect(file.filename == "staff; \"new\".csv")
        #expect(String(decoding: file.body, as: UTF8.self) == "id,name\r\nU-1,\"Lovelace, Ada\"\r\n")
        #expect(form.query["file"] == nil, "a file is not a text field")
    }

    @Test func noFileChosenIsNoFile() throws {
        let body = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n"
        let form = try #require(MultipartForm(Array(body.utf8), boundary: "b"))
        #expect(form.file("file") == nil)
    }

    @Test func aBodyNotFramedByTheBoundaryIsRefused() {
        #expect(MultipartForm(Array("csrf=x&kind=users".utf8), boundary: "b") == nil)
        #expect(MultipartForm(Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end".utf8), boundary: "b") == nil)
        #expect(MultipartForm(Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\nno blank line\r\n--b--".utf8), boundary: "b") == nil)
    }
}
