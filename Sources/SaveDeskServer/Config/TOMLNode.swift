import Foundation
import RetentionDomain
import TOMLKit

/// Collects config problems while a TOML document is read.
final class IssueCollector {
    var issues: [ConfigIssue] = []
    func add(_ path: String, _ message: String) { issues.append(ConfigIssue(path: path, message: message)) }
}

/// A TOML table being read at a path. Every accessor records a problem (with its path) instead
/// of throwing, so one pass reports every error in the file; unknown keys are problems too.
struct TOMLNode {
    let table: TOMLTable
    let path: String
    let issues: IssueCollector

    func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Reports keys this table should not have (a typo must not be silently ignored).
    func allowOnly(_ keys: Set<String>) {
        for key in table.keys.sorted() where !keys.contains(key) {
            issues.add(child(key), "unknown key")
        }
    }

    func has(_ key: String) -> Bool { table[key] != nil }

    func string(_ key: String, required: Bool = true) -> String? {
        guard let value = table[key] else {
            if required { issues.add(child(key), "missing") }
            return nil
        }
        guard let text = value.string else {
            issues.add(child(key), "expected text, got \(value.type)")
            return nil
        }
        if required, text.trimmingCharacters(in: .whitespaces).isEmpty {
            issues.add(child(key), "must not be empty")
            return nil
        }
        return text
    }

    func int(_ key: String, required: Bool = true, in range: ClosedRange<Int>? = nil) -> Int? {
        guard let value = table[key] else {
            if required { issues.add(child(key), "missing") }
            return nil
        }
        guard let number = value.int else {
            issues.add(child(key), "expected a whole number, got \(value.type)")
            return nil
        }
        if let range, !range.contains(number) {
            issues.add(child(key), "must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
            return nil
        }
        return number
    }

    /// A number (whole or not); nil when absent.
    func double(_ key: String, in range: ClosedRange<Double>) -> Double? {
        guard let value = table[key] else { return nil }
        guard let number = value.double ?? value.int.map(Double.init) else {
            issues.add(child(key), "expected a number, got \(value.type)")
            return nil
        }
        guard range.contains(number) else {
            issues.add(child(key), "must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
            return nil
        }
        return number
    }

    func bool(_ key: String, default fallback: Bool) -> Bool {
        guard let value = table[key] else { return fallback }
        guard let flag = value.bool else {
            issues.add(child(key), "expected true or false, got \(value.type)")
            return fallback
        }
        return flag
    }

    func strings(_ key: String) -> [String] {
        guard let value = table[key] else { return [] }
        guard let array = value.array else {
            issues.add(child(key), "expected a list of text, got \(value.type)")
            return []
        }
        return array.enumerated().compactMap { index, element in
            guard let text = element.string else {
                issues.add("\(child(key))[\(index)]", "expected text, got \(element.type)")
                return nil
            }
            return text
        }
    }

    func ints(_ key: String) -> [Int] {
        guard let value = table[key] else { return [] }
        guard let array = value.array else {
            issues.add(child(key), "expected a list of whole numbers, got \(value.type)")
            return []
        }
        return array.enumerated().compactMap { index, element in
            guard let number = element.int else {
                issues.add("\(child(key))[\(index)]", "expected a whole number, got \(element.type)")
                return nil
            }
            return number
        }
    }

    func table(_ key: String, required: Bool = false) -> TOMLNode? {
        guard let value = table[key] else {
            if required { issues.add(child(key), "missing") }
            return nil
        }
        guard let inner = value.table else {
            issues.add(child(key), "expected a table, got \(value.type)")
            return nil
        }
        return TOMLNode(table: inner, path: child(key), issues: issues)
    }

    /// An array of tables (`[[key]]`).
    func tables(_ key: String) -> [TOMLNode] {
        guard let value = table[key] else { return [] }
        guard let array = value.array else {
            issues.add(child(key), "expected a list of tables, got \(value.type)")
            return []
        }
        return array.enumerated().compactMap { index, element in
            guard let inner = element.table else {
                issues.add("\(child(key))[\(index)]", "expected a table, got \(element.type)")
                return nil
            }
            return TOMLNode(table: inner, path: "\(child(key))[\(index)]", issues: issues)
        }
    }

    /// A date written as TOML date-time or as ISO-8601 text.
    func date(_ key: String, required: Bool = true) -> Date? {
        guard let value = table[key] else {
            if required { issues.add(child(key), "missing") }
            return nil
        }
        if let dateTime = value.dateTime {
            // TOML offsets are minutes east of UTC; a local date-time is read as UTC.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .gmt
            let parts = DateComponents(
                year: dateTime.date.year, month: dateTime.date.month, day: dateTime.date.day,
                hour: dateTime.time.hour, minute: dateTime.time.minute, second: dateTime.time.second
            )
            if let date = calendar.date(from: parts) {
                return date.addingTimeInterval(-TimeInterval((dateTime.offset?.offset ?? 0) * 60))
            }
        }
        if let text = value.string, let date = WireFormat.parseDate(text) { return date }
        issues.add(child(key), "expected a date such as 2027-01-01T00:00:00Z")
        return nil
    }

    /// A price written as text ("7.99") in `currency`, as micros. Numbers are refused: a TOML
    /// float cannot hold every price exactly.
    func price(_ key: String, currency: String) -> Price? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else {
            issues.add(child(key), "write the price as text, such as \"7.99\" (got \(value.type))")
            return nil
        }
        guard let micros = Self.micros(text) else {
            issues.add(child(key), "expected a price such as \"7.99\", got \"\(text)\"")
            return nil
        }
        guard micros > 0 else {
            issues.add(child(key), "must be more than zero")
            return nil
        }
        return Price(amountMicros: micros, currencyCode: currency)
    }

    /// Exact decimal text → micros ("7.99" → 7_990_000); nil for anything else.
    static func micros(_ text: String) -> Int64? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = Int64(parts[0]), whole >= 0, !parts[0].hasPrefix("+") else {
            return nil
        }
        var fraction: Int64 = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...6).contains(digits.count), digits.allSatisfy(\.isASCII), let value = Int64(digits), value >= 0,
                !digits.hasPrefix("+")
            else { return nil }
            fraction = value * Int64(pow(10.0, Double(6 - digits.count)))
        }
        return whole * 1_000_000 + fraction
    }
}
