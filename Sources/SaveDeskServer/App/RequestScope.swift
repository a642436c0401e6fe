import Foundation

/// Who is asking and which request this is, set by the API middleware for the handler's task.
struct RequestScope: Sendable {
    /// The name written to the audit trail: the operator, "app", or the portal's customer.
    var actor: String
    /// Whose idempotency keys these are: a digest of the API key, never the key itself.
    var principal: String
    var requestId: String
    /// Live data (`*_live_*` keys, Production App Store data) or test data. A request only ever
    /// sees and changes data of its own mode.
    var livemode: Bool
    /// The digest of what the request asks (operation, path parameters, canonical body), which an
    /// Idempotency-Key is bound to.
    var fingerprint: String?

    /// True for test-mode keys (`*_test_*`).
    var isSandbox: Bool { !livemode }

    @TaskLocal static var current: RequestScope?

    init(key: APIKey, requestId: String, fingerprint: String? = nil) {
        actor = key.actor
        principal = key.principal
        self.requestId = requestId
        livemode = key.mode == .live
        self.fingerprint = fingerprint
    }

    init(actor: String, principal: String, requestId: String, livemode: Bool) {
        self.actor = actor
        self.principal = principal
        self.requestId = requestId
        self.livemode = livemode
    }

    static func newRequestId() -> String { "req_" + UUID().uuidString.lowercased().prefix(18) }
}

/// SHA-256 hex digests for fingerprints and principals.
enum Fingerprint {
    static func of(text: String) -> String {
        of(data: Data(text.utf8))
    }

    static func of(data: Data) -> String {
        SHA256Hex.digest(data)
    }

    /// The digest of a value's canonical JSON (sorted keys).
    static func of(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return of(data: try encoder.encode(value))
    }
}

import Crypto

enum SHA256Hex {
    static func digest(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}
