import Foundation
import OpenAPIRuntime
import RetentionDomain
import SaveDeskAPI

/// Domain values ⇄ generated API types. Both sides are Codable with the same wire JSON
/// (snake_case keys, ISO-8601 dates without fractions), so a value converts through its JSON; a
/// shape that drifts from the contract fails loudly in tests instead of being mapped by hand.
enum WireMapping {
    static func convert<Target: Decodable>(_ value: some Encodable, to type: Target.Type = Target.self) throws -> Target {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(Target.self, from: WireFormat.encoder().encode(value))
    }

    static func entitlement(_ entitlement: Entitlement) throws -> Components.Schemas.Entitlement {
        try convert(entitlement)
    }

    /// A JSON object written by the store (audit parameters and states).
    static func object(_ json: String) throws -> OpenAPIObjectContainer {
        try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(json.utf8))
    }
}
