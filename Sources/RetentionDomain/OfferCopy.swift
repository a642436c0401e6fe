import Foundation

/// Offer copy templating: `{{discount}}` (spaces inside the braces allowed) becomes the discount
/// percent. Other placeholders are left as they are, so a typo shows up instead of vanishing.
public enum OfferCopy {
    public static func render(_ template: String, discountPercent: Int) -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                rest = rest[open.lowerBound...]
                break
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            output += name == "discount" ? String(discountPercent) : String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return output + rest
    }
}
