import Crypto
import Foundation

/// `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`: HMAC-SHA256 of `t.body` under the
/// endpoint's signing secret. Any `v1` may match any configured secret (Stripe signs with each
/// secret while one is rotated); the timestamp must be within the tolerance of now, so a
/// captured request cannot be replayed later. `v0` and other schemes are ignored.
enum StripeSignature {
    enum Refusal: Error, Equatable {
        case malformed, stale, mismatch

        var message: String {
            switch self {
            case .malformed: "the Stripe-Signature header is missing or malformed"
            case .stale: "the Stripe-Signature timestamp is outside the tolerance"
            case .mismatch: "no Stripe-Signature matches this endpoint's signing secrets"
            }
        }
    }

    static func verify(header: String?, body: Data, secrets: [StripeSecret], now: Int64, tolerance: Int) throws(Refusal) {
        guard let header, header.utf8.count <= 4096 else { throw .malformed }
        var timestamp: Int64?
        var signatures: [Data] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let name = pair[0].trimmingCharacters(in: .whitespaces), value = pair[1].trimmingCharacters(in: .whitespaces)
            if name == "t" { timestamp = Int64(value) }
            if name == "v1", let bytes = hex(value) { signatures.append(bytes) }
        }
        guard let timestamp, !signatures.isEmpty else { throw .malformed }
        guard abs(now - timestamp) <= Int64(tolerance) else { throw .stale }
        var signed = Data("\(timestamp).".utf8)
        signed.append(body)
        for secret in secrets {
            let expected = Data(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.value.utf8))))
            // Every candidate is compared in full (constant time in its content).
            var matched = false
            for signature in signatures where signature.count == expected.count {
                var difference: UInt8 = 0
                for (a, b) in zip(signature, expected) { difference |= a ^ b }
                if difference == 0 { matched = true }
            }
            if matched { return }
        }
        throw .mismatch
    }

    /// The header Stripe would send for `body` at `timestamp` under `secrets` (the double and tests).
    static func header(body: Data, secrets: [String], timestamp: Int64) -> String {
        var signed = Data("\(timestamp).".utf8)
        signed.append(body)
        let parts = secrets.map { secret in
            "v1=" + HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
                .map { String(format: "%02x", $0) }.joined()
        }
        return (["t=\(timestamp)"] + parts).joined(separator: ",")
    }

    private static func hex(_ text: String) -> Data? {
        guard text.count == 64 else { return nil }
        var bytes = Data(capacity: 32)
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
