import Foundation

/// JSON coding as the wire protocol wants it: snake_case keys (spelled out in each type's
/// `CodingKeys`, so that dictionary keys such as product ids are never rewritten) and dates as
/// ISO-8601 in UTC **without fractional seconds** (`2026-11-22T11:10:08Z`). Decoding also accepts
/// fractional seconds and offsets, so a lenient peer is still understood.
public enum WireFormat {
    /// An encoder for wire bodies. Keys are sorted so that output is stable (fixtures, goldens).
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatDate(date))
        }
        return encoder
    }

    /// A decoder for wire bodies.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: notADate(text))
            }
            return date
        }
        return decoder
    }

    /// What a text that `parseDate` refuses is told.
    public static func notADate(_ text: String) -> String {
        "expected an ISO-8601 date such as 2026-11-22T11:10:08Z, got \"\(text)\""
    }

    /// `2026-11-22T11:10:08Z`: whole seconds, UTC. Computed from the proleptic Gregorian
    /// calendar directly (no `Calendar`, `TimeZone` or ICU). A date outside years 0000–9999 (which
    /// `parseDate` cannot read back) is written as the nearest end of that range, never trapped on.
    public static func formatDate(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let seconds = interval.isNaN ? 0 : Int64(min(max(interval, -62_167_219_200), 253_402_300_799).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let digits = String(abs(year))
        let yearText = (year < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return "\(yearText)-\(two(month))-\(two(day))T\(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60))Z"
    }

    /// Parses an RFC 3339 date-time (`2026-11-22T11:10:08Z`, with or without fractional seconds,
    /// `Z` or an offset `+01:00`/`+0100`); nil when the text is not one or a field is out of range
    /// (month 13, February 30, minute 99 are refused, not rolled over).
    public static func parseDate(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 64 else { return nil }
        func number(_ at: Int, _ count: Int) -> Int64? {
            guard at + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[at..<at + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == 0x2D, let month = number(5, 2), bytes[7] == 0x2D, let day = number(8, 2),
              bytes[10] == 0x54 || bytes[10] == 0x74, let hour = number(11, 2), bytes[13] == 0x3A, let minute = number(14, 2),
              bytes[16] == 0x3A, let second = number(17, 2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == 0x2E {
            index += 1
            var scale = 0.1
            let first = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > first else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case 0x5A, 0x7A:
            index += 1
        case 0x2B, 0x2D:
            let sign: Int64 = bytes[index] == 0x2D ? -1 : 1
            guard let hours = number(index + 1, 2) else { return nil }
            var minutes: Int64?
            if index + 3 < bytes.count, bytes[index + 3] == 0x3A {
                minutes = number(index + 4, 2)
                index += 6
            } else {
                minutes = number(index + 3, 2)
                index += 5
            }
            guard let minutes, (0...23).contains(hours), (0...59).contains(minutes) else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// A string enum on the wire that keeps values it does not know instead of failing to decode,
/// so that a newer server never breaks an older client. Known values may have aliases
/// (`canceled` for `cancelled`); encoding always writes the canonical spelling.
public protocol WireEnum: Codable, Hashable, Sendable, CustomStringConvertible {
    /// Every known case, in a stable order.
    static var knownCases: [Self] { get }
    /// The canonical wire spelling of this value.
    var wireValue: String { get }
    /// Other spellings accepted for a known case.
    static var aliases: [String: Self] { get }
    /// The value for a spelling that is not known.
    init(unknown wireValue: String)
}

extension WireEnum {
    public static var aliases: [String: Self] { [:] }

    /// The known case for a spelling (canonical or alias), or the unknown case keeping it.
    public init(wireValue: String) {
        if let known = Self.knownCases.first(where: { $0.wireValue == wireValue }) {
            self = known
        } else if let alias = Self.aliases[wireValue] {
            self = alias
        } else {
            self.init(unknown: wireValue)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(wireValue: try container.decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireValue)
    }

    public var description: String { wireValue }

    /// True when the value is one of the known cases.
    public var isKnown: Bool { Self.knownCases.contains(self) }
}
