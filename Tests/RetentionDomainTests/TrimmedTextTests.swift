import Testing

@testable import RetentionDomain

@Suite("Trimmed text")
struct TrimmedTextTests {
    @Test(arguments: [
        ("  ava  ", "ava"), ("\t\nava smith\r\n", "ava smith"), ("", ""), ("   ", ""), ("a b", "a b"),
        ("\u{00A0}café\u{2003}", "café"), ("x\u{200B}", "x\u{200B}"),
    ])
    func whiteSpaceAtEitherEndGoes(text: String, expected: String) {
        #expect(text.trimmedOfWhitespace == expected)
        #expect(text[...].trimmedOfWhitespace == expected)
    }

    /// A quote, a percent sign or an underscore that a combining mark or an emoji modifier follows
    /// is one grapheme with it, so `replacingOccurrences(of:)` misses it; the escapes do not.
    @Test func escapesSeeEveryScalarEvenInsideAGrapheme() {
        let quote = "\"\u{1F3FB}x\"\u{301}"
        #expect(quote.replacingOccurrences(of: "\"", with: "\"\"") == quote, "String's comparison misses both")
        #expect(quote.replacingScalars { $0 == "\"" ? "\"\"" : nil } == "\"\"\u{1F3FB}x\"\"\u{301}")
        #expect("%\u{301}_\u{301}\\".escapedForLike == "\\%\u{301}\\_\u{301}\\\\")
        #expect("plain".replacingScalars { _ in nil } == "plain")
    }
}
