import Foundation
import RetentionDomain

/// Domain values ⇄ generated API types. Both sides are Codable with the same wire JSON
/// (snake_case keys, ISO-8601 dates without fractions), so a value converts through its JSON; a
/// shape that drifts from the contract fails loudly in tests instead of being mapped by hand.
/// The server and the client both use it.
public enum WireConversion {
    public static func convert<Target: Decodable>(_ value: some Encodable, to type: Target.Type = Target.self) throws -> Target {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let encoder = WireFormat.encoder()
        encoder.dateEncodingStrategy = .iso8601
        return try decoder.decode(Target.self, from: encoder.encode(value))
    }
}
