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
}
