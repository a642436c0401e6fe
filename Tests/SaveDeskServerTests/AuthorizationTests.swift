import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// Who may call what is decided from the matched operation (its `x-savedesk-audience` in
/// openapi.yaml), never from the path string.
@Suite("Authorization by operation")
struct AuthorizationTests {
    /// Paths that name the customer search in ways a router may or may not normalise.
    static let variants = [
        "/v1/desk/customers?query=a", "//v1/desk/customers?query=a", "/v1//desk/customers?query=a",
        "/v1/desk//customers?query=a", "/./v1/desk/customers?query=a", "/v1/./desk/customers?query=a",
        "/v1/desk%2Fcustomers?query=a", "/v1%2Fdesk%2Fcustomers?query=a", "/V1/DESK/customers?query=a",
        "/v1/Desk/customers?query=a", "/v1/desk/customers/?query=a", "/v1/desk/customers//?query=a",
        "/v1/iap/../desk/customers?query=a", "/v1/webhooks/../desk/customers?query=a", "//v1//desk//customers//?query=a",
    ]

    @Test func noPathVariantLetsAPublishableKeyReachOperatorData() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        for path in Self.variants {
            let app = await RawHTTP.get(port: server.running.port, path, key: TestServer.appKey)
            let desk = await RawHTTP.get(port: server.running.port, path, key: TestServer.operatorKey)
            #expect([403, 404].contains(app.status), "\(path): publishable key got \(app.status)")
            #expect(!app.body.contains("@example.com"), "\(path): no customer data for an app key")
            #expect(app.body.contains(#""code""#), "\(path): answered in the envelope")
            // The same decision for every form that reaches the operation, or no operation at all.
            #expect([200, 404].contains(desk.status), "\(path): operator key got \(desk.status)")
            if desk.status == 200 {
                #expect(app.status == 403 && app.body.contains("secret_key_required"), "\(path)")
            }
        }
        // The webhook takes no key; nothing else does.
        let webhook = await RawHTTP.get(port: server.running.port, "/v1/webhooks/appstore-notifications", key: nil)
        #expect(webhook.status == 404 || webhook.status == 405)
    }

    @Test func everyOperationDeclaresAnAudienceAndTheServerEnforcesIt() async throws {
        let spec = try APISpec.shipped.get()
        // The shipped spec and the source file are the same document.
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/SaveDeskAPI/openapi.yaml")
        let fromSource = try APISpec.load(yaml: String(contentsOf: source, encoding: .utf8))
        #expect(Set(spec.operations.keys) == Set(fromSource.operations.keys))
        #expect(spec.operations.count >= 35)
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // Every operation, called with the wrong kind of key, is refused by its audience before
        // anything else is looked at (bodies are empty on purpose).
        for operation in spec.operations.values {
            let path = operation.path.replacingOccurrences(of: "{customer_id}", with: "cus_ava")
                .replacingOccurrences(of: "{transaction_id}", with: "txn_x")
            let request = "\(operation.method) \(path) HTTP/1.1\r\nHost: x\r\nX-ZeroSettle-Key: \(TestServer.appKey)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            let reply = await RawHTTP.exchange(port: server.running.port, request)
            switch operation.audience {
            case .operator, .testOperator:
                #expect(reply.status == 403 && reply.body.contains("secret_key_required"), "\(operation.id): \(reply.status)")
            case .app, .appleWebhook, .anyone:
                #expect(reply.status != 403 && reply.status != 401, "\(operation.id): \(reply.status)")
            case .stripeWebhook:
                // No key asked for: without its Stripe-Signature (and with no Stripe account on the
                // demo) it is refused as a bad request, never as a key problem.
                #expect(reply.status == 400 && reply.body.contains("missing_parameter"), "\(operation.id): \(reply.status)")
            }
            let anonymous = "\(operation.method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            let noKey = await RawHTTP.exchange(port: server.running.port, anonymous)
            #expect((noKey.status == 401) == ![.appleWebhook, .stripeWebhook, .anyone].contains(operation.audience), "\(operation.id) without a key: \(noKey.status)")
        }
    }

    /// Every value a client sends has a limit in the spec: strings a maxLength, whole numbers a
    /// range, lists a maxItems, free maps a maxProperties.
    @Test func everyRequestValueHasALimitInTheSpec() throws {
        let spec = try APISpec.shipped.get()
        var missing: [String] = []
        func walk(_ schema: APISpec.Schema, _ path: String, depth: Int = 0) {
            let resolved = spec.resolve(schema)
            guard depth < 8 else { return }
            for alternative in resolved.oneOf { walk(alternative, path, depth: depth + 1) }
            switch resolved.type {
            case "string" where resolved.maxLength == nil && resolved.enumValues == nil && resolved.format == nil:
                missing.append(path)
            case "integer" where resolved.minimum == nil || resolved.maximum == nil:
                missing.append(path)
            case "array":
                if resolved.maxItems == nil { missing.append(path) }
                if let items = resolved.items { walk(items, path + "[]", depth: depth + 1) }
            case "object":
                if resolved.additionalProperties != nil, resolved.maxProperties == nil { missing.append(path) }
                for (key, property) in resolved.properties { walk(property, "\(path).\(key)", depth: depth + 1) }
                if let additional = resolved.additionalProperties { walk(additional, path + ".*", depth: depth + 1) }
            default:
                break
            }
        }
        for operation in spec.operations.values {
            for parameter in operation.parameters { walk(parameter.schema, "\(operation.id) \(parameter.name)") }
            if let body = operation.body { walk(body, "\(operation.id) body") }
        }
        #expect(missing.isEmpty, "no limit: \(missing.sorted())")
    }
}
