import Foundation
import Testing

/// openapi.yaml lists every error code the server answers with (`x-savedesk-errors`: the code, its
/// statuses, when): a code written in the server's source that the list lacks fails here, before
/// a client meets it (the fuzz stage checks the statuses of what it sees answered).
@Suite("Error codes")
struct ErrorCodeTests {
    /// Codes of errors that stop the server from starting: never an HTTP answer.
    static let startupOnly: Set<String> = ["invalid_database", "not_started"]

    static func listed() throws -> Set<String> {
        let spec = try String(contentsOf: LayerImportTests.root.appendingPathComponent("Sources/SaveDeskAPI/openapi.yaml"), encoding: .utf8)
        let lines = spec.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "x-savedesk-errors:") else { return [] }
        let entry = try Regex(#"^  ([a-z_]+): \{ status: \["#)
        return Set(lines[(start + 1)...].prefix { $0.hasPrefix(" ") || $0.isEmpty }.compactMap { line in
            (try? entry.firstMatch(in: String(line)))?.output[1].substring.map(String.init)
        })
    }

    /// `code: "…"` in the server's sources, and the codes the domain's problems answer with.
    static func written() throws -> Set<String> {
        var codes = Set<String>()
        let literal = try Regex(#"code: "([a-z_]+)""#)
        let reject = try Regex(#"reject\("([a-z_]+)""#)
        let returned = try Regex(#"^\s*case [^:]+: "([a-z_]+)"$"#)
        for target in ["SaveDeskServer", "RetentionDomain"] {
            for file in LayerImportTests.swiftFiles(in: target) {
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: literal) { codes.insert(String(match.output[1].substring ?? "")) }
                for match in text.matches(of: reject) { codes.insert(String(match.output[1].substring ?? "")) }
                // `var code: String { switch self { case …: "unknown_option" } }`
                if target == "RetentionDomain", let body = text.range(of: "public var code: String {") {
                    for line in text[body.upperBound...].split(separator: "\n").prefix(8) {
                        if let match = try? returned.firstMatch(in: String(line)) { codes.insert(String(match.output[1].substring ?? "")) }
                    }
                }
            }
        }
        return codes
    }

    @Test func everyCodeTheServerWritesIsListed() throws {
        let listed = try Self.listed()
        let written = try Self.written()
        #expect(listed.count > 50 && written.count > 50, "the scans found the list and the sources")
        let unlisted = written.subtracting(listed).subtracting(Self.startupOnly)
        #expect(unlisted.isEmpty, "not in x-savedesk-errors: \(unlisted.sorted())")
        #expect(written.isSuperset(of: ["unknown_option", "jws_bad_signature", "rate_limited"]))
    }
}
