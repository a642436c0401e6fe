import Foundation
import RetentionDomain

/// An API key from the config. The prefix decides its kind and mode: `pk_test_…`, `pk_live_…`
/// and the SDK's own format `zs_pk_test_…`, `zs_pk_live_…` (publishable, for apps), and
/// `sk_test_…`, `sk_live_…` (secret, for operators; each bound to an operator name).
public struct APIKey: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable { case publishable, secret }
    public enum Mode: String, Hashable, Sendable { case test, live }

    public var key: String
    public var kind: Kind
    public var mode: Mode
    /// The operator name secret keys act as; publishable keys act as "app".
    public var operatorName: String?
    /// Whose idempotency records these are: a digest of the key (computed once, not per request).
    let principal: String

    /// Reads kind and mode from the prefix; nil when the prefix is not one of the four.
    public init?(key: String, operatorName: String? = nil) {
        let prefixes: [(String, Kind, Mode)] = [
            ("pk_test_", .publishable, .test), ("pk_live_", .publishable, .live),
            ("zs_pk_test_", .publishable, .test), ("zs_pk_live_", .publishable, .live),
            ("sk_test_", .secret, .test), ("sk_live_", .secret, .live),
        ]
        guard let (_, kind, mode) = prefixes.first(where: { key.hasPrefix($0.0) }) else { return nil }
        self.key = key
        self.kind = kind
        self.mode = mode
        self.operatorName = operatorName
        principal = Fingerprint.of(text: key)
    }

    /// The name written to the audit trail for this key.
    public var actor: String { kind == .secret ? (operatorName ?? "operator") : "app" }
}

/// The configured keys. Lookup compares SHA-256 digests of every configured key with the
/// presented one in constant time, so neither timing nor length tells how close a guess was.
public struct KeyRing: Sendable {
    /// Every configured key's digest, one after another (`SHA256Digest.size` bytes each), in the
    /// order of `keys`: one flat buffer compared in one pass, with no per-key copies.
    private let digests: [UInt8]
    private let keys: [APIKey]

    public init(_ keys: [APIKey]) {
        self.keys = keys
        digests = keys.flatMap { SHA256Digest.hash($0.key.utf8) }
    }

    public func lookup(_ presented: String) -> APIKey? {
        let digest = SHA256Digest.hash(presented.utf8)
        let size = digest.count
        // Every byte of every entry is compared; only the index of a full match is kept.
        var found = -1
        digests.withUnsafeBufferPointer { all in
            digest.withUnsafeBufferPointer { mine in
                for entry in 0..<keys.count {
                    var difference: UInt8 = 0
                    for index in 0..<size { difference |= mine[index] ^ all[entry * size + index] }
                    if difference == 0 { found = entry }
                }
            }
        }
        return found >= 0 ? keys[found] : nil
    }
}
