import Foundation

/// A JSON document read strictly (RFC 8259): duplicate keys, trailing data, unescaped control
/// characters, lone surrogates and nesting deeper than `Limits.maxDepth` are refused with the path
/// of the problem. Numbers keep their text, so "is this a whole number, and in range?" is answered
/// exactly. The request validator reads every body with it before the generated decoder does.
///
/// A body costs about as much as reading it: the limits are checked while it is read, not after.
/// With the operation's schema as a guide, a list stops at the first item past its `maxItems` and a
/// string over its `maxLength` is refused once read; whatever the schema, the document holds at
/// most `Limits.maxValues` values. Paths are only spelled out for the error.
enum StrictJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number as written.
    case number(String)
    case string(String)
    case array([StrictJSON])
    /// Members in document order (keys are unique).
    case object([(key: String, value: StrictJSON)])

    struct Limits: Sendable {
        /// Levels of nesting: a bare value is 1, an object holding it 2, and so on.
        var maxDepth = 32
        /// Values of any kind in the whole document.
        var maxValues = 10_000
    }

    struct Failure: Error, Equatable {
        enum Kind: Sendable, Equatable {
            case syntax, duplicateKey, tooDeep
            /// A list has more items than its schema's `maxItems`.
            case tooManyItems
            /// A string is longer than its schema's `maxLength`.
            case tooLong
            /// The document holds more values than `Limits.maxValues`.
            case tooManyValues
        }

        var kind: Kind
        var path: String
        var message: String
        /// A key appears twice in one object.
        var isDuplicateKey: Bool { kind == .duplicateKey }
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

    /// Reads one document; `data` must hold nothing else but whitespace. With `schema` (and the
    /// `spec` its references resolve in), lists and strings are held to their limits as they are read.
    static func parse(
        _ data: Data, limits: Limits = Limits(), spec: APISpec? = nil, schema: APISpec.Schema? = nil
    ) throws(Failure) -> StrictJSON {
        var reader = Reader(bytes: [UInt8](data), limits: limits, spec: spec)
        reader.skipWhitespace()
        let value = try reader.value(schema: schema, depth: 1)
        reader.skipWhitespace()
        guard reader.index == reader.bytes.count else { throw reader.fail(.syntax, "the body has data after its JSON value") }
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

    /// `text` as a JSON string (quoted, escaped) at the end of `out`.
    static func writeString(_ text: String, into out: inout String) {
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

    /// Where the reader is, spelled out only when something is wrong.
    private enum PathPart {
        case key(String)
        case index(Int)
    }

    private struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        let spec: APISpec?
        var index = 0
        var values = 0
        /// Inside a member the schema does not name: read, not kept, not counted.
        var skipping = 0
        var path: [PathPart] = []

        init(bytes: [UInt8], limits: Limits, spec: APISpec?) {
            self.bytes = bytes
            self.limits = limits
            self.spec = spec
        }

        var pathText: String {
            var text = ""
            for part in path {
                switch part {
                case .key(let key): text += text.isEmpty ? key : ".\(key)"
                case .index(let index): text += "[\(index)]"
                }
            }
            return text
        }

        func fail(_ kind: Failure.Kind, _ message: String) -> Failure {
            Failure(kind: kind, path: pathText, message: message)
        }

        /// What the schema says here, its references resolved.
        func resolved(_ schema: APISpec.Schema?) -> APISpec.Schema? {
            guard let schema else { return nil }
            return spec?.resolve(schema) ?? schema
        }

        /// The schema of member `key` of an object of `schema`: its property, else its additional
        /// properties, else the property of the first alternative that has it.
        func member(_ key: String, of schema: APISpec.Schema?) -> APISpec.Schema? {
            guard let schema = resolved(schema) else { return nil }
            if let property = schema.properties[key] { return property }
            if let additional = schema.additionalProperties { return additional }
            return schema.oneOf.lazy.compactMap { self.resolved($0)?.properties[key] }.first
        }

        /// The list schema at a place whose schema is `schema` (or one of its alternatives).
        func list(_ schema: APISpec.Schema?) -> APISpec.Schema? {
            guard let schema = resolved(schema) else { return nil }
            if schema.type == "array" { return schema }
            return schema.oneOf.lazy.compactMap { self.resolved($0) }.first { $0.type == "array" }
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ literal: String) throws(Failure) {
            for byte in literal.utf8 {
                guard index < bytes.count, bytes[index] == byte else { throw fail(.syntax, "not valid JSON") }
                index += 1
            }
        }

        mutating func value(schema: APISpec.Schema?, depth: Int) throws(Failure) -> StrictJSON {
            guard depth <= limits.maxDepth else { throw fail(.tooDeep, "nested deeper than \(limits.maxDepth) levels") }
            if skipping == 0 { values += 1 }
            guard values <= limits.maxValues else {
                throw fail(.tooManyValues, "the body holds more than \(limits.maxValues) values, more than this call ever needs")
            }
            guard index < bytes.count else { throw fail(.syntax, "the body is not valid JSON (it ends too early)") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(schema: schema, depth: depth)
            case UInt8(ascii: "["): return try array(schema: schema, depth: depth)
            case UInt8(ascii: "\""):
                let text = try string()
                if let most = resolved(schema)?.maxLength {
                    let length = text.unicodeScalars.count
                    if length > most {
                        throw fail(.tooLong, "\(pathText.isEmpty ? "the body" : pathText) is \(length) characters long; at most \(most) are accepted")
                    }
                }
                return .string(text)
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "n"): try expect("null"); return .null
            default: return .number(try number())
            }
        }

        mutating func object(schema: APISpec.Schema?, depth: Int) throws(Failure) -> StrictJSON {
            index += 1
            var members: [(key: String, value: StrictJSON)] = []
            var keys = Set<String>()
            let most = resolved(schema)?.maxProperties
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail(.syntax, "an object key must be a string") }
                let key = try string()
                path.append(.key(key))
                guard keys.insert(key).inserted else { throw fail(.duplicateKey, "the key \"\(key)\" appears twice") }
                if let most, keys.count > most {
                    path.removeLast()
                    throw fail(.tooManyItems, "\(pathText.isEmpty ? "the body" : pathText) has more than \(most) entries; at most \(most)")
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail(.syntax, "not valid JSON (a ':' is missing)") }
                index += 1
                skipWhitespace()
                let memberSchema = member(key, of: schema)
                if memberSchema == nil, skipping == 0, resolved(schema)?.properties.isEmpty == false {
                    // A key the schema does not name: read (its syntax and depth checked, its
                    // cost that of its bytes) but neither kept nor counted against the values a
                    // call needs; the document allows it.
                    skipping += 1
                    _ = try value(schema: nil, depth: depth + 1)
                    skipping -= 1
                    members.append((key, .null))
                } else if skipping > 0 {
                    _ = try value(schema: nil, depth: depth + 1)
                } else {
                    members.append((key, try value(schema: memberSchema, depth: depth + 1)))
                }
                path.removeLast()
                skipWhitespace()
                guard index < bytes.count else { throw fail(.syntax, "the body is not valid JSON (it ends too early)") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw fail(.syntax, "not valid JSON (a ',' or '}' is missing)")
            }
        }

        mutating func array(schema: APISpec.Schema?, depth: Int) throws(Failure) -> StrictJSON {
            index += 1
            var items: [StrictJSON] = []
            let list = list(schema)
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            var count = 0
            while true {
                if let most = list?.maxItems, count == most {
                    throw fail(.tooManyItems, "\(pathText.isEmpty ? "the body" : pathText) has more than \(most) items; at most \(most)")
                }
                skipWhitespace()
                path.append(.index(count))
                let item = try value(schema: list?.items, depth: depth + 1)
                if skipping == 0 { items.append(item) }
                count += 1
                path.removeLast()
                skipWhitespace()
                guard index < bytes.count else { throw fail(.syntax, "the body is not valid JSON (it ends too early)") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                throw fail(.syntax, "not valid JSON (a ',' or ']' is missing)")
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail(.syntax, "a \\u escape needs four hex digits") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail(.syntax, "a \\u escape needs four hex digits")
                }
                value = value * 16 + digit
                index += 1
            }
            return value
        }

        mutating func string() throws(Failure) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() throws(Failure) {
                guard !run.isEmpty else { return }
                guard let text = String(validating: run, as: UTF8.self) else { throw fail(.syntax, "a string is not valid UTF-8") }
                scalars.append(contentsOf: text.unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
            while true {
                guard index < bytes.count else { throw fail(.syntax, "a string is not closed") }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    try flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    try flush()
                    index += 1
                    guard index < bytes.count else { throw fail(.syntax, "a string is not closed") }
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
                        var code = try hex4()
                        if (0xD800...0xDBFF).contains(code) {
                            guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw fail(.syntax, "a string holds a lone surrogate")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw fail(.syntax, "a string holds a lone surrogate") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw fail(.syntax, "a string holds a lone surrogate") }
                        scalars.append(scalar)
                    default:
                        throw fail(.syntax, "a string has an unknown escape")
                    }
                default:
                    guard byte >= 0x20 else { throw fail(.syntax, "a string holds an unescaped control character") }
                    run.append(byte)
                    index += 1
                }
            }
        }

        mutating func number() throws(Failure) -> String {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - from
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integer = digits()
            guard integer > 0 else { throw fail(.syntax, "not valid JSON") }
            if integer > 1, bytes[index - integer] == UInt8(ascii: "0") { throw fail(.syntax, "a number has a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw fail(.syntax, "a number has no digits after its point") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail(.syntax, "a number has no digits in its exponent") }
            }
            guard index - start <= 64 else { throw fail(.syntax, "a number is too long") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }
}

extension StrictJSON {
    /// The value of a JSON number that is a whole number in JSON Schema's sense (`4`, `4.0`,
    /// `4e0` and `40e-1` alike), exactly; nil for a number with a fractional part. A whole number
    /// outside Int64 is `.outOfRange`.
    enum Whole: Equatable, Sendable {
        case value(Int64)
        case outOfRange
    }

    static func wholeNumber(_ text: String) -> Whole? {
        var digits: [UInt8] = []
        var exponent = 0
        var negative = false
        var bytes = Array(text.utf8)[...]
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        }
        var seenPoint = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                seenPoint = true
            } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                digits.append(byte - UInt8(ascii: "0"))
                if seenPoint { exponent -= 1 }
            } else {
                return nil
            }
        }
        if !bytes.isEmpty {
            bytes = bytes.dropFirst()
            var sign = 1
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") {
                sign = bytes.first == UInt8(ascii: "-") ? -1 : 1
                bytes = bytes.dropFirst()
            }
            var written = 0
            for byte in bytes {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                written = min(written * 10 + Int(byte - UInt8(ascii: "0")), 1_000_000)
            }
            exponent += sign * written
        }
        guard !digits.isEmpty else { return nil }
        // Trailing zeros of the digits move into the exponent; leading zeros are dropped.
        while digits.count > 1, digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        while digits.count > 1, digits.first == 0 { digits.removeFirst() }
        if digits == [0] { return .value(0) }
        guard exponent >= 0 else { return nil }
        guard digits.count + exponent <= 19 else { return .outOfRange }
        var magnitude: UInt64 = 0
        for digit in digits { magnitude = magnitude * 10 + UInt64(digit) }
        for _ in 0..<exponent { magnitude *= 10 }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return .outOfRange }
            return .value(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { return .outOfRange }
        return .value(Int64(magnitude))
    }
}
