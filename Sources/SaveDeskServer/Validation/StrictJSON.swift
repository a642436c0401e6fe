import Foundation

/// A JSON document read strictly (RFC 8259): duplicate keys, trailing data, unescaped control
/// characters, lone surrogates and nesting deeper than `maxDepth` are refused with the path of the
/// problem. Numbers keep their text, so "is this a whole number, and in range?" is answered
/// exactly. The request validator reads every body with it before the generated decoder does.
enum StrictJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number as written.
    case number(String)
    case string(String)
    case array([StrictJSON])
    /// Members in document order (keys are unique).
    case object([(key: String, value: StrictJSON)])

    static let maxDepth = 32

    struct Failure: Error, Equatable {
        var path: String
        var message: String
        /// A key appears twice in one object.
        var isDuplicateKey: Bool
    }

    static func == (lhs: StrictJSON, rhs: StrictJSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// Reads one document; `data` must hold nothing else but whitespace.
    static func parse(_ data: Data) throws(Failure) -> StrictJSON {
        var reader = Reader(bytes: [UInt8](data))
        reader.skipWhitespace()
        let value = try reader.value(path: "", depth: 0)
        reader.skipWhitespace()
        guard reader.index == reader.bytes.count else {
            throw Failure(path: "", message: "the body has data after its JSON value", isDuplicateKey: false)
        }
        return value
    }

    /// The member `key` of an object, nil otherwise.
    subscript(key: String) -> StrictJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Compact JSON with object keys sorted: the same document always has the same text, whatever
    /// its key order or spacing was (idempotency fingerprints).
    var canonical: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.writeString(text, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
                if index > 0 { out += "," }
                Self.writeString(member.key, into: &out)
                out += ":"
                member.value.write(into: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ path: String, _ message: String, duplicate: Bool = false) -> Failure {
            Failure(path: path, message: message, isDuplicateKey: duplicate)
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ literal: String, path: String) throws(Failure) {
            for byte in literal.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw fail(path, "not valid JSON") }
                index += 1
            }
        }

        mutating func value(path: String, depth: Int) throws(Failure) -> StrictJSON {
            guard depth <= StrictJSON.maxDepth else { throw fail(path, "nested deeper than \(StrictJSON.maxDepth) levels") }
            guard index < bytes.count else { throw fail(path, "the body is not valid JSON (it ends too early)") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(path: path, depth: depth)
            case UInt8(ascii: "["): return try array(path: path, depth: depth)
            case UInt8(ascii: "\""): return .string(try string(path: path))
            case UInt8(ascii: "t"): try expect("true", path: path); return .bool(true)
            case UInt8(ascii: "f"): try expect("false", path: path); return .bool(false)
            case UInt8(ascii: "n"): try expect("null", path: path); return .null
            default: return .number(try number(path: path))
            }
        }

        mutating func object(path: String, depth: Int) throws(Failure) -> StrictJSON {
            index += 1
            var members: [(key: String, value: StrictJSON)] = []
            var keys = Set<String>()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail(path, "an object key must be a string") }
                let key = try string(path: path)
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                guard keys.insert(key).inserted else {
                    throw fail(childPath, "the key \"\(key)\" appears twice", duplicate: true)
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail(childPath, "not valid JSON (a ':' is missing)") }
                index += 1
                skipWhitespace()
                members.append((key, try value(path: childPath, depth: depth + 1)))
                skipWhitespace()
                guard index < bytes.count else { throw fail(path, "the body is not valid JSON (it ends too early)") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw fail(path, "not valid JSON (a ',' or '}' is missing)")
            }
        }

        mutating func array(path: String, depth: Int) throws(Failure) -> StrictJSON {
            index += 1
            var items: [StrictJSON] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipWhitespace()
                items.append(try value(path: "\(path)[\(items.count)]", depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw fail(path, "the body is not valid JSON (it ends too early)") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                throw fail(path, "not valid JSON (a ',' or ']' is missing)")
            }
        }

        mutating func hex4(path: String) throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail(path, "a \\u escape needs four hex digits") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail(path, "a \\u escape needs four hex digits")
                }
                value = value * 16 + digit
                index += 1
            }
            return value
        }

        mutating func string(path: String) throws(Failure) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() throws(Failure) {
                guard !run.isEmpty else { return }
                guard let text = String(validating: run, as: UTF8.self) else { throw fail(path, "a string is not valid UTF-8") }
                scalars.append(contentsOf: text.unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
            while true {
                guard index < bytes.count else { throw fail(path, "a string is not closed") }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    try flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flush()
                    index += 1
                    guard index < bytes.count else { throw fail(path, "a string is not closed") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4(path: path)
                        if (0xD800...0xDBFF).contains(code) {
                            guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw fail(path, "a string holds a lone surrogate")
                            }
                            index += 2
                            let low = try hex4(path: path)
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail(path, "a string holds a lone surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw fail(path, "a string holds a lone surrogate") }
                        scalars.append(scalar)
                    default:
                        throw fail(path, "a string has an unknown escape")
                    }
                default:
                    guard byte >= 0x20 else { throw fail(path, "a string holds an unescaped control character") }
                    run.append(byte)
                    index += 1
                }
            }
        }

        mutating func number(path: String) throws(Failure) -> String {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - from
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integer = digits()
            guard integer > 0 else { throw fail(path, "not valid JSON") }
            if integer > 1, bytes[index - integer] == UInt8(ascii: "0") { throw fail(path, "a number has a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw fail(path, "a number has no digits after its point") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail(path, "a number has no digits in its exponent") }
            }
            guard index - start <= 64 else { throw fail(path, "a number is too long") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }
}
