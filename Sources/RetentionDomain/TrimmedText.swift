extension StringProtocol {
    /// Without the white space (spaces, tabs, line breaks) at either end. The standard library's
    /// own test of white space, not Foundation's `trimmingCharacters(in:)`, which goes through
    /// NSString and CoreFoundation (pages of code the console otherwise never touches).
    public var trimmedOfWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
