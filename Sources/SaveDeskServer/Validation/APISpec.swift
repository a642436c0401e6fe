import Foundation
import SaveDeskAPI
import Yams

/// What `openapi.yaml` says of each operation, read once at start: who may call it
/// (`x-savedesk-audience`), how large its body may be (`x-savedesk-body-limit`), its parameters and
/// the schema of its body with every limit the server enforces. The spec is the single place those
/// rules are written; `RequestValidator` applies them before any handler runs.
struct APISpec: Sendable {
    /// Who may call an operation. Decided from the matched operation, never from the path.
    enum Audience: String, Sendable, CaseIterable {
        /// Apps (publishable keys) and operators (secret keys).
        case app
        /// Operators only (secret keys).
        case `operator`
        /// Operators with a test-mode key: the test clock and the simulators.
        case testOperator = "test_operator"
        /// Apple's App Store Server Notifications: no key, the signed payload is the proof.
        case appleWebhook = "apple_webhook"
        /// Stripe's webhook: no key, the Stripe-Signature over the raw body is the proof (checked
        /// by the API middleware before the body is parsed).
        case stripeWebhook = "stripe_webhook"
        /// Load balancers and orchestrators (`/healthz`, `/readyz`): no key, and nothing about
        /// the data in the answer.
        case anyone
    }

    struct Parameter: Sendable {
        var name: String
        /// query, path or header.
        var location: String
        var required: Bool
        var schema: Schema
    }

    struct Operation: Sendable {
        var id: String
        var method: String
        var path: String
        var audience: Audience
        /// The largest request body accepted, in bytes.
        var bodyLimit: Int
        var parameters: [Parameter]
        var body: Schema?
        var bodyRequired: Bool
        /// The most JSON values a body may hold (`StrictJSON.Limits.maxValues`): twice what a
        /// body the schema allows can hold (room for fields the server ignores), at least 256.
        var bodyValueLimit: Int = StrictJSON.Limits().maxValues
    }

    /// A JSON schema, as far as the server enforces it. Immutable once read.
    final class Schema: Sendable {
        let ref: String?
        /// The schema `ref` names (its last component), split once here rather than per value
        /// checked.
        let refName: String?
        /// "object", "array", "string", "integer", "number", "boolean"; nil accepts any type.
        let type: String?
        let properties: [String: Schema]
        let required: [String]
        let items: Schema?
        let additionalProperties: Schema?
        let minimum: Int64?
        let maximum: Int64?
        let minLength: Int?
        let maxLength: Int?
        let maxItems: Int?
        let maxProperties: Int?
        let enumValues: [String]?
        let format: String?
        /// The one pattern the spec uses: `APISpec.noNUL`.
        let pattern: String?
        /// Alternatives, told apart by their required keys (a sync or a reconcile).
        let oneOf: [Schema]

        init(
            ref: String? = nil, type: String? = nil, properties: [String: Schema] = [:], required: [String] = [],
            items: Schema? = nil, additionalProperties: Schema? = nil, minimum: Int64? = nil, maximum: Int64? = nil,
            minLength: Int? = nil, maxLength: Int? = nil, maxItems: Int? = nil, maxProperties: Int? = nil,
            enumValues: [String]? = nil, format: String? = nil, pattern: String? = nil, oneOf: [Schema] = []
        ) {
            self.ref = ref
            refName = ref.map(APISpec.target(of:))
            self.type = type
            self.properties = properties
            self.required = required
            self.items = items
            self.additionalProperties = additionalProperties
            self.minimum = minimum
            self.maximum = maximum
            self.minLength = minLength
            self.maxLength = maxLength
            self.maxItems = maxItems
            self.maxProperties = maxProperties
            self.enumValues = enumValues
            self.format = format
            self.pattern = pattern
            self.oneOf = oneOf
        }
    }

    struct InvalidSpec: Error, CustomStringConvertible {
        var description: String
    }

    static let defaultBodyLimit = 64 * 1024
    /// "No U+0000 in this text": the only `pattern` the spec uses (on every request string the
    /// server stores or looks up). The validator enforces it; another pattern is refused at load,
    /// so the spec can never ask for a check the server does not make.
    static let noNUL = "^[^\\u0000]*$"

    var operations: [String: Operation]
    var schemas: [String: Schema]

    /// What a `$ref` names: its last component (`#/components/schemas/X` names `X`).
    static func target(of ref: String) -> String {
        String(ref.split(separator: "/").last ?? "")
    }

    /// The schema a `$ref` names, or the schema itself.
    func resolve(_ schema: Schema) -> Schema {
        var current = schema
        var hops = 0
        while let name = current.refName, let target = schemas[name], hops < 16 {
            current = target
            hops += 1
        }
        return current
    }

    /// The methods the API takes on a request path (templates match any segment; empty segments
    /// and a trailing slash are ignored, as the router ignores them).
    func methods(forPath path: String) -> [String] {
        let segments = path.split(separator: "/")
        var methods = Set<String>()
        for operation in operations.values {
            let template = operation.path.split(separator: "/")
            guard template.count == segments.count else { continue }
            if zip(template, segments).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) { methods.insert(operation.method) }
        }
        return methods.sorted()
    }

    /// The spec shipped with SaveDeskAPI, read once.
    static let shipped: Result<APISpec, InvalidSpec> = {
        guard let url = SaveDeskAPIResources.specURL, let text = try? String(contentsOf: url, encoding: .utf8) else {
            return .failure(InvalidSpec(description: "openapi.yaml is missing from this build"))
        }
        do { return .success(try load(yaml: text)) } catch let error as InvalidSpec { return .failure(error) } catch {
            return .failure(InvalidSpec(description: "openapi.yaml cannot be read: \(error)"))
        }
    }()

    static func load(yaml: String) throws -> APISpec {
        guard let root = try Yams.compose(yaml: yaml) else { throw InvalidSpec(description: "openapi.yaml is empty") }
        let components = root["components"]
        var schemas: [String: Schema] = [:]
        for (name, node) in components?["schemas"]?.mapping ?? [:] {
            schemas[name.string ?? ""] = try schema(node)
        }
        var parameterRefs: [String: Parameter] = [:]
        for (name, node) in components?["parameters"]?.mapping ?? [:] {
            parameterRefs[name.string ?? ""] = try parameter(node)
        }
        var operations: [String: Operation] = [:]
        for (pathNode, item) in root["paths"]?.mapping ?? [:] {
            let path = pathNode.string ?? ""
            for (methodNode, node) in item.mapping ?? [:] {
                let method = (methodNode.string ?? "").uppercased()
                guard let id = node["operationId"]?.string else { throw InvalidSpec(description: "\(method) \(path) has no operationId") }
                guard let audienceText = node["x-savedesk-audience"]?.string, let audience = Audience(rawValue: audienceText) else {
                    throw InvalidSpec(description: "\(id) declares no x-savedesk-audience (one of \(Audience.allCases.map(\.rawValue)))")
                }
                let parameters = try (node["parameters"]?.sequence ?? []).map { entry -> Parameter in
                    if let ref = entry["$ref"]?.string {
                        guard let found = parameterRefs[Self.target(of: ref)] else {
                            throw InvalidSpec(description: "\(id): unknown parameter \(ref)")
                        }
                        return found
                    }
                    return try parameter(entry)
                }
                let content = node["requestBody"]?["content"]?["application/json"]?["schema"]
                let limit = node["x-savedesk-body-limit"]?.int ?? defaultBodyLimit
                let body = try content.map(schema)
                operations[id] = Operation(
                    id: id, method: method, path: path, audience: audience, bodyLimit: limit, parameters: parameters,
                    body: body, bodyRequired: node["requestBody"]?["required"]?.bool ?? false
                )
            }
        }
        var spec = APISpec(operations: operations, schemas: schemas)
        for (id, operation) in spec.operations {
            guard let body = operation.body, let most = spec.mostValues(body) else { continue }
            spec.operations[id]?.bodyValueLimit = max(2 * most, 256)
        }
        return spec
    }

    /// The most JSON values a document of `schema` can hold, or nil when the schema sets no bound
    /// (a list without `maxItems`, a map without `maxProperties`).
    func mostValues(_ unresolved: Schema, depth: Int = 0) -> Int? {
        let schema = resolve(unresolved)
        guard depth < 32 else { return nil }
        if !schema.oneOf.isEmpty {
            var most = 0
            for alternative in schema.oneOf {
                guard let count = mostValues(alternative, depth: depth + 1) else { return nil }
                most = max(most, count)
            }
            return most
        }
        switch schema.type {
        case "object":
            var total = 1
            for property in schema.properties.values {
                guard let count = mostValues(property, depth: depth + 1) else { return nil }
                total += count
            }
            if let additional = schema.additionalProperties {
                guard let entries = schema.maxProperties, let count = mostValues(additional, depth: depth + 1) else { return nil }
                total += entries * count
            }
            return total
        case "array":
            guard let items = schema.maxItems else { return nil }
            var each = 1
            if let itemSchema = schema.items {
                guard let count = mostValues(itemSchema, depth: depth + 1) else { return nil }
                each = count
            }
            return 1 + items * each
        default:
            return 1
        }
    }

    private static func parameter(_ node: Node) throws -> Parameter {
        guard let name = node["name"]?.string, let location = node["in"]?.string, let schemaNode = node["schema"] else {
            throw InvalidSpec(description: "a parameter needs name, in and schema")
        }
        return Parameter(name: name, location: location, required: node["required"]?.bool ?? false, schema: try schema(schemaNode))
    }

    private static func pattern(_ node: Node) throws -> String? {
        guard let pattern = node["pattern"]?.string else { return nil }
        guard pattern == noNUL else {
            throw InvalidSpec(description: "the pattern \(pattern) is not one the server checks (only \(noNUL))")
        }
        return pattern
    }

    private static func schema(_ node: Node) throws -> Schema {
        var properties: [String: Schema] = [:]
        for (key, value) in node["properties"]?.mapping ?? [:] { properties[key.string ?? ""] = try schema(value) }
        let additional = node["additionalProperties"].flatMap { $0.mapping != nil ? $0 : nil }
        return Schema(
            ref: node["$ref"]?.string, type: node["type"]?.string, properties: properties,
            required: (node["required"]?.sequence ?? []).compactMap(\.string), items: try node["items"].map(schema),
            additionalProperties: try additional.map(schema), minimum: node["minimum"]?.int.map(Int64.init),
            maximum: node["maximum"]?.int.map(Int64.init), minLength: node["minLength"]?.int, maxLength: node["maxLength"]?.int,
            maxItems: node["maxItems"]?.int, maxProperties: node["maxProperties"]?.int,
            enumValues: node["enum"]?.sequence?.compactMap(\.string), format: node["format"]?.string, pattern: try pattern(node),
            oneOf: try (node["oneOf"]?.sequence ?? []).map(schema)
        )
    }
}
