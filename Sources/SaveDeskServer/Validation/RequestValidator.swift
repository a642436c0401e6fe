import Foundation
import RetentionDomain

/// Checks a request against the limits `openapi.yaml` declares, before any handler (and any
/// arithmetic) sees it: integer ranges, string lengths and characters, date-times, closed enums,
/// required fields and parameters, and types. Every refusal names the field or parameter. Strings
/// over their length are 422 (the text is fine JSON, just too much of it); everything else is 400.
/// (Lists and strings in a body are held to their limits while the body is read: `StrictJSON`.)
struct RequestValidator: Sendable {
    let spec: APISpec

    /// A query, path or header value as sent (percent-decoded).
    func check(parameter: APISpec.Parameter, raw: String) throws(SaveDeskError) {
        let schema = spec.resolve(parameter.schema)
        switch schema.type {
        case "integer":
            // A query value is digits: the generated server reads it as Swift reads an integer.
            let digits = raw.hasPrefix("-") ? raw.dropFirst() : Substring(raw)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw .badRequest("\(parameter.name) should be a whole number, got \"\(Self.quote(raw))\"", code: "invalid_request")
            }
            try range(Int64(raw).map { .value($0) } ?? .outOfRange, text: raw, schema: schema, name: parameter.name)
        case "boolean":
            guard raw == "true" || raw == "false" else {
                throw .badRequest("\(parameter.name) must be true or false, got \"\(Self.quote(raw))\"", code: "invalid_request")
            }
        default:
            try string(raw, schema: schema, name: parameter.name)
        }
    }

    /// A required parameter the request does not have.
    func missing(_ parameter: APISpec.Parameter) -> SaveDeskError {
        let place = parameter.location == "query" ? "query parameter" : parameter.location == "path" ? "path segment" : "header"
        return .badRequest("the \(place) \(parameter.name) is required", code: "missing_parameter")
    }

    /// A request body, read strictly.
    func check(body: StrictJSON, schema: APISpec.Schema) throws(SaveDeskError) {
        try check(body, schema: schema, path: "")
    }

    private func check(_ value: StrictJSON, schema unresolved: APISpec.Schema, path: String) throws(SaveDeskError) {
        let schema = spec.resolve(unresolved)
        let name = path.isEmpty ? "the body" : path
        if !schema.oneOf.isEmpty {
            // The alternative whose required keys are all there (they are disjoint in the spec).
            let alternatives = schema.oneOf.map(spec.resolve)
            guard let chosen = alternatives.first(where: { $0.required.allSatisfy { value[$0] != nil } }) else {
                let shapes = alternatives.map { "{" + $0.required.joined(separator: ", ") + "}" }.joined(separator: " or ")
                throw .badRequest("\(name) must have the fields of \(shapes)", code: "invalid_request")
            }
            try check(value, schema: chosen, path: path)
            return
        }
        switch (schema.type, value) {
        case (nil, _):
            return
        case ("object", .object(let members)):
            for key in schema.required {
                guard let member = members.first(where: { $0.key == key }) else {
                    throw .badRequest("missing field \"\(Self.join(path, key))\"", code: "invalid_request")
                }
                if case .null = member.value {
                    throw .badRequest("field \"\(Self.join(path, key))\" must not be null", code: "invalid_request")
                }
            }
            for member in members {
                if case .null = member.value, schema.properties[member.key] != nil {
                    // The spec has no nullable fields: an optional field is left out, never null.
                    throw .badRequest("field \"\(Self.join(path, member.key))\" must not be null; leave it out instead", code: "invalid_request")
                }
                if let property = schema.properties[member.key] {
                    try check(member.value, schema: property, path: Self.join(path, member.key))
                } else if let additional = schema.additionalProperties {
                    try string(member.key, schema: APISpec.Schema(type: "string", maxLength: 255), name: "a key of \(name)")
                    try check(member.value, schema: additional, path: Self.join(path, member.key))
                }
            }
        case ("array", .array(let items)):
            if let itemSchema = schema.items {
                for (index, item) in items.enumerated() { try check(item, schema: itemSchema, path: "\(path)[\(index)]") }
            }
        case ("string", .string(let text)):
            try string(text, schema: schema, name: name)
        case ("integer", .number(let text)):
            // JSON Schema's integer: any number with no fractional part (4, 4.0, 4e0).
            guard let whole = StrictJSON.wholeNumber(text) else {
                throw .badRequest("\(name) should be a whole number, got \(Self.quote(text))", code: "invalid_request")
            }
            try range(whole, text: text, schema: schema, name: name)
        case ("number", .number):
            return
        case ("boolean", .bool):
            return
        default:
            throw .badRequest("field \"\(name)\" should be \(Self.describe(schema.type))", code: "invalid_request")
        }
    }

    private func range(_ whole: StrictJSON.Whole, text: String, schema: APISpec.Schema, name: String) throws(SaveDeskError) {
        let range = "\(schema.minimum.map(String.init) ?? "any") and \(schema.maximum.map(String.init) ?? "any")"
        guard case .value(let value) = whole else {
            throw .badRequest("\(name) must be between \(range), got \(Self.quote(text))", code: "out_of_range")
        }
        if let minimum = schema.minimum, value < minimum {
            throw .badRequest("\(name) must be between \(range), got \(value)", code: "out_of_range")
        }
        if let maximum = schema.maximum, value > maximum {
            throw .badRequest("\(name) must be between \(range), got \(value)", code: "out_of_range")
        }
    }

    private func string(_ text: String, schema: APISpec.Schema, name: String) throws(SaveDeskError) {
        if schema.pattern == APISpec.noNUL, text.utf8.contains(0) {
            throw .badRequest("\(name) holds a NUL character (U+0000), which no value may", code: "invalid_character")
        }
        let length = text.unicodeScalars.count
        if let minimum = schema.minLength, length < minimum {
            throw .badRequest(minimum == 1 ? "\(name) must not be empty" : "\(name) needs at least \(minimum) characters",
                              code: "invalid_request")
        }
        if let maximum = schema.maxLength, length > maximum {
            throw .unprocessable("\(name) is \(length) characters long; at most \(maximum) are accepted", code: "too_long")
        }
        if let allowed = schema.enumValues, !allowed.contains(text) {
            throw .badRequest("\(name) must be one of \(allowed.joined(separator: ", ")); got \"\(Self.quote(text))\"", code: "invalid_value")
        }
        if schema.format == "date-time", WireFormat.parseDate(text) == nil {
            throw .badRequest("\(name) must be a date and time such as 2026-11-01T00:00:00Z, got \"\(Self.quote(text))\"",
                              code: "invalid_date")
        }
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    static func describe(_ type: String?) -> String {
        switch type {
        case "object": "an object"
        case "array": "a list"
        case "string": "text"
        case "integer": "a whole number"
        case "number": "a number"
        case "boolean": "true or false"
        default: "a value"
        }
    }

    /// A client's value, shortened and without control characters, for an error message.
    static func quote(_ text: String) -> String {
        let clean = text.removingControlCharacters
        return clean.count > 40 ? String(clean.prefix(40)) + "…" : clean
    }
}
