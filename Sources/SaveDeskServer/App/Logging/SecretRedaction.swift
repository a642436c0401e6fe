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
        let lower = text.lowercased()
        guard triggers.contains(where: { lower.contains($0) }) else { return text }
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
}
