extension StringProtocol {
    /// Without the white space (spaces, tabs, line breaks) at either end. The standard library's
    /// own test of white space, not Foundation's `trimmingCharacters(in:)`, which goes through
    /// NSString and CoreFoundation (pages of code the console otherwise never touches).
    /// By index, not by `drop(while:)` and `reversed()`: those build generic collection types
    /// (reversed slices of reversed substrings), each looked up among every conformance of the
    /// binary the first time it is used.
    public var trimmedOfWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}

extension StringProtocol {
    /// Without ASCII control characters (U+0000–U+001F and DEL): text for an error message, a
    /// log line or a query syntax that reads a NUL as its end.
    public var removingControlCharacters: String {
        String(String.UnicodeScalarView(unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    }
}

extension StringProtocol {
    /// Each Unicode scalar that `replacement` gives text for, replaced by it; the others kept.
    /// Scalar by scalar, not `Character` by `Character`: a quote followed by a combining mark or
    /// an emoji modifier is one grapheme to `String`'s comparisons (so `replacingOccurrences(of:
    /// "\"")` would miss it), but it is still a quote to an HTML parser, SQL or FTS5. Every escape
    /// for another syntax goes through here.
    public func replacingScalars(_ replacement: (Unicode.Scalar) -> String?) -> String {
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if let text = replacement(scalar) { out.append(contentsOf: text.unicodeScalars) } else { out.append(scalar) }
        }
        return String(out)
    }

    /// The text as a LIKE pattern's literal part, with `\` as the escape character.
    public var escapedForLike: String {
        replacingScalars {
            switch $0 {
            case "\\", "%", "_": "\\" + String($0)
            default: nil
            }
        }
    }
}
