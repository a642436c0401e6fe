import Foundation

/// Money on the wire: catalog prices in micros, checkout amounts in minor units (cents).
/// Arithmetic is on integers; formatting does not depend on the machine's locale.
public enum Money {
    /// Digits after the decimal point for a currency (0 for JPY and KRW, otherwise 2).
    public static func minorUnitDigits(_ currencyCode: String) -> Int {
        ["JPY", "KRW", "VND", "CLP", "ISK"].contains(currencyCode.uppercased()) ? 0 : 2
    }

    /// Micros → minor units (cents), rounding half up: 4_990_000 → 499.
    public static func minorUnits(fromMicros micros: Int64, currencyCode: String) -> Int64 {
        let divisor = pow10(6 - minorUnitDigits(currencyCode))
        return roundedDivision(micros, by: divisor)
    }

    /// Minor units → micros: 499 → 4_990_000.
    public static func micros(fromMinorUnits minor: Int64, currencyCode: String) -> Int64 {
        minor * pow10(6 - minorUnitDigits(currencyCode))
    }

    /// The price after `percentOff` percent, rounded half up to the currency's minor unit.
    public static func discounted(micros: Int64, percentOff: Int, currencyCode: String) -> Int64 {
        let percent = Int64(min(max(percentOff, 0), 100))
        let unit = pow10(6 - minorUnitDigits(currencyCode))
        let raw = micros * (100 - percent)
        return roundedDivision(raw, by: 100 * unit) * unit
    }

    /// "$4.99", "€12.00", "¥500", "12.00 SEK".
    public static func format(micros: Int64, currencyCode: String) -> String {
        format(minorUnits: minorUnits(fromMicros: micros, currencyCode: currencyCode), currencyCode: currencyCode)
    }

    /// "$4.99" from 499 cents.
    public static func format(minorUnits: Int64, currencyCode: String) -> String {
        let code = currencyCode.uppercased()
        let digits = minorUnitDigits(code)
        let sign = minorUnits < 0 ? "-" : ""
        let magnitude = minorUnits.magnitude
        var number = String(magnitude / UInt64(pow10(digits)))
        if digits > 0 {
            let fraction = String(magnitude % UInt64(pow10(digits)))
            number += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        if let symbol = symbols[code] { return sign + symbol + number }
        return sign + number + " " + code
    }

    /// "$4.99/month".
    public static func format(_ price: Price, per interval: BillingInterval?) -> String {
        format(micros: price.amountMicros, currencyCode: price.currencyCode) + (interval.map(suffix) ?? "")
    }

    /// "/week", "/month", "/year".
    public static func suffix(_ interval: BillingInterval) -> String { "/" + interval.wireValue }

    private static let symbols: [String: String] = [
        "USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CAD": "CA$", "AUD": "A$", "INR": "₹", "KRW": "₩",
    ]

    private static func pow10(_ exponent: Int) -> Int64 {
        (0..<max(exponent, 0)).reduce(Int64(1)) { value, _ in value * 10 }
    }

    private static func roundedDivision(_ value: Int64, by divisor: Int64) -> Int64 {
        value >= 0 ? (value + divisor / 2) / divisor : -((-value + divisor / 2) / divisor)
    }
}
