import Foundation
import OpenAPIRuntime
import RetentionDomain
import SaveDeskAPI

/// Domain values as generated API types (through `WireConversion`, shared with the client).
enum WireMapping {
    static func convert<Target: Decodable>(_ value: some Encodable, to type: Target.Type = Target.self) throws -> Target {
        try WireConversion.convert(value, to: type)
    }

    /// An entitlement as the SDK reads it: a trial is `active` with `is_trial` (the SDK knows no
    /// `trialing`, and would treat it as neither active nor paused).
    static func entitlement(_ entitlement: Entitlement) throws -> Components.Schemas.Entitlement {
        var wire = entitlement
        if wire.status == .trialing {
            wire.status = .active
            wire.isTrial = true
        }
        return try convert(wire)
    }

    /// A JSON object written by the store (audit parameters and states).
    static func object(_ json: String) throws -> OpenAPIObjectContainer {
        try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(json.utf8))
    }
}
