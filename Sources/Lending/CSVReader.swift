#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads CSV (RFC 4180) as office spreadsheets write it: a header row, fields separated by
/// commas, quoted fields (`""` for a quote; commas and line breaks inside), CRLF, LF or CR line
/// ends, and a UTF-8 byte order mark at the start (Excel's "CSV UTF-8"), which is dropped.
public enum CSVReader {
    /// One record and the line of the file it starts on (1 is the header).
    public struct Record: Sendable, Hashable {
        public var line: Int
        public var fields: [String]
    }

    /// The header and the records after it; blank lines are skipped.
    public struct Table: Sendable, Hashable {
        public var header: [String]
        public var records: [Record]
    }

    /// Why a file is not CSV.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// A quoted field still open at the end of the file.
        case unterminatedQuote(line: Int)
        /// A quote inside an unquoted field, or text after a closing quote.
        case strayQuote(line: Int)
        /// No header row.
        case empty

        public var description: String {
            switch self {
            case .unterminatedQuote(let line):
                "line \(line): a quoted field is never closed; close it with \" (write a quote inside a field as \"\")"
            case .strayQuote(let line):
                "line \(line): a quote in the middle of a field; quote the whole field and double the quote (\"\")"
            case .empty:
                "the file is empty; its first line must be the header"
            }
        }
    }

    public static func parse(_ text: String) throws(Failure) -> Table {
        var rows: [Record] = []
        var fields: [String] = []
        var field = ""
        var line = 1, recordLine = 1
        var inQuotes = false, afterQuote = false, fieldStarted = false

        func endField() {
            fields.append(field)
            field = ""
            afterQuote = false
            fieldStarted = false
        }
        func endRecord() {
            endField()
            if !(fields.count == 1 && fields[0].isEmpty) { rows.append(Record(line: recordLine, fields: fields)) }
            fields = []
        }

        let body = text.hasPrefix("\u{FEFF}") ? Substring(text.dropFirst()) : Substring(text)
        for c in body {
            let isBreak = c == "\r\n" || c == "\n" || c == "\r"
            if inQuotes {
                if c == "\"" {
                    inQuotes = false
                    afterQuote = true
                } else {
                    field.append(c)
                }
                if isBreak { line += 1 }
                continue
            }
            if c == "\"" {
                if afterQuote {  // "" inside a quoted field
                    field.append("\"")
                    inQuotes = true
                    afterQuote = false
                } else if fieldStarted {
                    throw .strayQuote(line: line)
                } else {
                    inQuotes = true
                    fieldStarted = true
                }
            } else if c == "," {
                endField()
            } else if isBreak {
                endRecord()
                line += 1
                recordLine = line
            } else {
                if afterQuote { throw .strayQuote(line: line) }
                field.append(c)
                fieldStarted = true
            }
        }
        if inQuotes { throw .unterminatedQuote(line: recordLine) }
        if fieldStarted || !fields.isEmpty || afterQuote { endRecord() }
        guard let header = rows.first else { throw .empty }
        return Table(header: header.fields, records: Array(rows.dropFirst()))
    }
}
