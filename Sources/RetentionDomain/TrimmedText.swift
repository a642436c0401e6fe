extension StringProtocol {
    /// Without the white space (spaces, tabs, line breaks) at either end. The standard library's
    /// own test of white space, not Foundation's `trimmingCharacters(in:)`, which goes through
    /// NSString and CoreFoundation (pages of code the console otherwise never touches).
    public var trimmedOfWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

extension StringProtocol {
    /// Without ASCII control characters (U+0000–U+001F and DEL): text for an error message, a
    /// log line or a query syntax that reads a NUL as its end.
    public var removingControlCharacters: String {
        String(String.UnicodeScalarView(unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    }
}
