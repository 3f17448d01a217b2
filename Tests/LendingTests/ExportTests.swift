import Foundation
import Lending
import Testing

@Suite("CSV and JSON export")
struct ExportTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("a,b", "\"a,b\""),
        ("say \"hi\"", "\"say \"\"hi\"\"\""),
        ("two\nlines", "\"two\nlines\""),
        ("crlf\r\nline", "\"crlf\r\nline\""),
        ("", ""),
        ("山田 太郎", "山田 太郎"),
    ])
    func rfc4180Field(_ value: String, _ expected: String) {
        #expect(RentalExport.csvField(value) == expected)
    }

    @Test(arguments: [("=1+1", "'=1+1"), ("+81 3", "'+81 3"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"), ("a=b", "a=b")])
    func formulasAreNeutralized(_ value: String, _ expected: String) {
        #expect(RentalExport.csvField(value, neutralizeFormulas: true) == expected)
    }

    /// Issue 33: cells that only look safe — a formula behind a space, NBSP, ideographic space,
    /// zero-width space, byte order mark or line feed, or written with a full-width sign.
    @Test(arguments: [" =1+1", "\u{00A0}=1+1", "\u{3000}=1+1", "\u{200B}=1+1", "\u{FEFF}=1+1", "\n=1+1",
                      "\u{FF1D}1+1", "\u{FF0B}81", "\u{FF0D}2", "\u{FF20}SUM(A1)", "\u{2212}2", "\t=1", "\r=1"])
    func formulasBehindBlanksOrInFullWidthAreNeutralized(_ value: String) {
        #expect(RentalExport.looksLikeFormula(value))
        #expect(RentalExport.csvField(value, neutralizeFormulas: true).contains("'" + value))
    }

    @Test(arguments: ["plain", " a=b", "\u{00A0}Pixel 7", "", "   ", "ギャラクシー S24", "D-0042"])
    func ordinaryCellsAreLeftAlone(_ value: String) {
        #expect(!RentalExport.looksLikeFormula(value))
    }

    let rentals = [
        Rental(id: 1, deviceId: "D-1", model: "Pixel 7, \"Pro\"", osVersion: "14", serialNumber: "SN1",
               userId: "U-1", userName: "Yamada\nTaro", rentedAt: Date(timeIntervalSince1970: 1_767_225_600),
               dueAt: nil, returnedAt: Date(timeIntervalSince1970: 1_767_229_200), returnedBy: "U-2",
               location: "room-1", returnLocation: nil, lentBy: "unix:alice", returnNote: "=cracked, \"badly\""),
        Rental(id: 2, deviceId: "D-2", model: "iPad", osVersion: "18", serialNumber: "=cmd",
               userId: "U-2", userName: "鈴木", rentedAt: Date(timeIntervalSince1970: 1_767_232_800)),
    ]

    @Test func csvDocument() {
        let csv = RentalExport.csv(rentals, options: .init(timeZone: TimeZone(identifier: "Asia/Tokyo")!))
        let expected = "rental_id,device_id,model,os_version,serial_number,user_id,user_name,rented_at,due_at,"
            + "returned_at,returned_by,location,return_location,lent_by,return_note\r\n"
            + "1,D-1,\"Pixel 7, \"\"Pro\"\"\",14,SN1,U-1,\"Yamada\nTaro\",2026-01-01 09:00:00,,2026-01-01 10:00:00,U-2,room-1,,unix:alice,\"'=cracked, \"\"badly\"\"\"\r\n"
            + "2,D-2,iPad,18,'=cmd,U-2,鈴木,2026-01-01 11:00:00,,,,,,,\r\n"
        #expect(csv == expected)
    }

    @Test func byteOrderMarkForExcel() {
        let csv = RentalExport.csv([], options: .init(byteOrderMark: true))
        #expect(csv.unicodeScalars.first == "\u{FEFF}")
        #expect(csv.hasSuffix("return_location,lent_by,return_note\r\n"))
    }

    @Test func json() throws {
        let data = try RentalExport.json(rentals)
        let parsed = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(parsed.count == 2)
        #expect(parsed[0]["rentedAt"] as? String == "2026-01-01T00:00:00Z")
        #expect(parsed[0]["userName"] as? String == "Yamada\nTaro")
        #expect(parsed[1]["returnedAt"] is NSNull)
        #expect(parsed[1]["userId"] as? String == "U-2")
        #expect(parsed[0]["lentBy"] as? String == "unix:alice" && parsed[1]["lentBy"] is NSNull)
        #expect(parsed[0]["returnNote"] as? String == "=cracked, \"badly\"" && parsed[1]["returnNote"] is NSNull)
    }
}

/// One definition of a kiosk day for every front (issue 32: the web and the CLI disagreed on when a due day ends).
@Suite struct KioskDayTests {
    let tokyo = TimeZone(identifier: "Asia/Tokyo")!

    @Test func aDayStartsAtMidnightAndEndsAtItsLastSecondInTheZone() throws {
        let day = try #require(KioskDay("2026-11-24"))
        #expect(day.start(in: tokyo)?.formatted(Date.ISO8601FormatStyle()) == "2026-11-23T15:00:00Z")
        #expect(day.end(in: tokyo)?.formatted(Date.ISO8601FormatStyle()) == "2026-11-24T14:59:59Z")
    }

    @Test(arguments: ["24.11.2026", "2026-2-3", "2026-02-30", "", "2026-13-01"])
    func whatIsNotADayIsRefused(_ text: String) {
        #expect(KioskDay(text)?.start(in: tokyo) == nil)
    }

    /// A day without its midnight (a zone that moves its clocks at 00:00) still has a start and an end.
    @Test func aDayThatSkipsMidnightStillEnds() throws {
        let santiago = try #require(TimeZone(identifier: "America/Santiago"))
        let day = try #require(KioskDay("2026-09-06"))
        let start = try #require(day.start(in: santiago))
        let end = try #require(day.end(in: santiago))
        #expect(end.timeIntervalSince(start) == 23 * 3600 - 1)
    }
}
