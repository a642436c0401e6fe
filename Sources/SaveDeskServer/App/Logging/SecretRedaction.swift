import Foundation

/// What no log line may carry, taken out in one place (`RedactingLogHandler` runs every log line
/// of the server through it, whatever its level or path): API keys (`sk_…`, `pk_…`, `rk_…`, the
/// SDK's `zs_pk_…`), bearer credentials, the values of the `Authorization`, `X-ZeroSettle-Key`,
/// `Stripe-Signature` and cookie headers, portal tokens, webhook signing secrets (`whsec_…`),
/// payment client secrets (`…_secret_…`), HMAC signatures (`v1=…`) and passwords in URLs.
/// What is left says which kind of secret stood there (`sk_test_[redacted]`), never its value.
public enum SecretRedaction {
    public static let mark = "[redacted]"

    /// Text that may hold one of the secrets above, with each replaced by `mark`.
    public static func redact(_ text: String) -> String {
        // Most lines hold none of the triggers: no pattern runs for them.
        guard mayHold(text) else { return text }
        var result = text
        // Header values, as a request's description prints them ("authorization: Bearer …;").
        result.replace(#/(?i)\b(authorization|x-zerosettle-key|stripe-signature|cookie|set-cookie)(["']?\s*[:=]\s*["']?)[^;,\]\n"']*/#) {
            "\($0.output.1)\($0.output.2)\(mark)"
        }
        result.replace(#/(?i)\bbearer\s+[A-Za-z0-9._~+\/=-]+/#) { _ in "Bearer \(mark)" }
        result.replace(#/\b((?:zs_)?(?:sk|pk|rk)_(?:test|live)_)[A-Za-z0-9_]+/#) { "\($0.output.1)\(mark)" }
        result.replace(#/\bwhsec_[A-Za-z0-9_]+/#) { _ in "whsec_\(mark)" }
        result.replace(#/_secret_[A-Za-z0-9]+/#) { _ in "_secret_\(mark)" }
        result.replace(#/\bv1=[0-9a-fA-F]{16,}/#) { _ in "v1=\(mark)" }
        result.replace(#/\/portal\/[0-9a-fA-F]{16,}/#) { _ in "/portal/\(mark)" }
        result.replace(#/(:\/\/[^:\/@\s]+):[^@\s\/]+@/#) { "\($0.output.1):\(mark)@" }
        return result
    }

    private static let triggers = ["_test_", "_live_", "bearer", "authorization", "zerosettle", "signature", "cookie", "portal/",
                                   "whsec_", "_secret_", "v1=", "://"]
    private static let triggerBytes = triggers.map { Array($0.utf8) }

    /// Whether `text` holds one of the triggers, ignoring case. This runs on the message and every
    /// metadata value of every log line (the access log's ten fields per request): an ASCII text
    /// is read once, byte by byte, with nothing allocated. (Lowercasing it and asking Foundation's
    /// `contains` for each trigger went through NSString: about a third of the CPU time of a
    /// request that only reads, with the access log on.) Text with other characters is
    /// lowercased first, as Unicode lowercases it.
    static func mayHold(_ text: String) -> Bool {
        var text = text
        let ascii = text.withUTF8 { bytes -> Bool? in
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte >= 0x80 { return nil }
                let first = lowercased(byte)
                for trigger in triggerBytes where trigger[0] == first && index + trigger.count <= bytes.count {
                    var next = 1
                    while next < trigger.count, lowercased(bytes[index + next]) == trigger[next] { next += 1 }
                    if next == trigger.count { return true }
                }
                index += 1
            }
            return false
        }
        if let ascii { return ascii }
        let lower = text.lowercased()
        return triggers.contains { lower.utf8.firstRange(of: $0.utf8) != nil }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
}
