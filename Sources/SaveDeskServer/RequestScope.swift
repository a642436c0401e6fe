import Foundation

/// Who is asking and which request this is, set by the API middleware for the handler's task.
struct RequestScope: Sendable {
    /// The name written to the audit trail: the operator, "app", or the portal's customer.
    var actor: String
    /// Whose idempotency keys these are: a digest of the API key, never the key itself.
    var principal: String
    var requestId: String
    /// True for test-mode keys (`*_test_*`).
    var isSandbox: Bool

    @TaskLocal static var current: RequestScope?

    init(key: APIKey, requestId: String) {
        actor = key.actor
        principal = Fingerprint.of(text: key.key)
        self.requestId = requestId
        isSandbox = key.mode == .test
    }

    init(actor: String, principal: String, requestId: String, isSandbox: Bool = false) {
        self.actor = actor
        self.principal = principal
        self.requestId = requestId
        self.isSandbox = isSandbox
    }
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
