import Foundation

/// The records of a customers file, read as a stream in bounded memory: CSV with a header row
/// (RFC 4180: quoted fields, `""` for a quote, line breaks inside quotes) or JSON Lines (one
/// object a line). A record longer than `maxRecordBytes` is reported and skipped without being
/// held; every record says the line it starts on.
struct CustomerFile {
    enum Format: String, Sendable { case csv, jsonLines = "json lines" }

    /// One record: its fields by column name (a JSON list as its items), or why it cannot be read.
    struct Record {
        var line: Int
        var fields: Result<[String: FieldValue], Failure>
    }

    enum FieldValue: Equatable {
        case text(String)
        case list([String])

        var text: String? { if case .text(let text) = self { text } else { nil } }
    }

    struct Failure: Error {
        var field: String?
        var message: String
    }

    static let maxRecordBytes = 65_536

    let path: String
    let format: Format

    init(path: String) throws {
        self.path = path
        let lower = path.lowercased()
        if lower.hasSuffix(".csv") {
            format = .csv
        } else if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") || lower.hasSuffix(".json") {
            format = .jsonLines
        } else {
            // Sniff: JSON Lines start with an object.
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let head = (try handle.read(upToCount: 256)) ?? Data()
            format = head.first { !" \t\r\n".utf8.contains($0) } == UInt8(ascii: "{") ? .jsonLines : .csv
        }
    }

    var size: Int64 { ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? 0 }

    /// Reads every record, in order, calling `body` with each and the bytes read so far. For CSV
    /// the header row comes first as `header` (its problems end the read).
    func read(header: ([String]) throws -> Void, _ body: (Record, Int64) async throws -> Void) async throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var bytes = ChunkedBytes(handle: handle)
        switch format {
        case .csv:
            var parser = CSVParser()
            var columns: [String]?
            while let (line, result) = try parser.next(&bytes) {
                guard let names = columns else {
                    let names = try result.get().map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                    try header(names)
                    columns = names
                    continue
                }
                let fields = result.flatMap { values -> Result<[String: FieldValue], Failure> in
                    guard values.count == names.count else {
                        return .failure(Failure(field: nil, message: "\(values.count) fields; the header has \(names.count)"))
                    }
                    return .success(Dictionary(uniqueKeysWithValues: zip(names, values.map { FieldValue.text($0) })))
                }
                try await body(Record(line: line, fields: fields), bytes.consumed)
            }
            if columns == nil { try header([]) }
        case .jsonLines:
            var line = 0
            while let raw = try bytes.line(limit: Self.maxRecordBytes) {
                line += 1
                switch raw {
                case .tooLong:
                    try await body(Record(line: line, fields: .failure(Failure(field: nil, message: "longer than \(Self.maxRecordBytes) bytes"))), bytes.consumed)
                case .bytes(let data):
                    if data.allSatisfy({ " \t\r".utf8.contains($0) }) { continue }
                    try await body(Record(line: line, fields: Self.object(data)), bytes.consumed)
                }
            }
        }
    }

    /// One JSON Lines record: an object of strings (and lists of strings), read strictly.
    static func object(_ data: [UInt8]) -> Result<[String: FieldValue], Failure> {
        let parsed: StrictJSON
        do {
            parsed = try StrictJSON.parse(Data(data))
        } catch {
            return .failure(Failure(field: error.path.isEmpty ? nil : error.path, message: "not valid JSON: \(error.message)"))
        }
        guard case .object(let members) = parsed else { return .failure(Failure(field: nil, message: "not a JSON object")) }
        var fields: [String: FieldValue] = [:]
        for member in members {
            switch member.value {
            case .string(let text): fields[member.key] = .text(text)
            case .null: continue
            case .array(let items):
                var list: [String] = []
                for item in items {
                    guard case .string(let text) = item else { return .failure(Failure(field: member.key, message: "expected a list of text")) }
                    list.append(text)
                }
                fields[member.key] = .list(list)
            default: return .failure(Failure(field: member.key, message: "expected text"))
            }
        }
        return .success(fields)
    }
}

/// A file's bytes in chunks, with how many were consumed.
struct ChunkedBytes {
    let handle: FileHandle
    private var buffer: [UInt8] = []
    private var index = 0
    private(set) var consumed: Int64 = 0
    private var ended = false

    init(handle: FileHandle) { self.handle = handle }

    /// The next byte, nil at the end.
    mutating func next() throws -> UInt8? {
        if index == buffer.count {
            guard !ended else { return nil }
            buffer = [UInt8](try handle.read(upToCount: 1 << 16) ?? Data())
            index = 0
            if buffer.isEmpty {
                ended = true
                return nil
            }
        }
        defer {
            index += 1
            consumed += 1
        }
        return buffer[index]
    }

    enum Line { case bytes([UInt8]), tooLong }

    /// The next line without its line break; a line past `limit` bytes is read to its end but
    /// not kept. Nil at the end.
    mutating func line(limit: Int) throws -> Line? {
        var line: [UInt8] = []
        var tooLong = false
        var sawAny = false
        while let byte = try next() {
            sawAny = true
            if byte == UInt8(ascii: "\n") { return tooLong ? .tooLong : .bytes(line) }
            if tooLong { continue }
            if line.count == limit { tooLong = true; line = [] } else { line.append(byte) }
        }
        guard sawAny else { return nil }
        return tooLong ? .tooLong : .bytes(line)
    }
}

/// RFC 4180 records from a byte stream: the line each starts on, and its fields or why it is not
/// CSV. After a malformed record, reading resumes at the next line.
struct CSVParser {
    private var line = 1

    mutating func next(_ bytes: inout ChunkedBytes) throws -> (Int, Result<[String], CustomerFile.Failure>)? {
        let start = line
        var fields: [String] = []
        var field: [UInt8] = []
        var size = 0
        var quoted = false, inQuotes = false, afterQuote = false, sawAny = false
        func fail(_ message: String, _ bytes: inout ChunkedBytes) throws -> (Int, Result<[String], CustomerFile.Failure>) {
            // Skip to the end of the line the problem is on.
            while let byte = try bytes.next() {
                if byte == UInt8(ascii: "\n") { line += 1; break }
            }
            return (start, .failure(.init(field: nil, message: message)))
        }
        while let byte = try bytes.next() {
            sawAny = true
            size += 1
            if size > CustomerFile.maxRecordBytes {
                return try fail("longer than \(CustomerFile.maxRecordBytes) bytes", &bytes)
            }
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                    afterQuote = true
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                if afterQuote {
                    // `""` inside a quoted field: a quote.
                    field.append(byte)
                    inQuotes = true
                    afterQuote = false
                } else if field.isEmpty && !quoted {
                    quoted = true
                    inQuotes = true
                } else {
                    return try fail("a quote inside an unquoted field (quote the field and double the quote)", &bytes)
                }
            case UInt8(ascii: ","):
                fields.append(String(decoding: field, as: UTF8.self))
                field = []
                quoted = false
                afterQuote = false
            case UInt8(ascii: "\n"):
                line += 1
                if field.last == UInt8(ascii: "\r"), !afterQuote { field.removeLast() }
                fields.append(String(decoding: field, as: UTF8.self))
                if fields == [""] { return try next(&bytes) }  // an empty line
                return (start, .success(fields))
            case UInt8(ascii: "\r") where afterQuote:
                continue
            default:
                if afterQuote { return try fail("text after a closing quote", &bytes) }
                field.append(byte)
            }
        }
        guard sawAny else { return nil }
        if inQuotes { return (start, .failure(.init(field: nil, message: "a quoted field is never closed"))) }
        if field.last == UInt8(ascii: "\r") { field.removeLast() }
        fields.append(String(decoding: field, as: UTF8.self))
        if fields == [""] { return nil }
        return (start, .success(fields))
    }
}
