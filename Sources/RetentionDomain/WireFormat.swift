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
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "expected an ISO-8601 date such as 2026-11-22T11:10:08Z, got \"\(text)\""
                )
            }
            return date
        }
        return decoder
    }

    /// `2026-11-22T11:10:08Z`: whole seconds, UTC.
    public static func formatDate(_ date: Date) -> String {
        let whole = Date(timeIntervalSince1970: (date.timeIntervalSince1970).rounded(.down))
        return whole.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!))
    }

    /// Parses ISO-8601 with or without fractional seconds; nil when the text is not a date.
    public static func parseDate(_ text: String) -> Date? {
        let plain = Date.ISO8601FormatStyle()
        if let date = try? plain.parse(text) { return date }
        if let date = try? plain.year().month().day().time(includingFractionalSeconds: true)
            .timeZone(separator: .omitted).parse(text)
        {
            return date
        }
        return try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
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
